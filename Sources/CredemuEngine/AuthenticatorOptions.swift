import WebAuthn

/// A roaming authenticator's hardware: what WebAuthn L3 §11.1's `Authenticator Configuration` (the WebDriver
/// virtual authenticator's options) sets, plus the resident-key capacity a real key has. A profile whose pack's
/// `authenticator.model` is `securityKey` is one such key; its provider knobs (AAGUID, attestation, counter, BE)
/// come from the pack, this from the profile's `authenticator` setting.
public struct AuthenticatorOptions: Equatable, Sendable {
    /// §11.1 `protocol`: "ctap1/u2f", "ctap2" or "ctap2_1".
    public enum CTAPProtocol: String, Sendable, CaseIterable {
        case u2f = "ctap1/u2f"
        case ctap2
        case ctap2_1
    }

    public var `protocol`: CTAPProtocol = .ctap2_1
    /// §11.1 `transport`: an `AuthenticatorTransport` value.
    public var transport: String = "usb"
    public var hasResidentKey = true
    /// The key can verify the user (a PIN is set, or it has a fingerprint reader).
    public var hasUserVerification = true
    /// The user touches the key when asked; false: nobody does, and the ceremony settles at its timeout.
    public var isUserConsenting = true
    /// The user passes verification (the right PIN); false: verification fails.
    public var isUserVerified = true
    /// §11.1 `extensions`: the extension identifiers the key processes; nil: every one it can.
    public var extensions: [String]?
    /// §11.1 `defaultBackupEligibility` / `defaultBackupState` (WebDriver's, L3 §11.1): what a new credential gets.
    public var defaultBackupEligibility = false
    public var defaultBackupState = false
    /// How many discoverable credentials the key stores (YubiKey 5, firmware 5.2 to 5.6: 25; 5.7: 100).
    public var residentKeyCapacity = 25
    /// The key's minimum PIN length (CTAP 2.1 §6.5.1 `minPINLength`, 4 unless raised by authenticatorConfig).
    public var minPinLength = 4
    /// The RP IDs the key reports its minimum PIN length to (CTAP 2.1 §12.4 `minPinLengthRPIDs`); nil: every RP ID,
    /// as Chromium's virtual authenticator with `hasMinPinLength` does (device/fido/virtual_ctap2_device.cc).
    public var minPinLengthRPIDs: [String]?
    /// The key is WebDriver's (§11.3 Add Virtual Authenticator): Chromium's virtual-authenticator testing API, whose
    /// environment turns the browser's UI off and takes a request's timeout as given
    /// (content/browser/webauth/authenticator_common_impl.cc), so a get that finds no credential fails at once where
    /// Chrome's sheet would wait for the user (`modalGet.noCredential`; measured: test_webdriver_migration's chromium
    /// column).
    public var testingAPI = false

    public init() {}

    /// The transports §5.8.4 defines; a key reports the one it is reached over.
    public static let transports = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]
    /// The option names §11.1 defines, with credemu's `residentKeyCapacity`, `minPinLength`, `minPinLengthRPIDs` and
    /// `testingAPI`.
    public static let names = ["protocol", "transport", "hasResidentKey", "hasUserVerification", "isUserConsenting", "isUserVerified",
                               "extensions", "defaultBackupEligibility", "defaultBackupState", "residentKeyCapacity",
                               "minPinLength", "minPinLengthRPIDs", "testingAPI"]
    /// The most discoverable credentials a key may be given room for.
    public static let capacityLimit: Int64 = 10_000

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("protocol", .string(`protocol`.rawValue)), ("transport", .string(transport)), ("hasResidentKey", .bool(hasResidentKey)),
            ("hasUserVerification", .bool(hasUserVerification)), ("isUserConsenting", .bool(isUserConsenting)),
            ("isUserVerified", .bool(isUserVerified)),
        ]
        if let extensions { members.append(("extensions", .array(extensions.map(JSONValue.string)))) }
        members += [("defaultBackupEligibility", .bool(defaultBackupEligibility)), ("defaultBackupState", .bool(defaultBackupState)),
                    ("residentKeyCapacity", .number(Double(residentKeyCapacity))), ("minPinLength", .number(Double(minPinLength)))]
        if let minPinLengthRPIDs { members.append(("minPinLengthRPIDs", .array(minPinLengthRPIDs.map(JSONValue.string)))) }
        if testingAPI { members.append(("testingAPI", .bool(true))) }
        return .object(members)
    }

    /// Applies the members of an options object over these; a member outside §11.1's (and the capacity) or a
    /// wrong value is named.
    public mutating func apply(_ value: JSONValue, at path: OptionsPath) throws(InvalidConfiguration.Field) {
        guard value.objectValue != nil else { throw .invalidField("\(path) must be an object of authenticator options.") }
        let fields = try ConfigurationFields(value, path: path)
        try fields.onlyKeys(Set(AuthenticatorOptions.names))
        if let p = try fields.string("protocol") {
            guard let parsed = CTAPProtocol(rawValue: p) else {
                throw fields.invalid("protocol", "must be one of \(CTAPProtocol.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(p)\"")
            }
            `protocol` = parsed
        }
        if let t = try fields.string("transport") {
            guard AuthenticatorOptions.transports.contains(t) else {
                throw fields.invalid("transport", "must be one of \(AuthenticatorOptions.transports.joined(separator: ", ")), not \"\(t)\"")
            }
            transport = t
        }
        if let b = try fields.bool("hasResidentKey") { hasResidentKey = b }
        if let b = try fields.bool("hasUserVerification") { hasUserVerification = b }
        if let b = try fields.bool("isUserConsenting") { isUserConsenting = b }
        if let b = try fields.bool("isUserVerified") { isUserVerified = b }
        if fields.present("extensions") != nil {
            let list = try fields.strings("extensions")
            guard list.count <= 32, list.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
                throw fields.invalid("extensions", "must list at most 32 extension identifiers")
            }
            extensions = list
        }
        if let b = try fields.bool("defaultBackupEligibility") { defaultBackupEligibility = b }
        if let b = try fields.bool("defaultBackupState") { defaultBackupState = b }
        if let n = try fields.integer("residentKeyCapacity", in: 0...AuthenticatorOptions.capacityLimit) { residentKeyCapacity = Int(n) }
        // CTAP 2.1 §6.5.1: at least 4 Unicode code points, at most 63 bytes.
        if let n = try fields.integer("minPinLength", in: 4...63) { minPinLength = Int(n) }
        if fields.present("minPinLengthRPIDs") != nil {
            let list = try fields.strings("minPinLengthRPIDs")
            guard list.count <= 32, list.allSatisfy(RelyingPartyID.isValidDomain) else {
                throw fields.invalid("minPinLengthRPIDs", "must list at most 32 RP IDs (domains)")
            }
            minPinLengthRPIDs = list
        }
        if let b = try fields.bool("testingAPI") { testingAPI = b }
    }

    /// Whether the key processes the extension `identifier` (as `getClientCapabilities()` names it, without `extension:`).
    public func processes(_ identifier: String) -> Bool { extensions.map { $0.contains(identifier) } ?? true }

    /// A U2F-only key: no discoverable credentials, no user verification, ES256 only, `fido-u2f` attestation.
    public var isU2F: Bool { `protocol` == .u2f }
    /// Discoverable credentials are possible (CTAP 2 with resident keys).
    public var supportsResidentKeys: Bool { !isU2F && hasResidentKey }
    /// User verification is possible (CTAP 2 with a PIN or built-in verification).
    public var supportsUserVerification: Bool { !isU2F && hasUserVerification }
}
