import Vault
import WebAuthn

extension Reason {
    /// The RP enforced a credProtect policy and the authenticator has no credProtect (Chromium: not a candidate).
    public static let credProtectUnsupported = Reason(rawValue: "credProtectUnsupported")
}

/// The authenticator extensions Chromium reports (`getClientCapabilities()`): FIDO AppID (WebAuthn L3 §10.1.1,
/// §10.1.2) and CTAP 2.1's hmac-secret (§12.5), credProtect (§12.1), credBlob (§12.2) and minPinLength (§12.4), per
/// the pack's `extensions.*` knobs, narrowed for a key by its hardware (`AuthenticatorOptions.narrowing`). The checks
/// and outputs are Chromium's: third_party/blink/renderer/modules/credentialmanagement/credentials_container.cc (the
/// renderer's refusals, the outputs), content/browser/webauth/authenticator_common_impl.cc (the browser's refusals,
/// credProtect's defaults, which outputs are echoed) and webauth_request_security_checker.cc (the AppID).
extension Engine {
    static let invalidDomain = "This is an invalid domain."

    // MARK: The client's checks

    /// The renderer's refusals of a create's inputs: `appid` at creation, an `appidExclude` that is no URL, a
    /// protection policy outside the three (the options' conversion fails).
    func checkAuthenticatorCreationInputs(_ inputs: ExtensionInputs) throws(CeremonyError) {
        if knobs.appid != .notProcessed {
            if inputs.appid != nil {
                throw CeremonyError(.notSupported("The 'appid' extension is only valid when requesting an assertion for a pre-existing credential that was registered using the legacy FIDO U2F API."),
                                    reason: .invalidExtensionInput)
            }
            if let exclude = inputs.appidExclude, !exclude.isEmpty, !Engine.hasURLScheme(exclude) {
                throw CeremonyError(WebAuthnError(.syntaxError, "The `appidExclude` extension value is neither empty/null nor a valid URL."),
                                    reason: .invalidExtensionInput)
            }
        }
        if knobs.credProtect != .notProcessed, let name = inputs.credentialProtectionPolicy, CredentialProtection(name: name) == nil {
            throw CeremonyError(.notSupported("Required parameters missing in `options.publicKey`."), reason: .invalidExtensionInput)
        }
    }

    /// The browser's refusal of an inconsistent protection policy (`ContinueMakeCredentialAfterRpIdCheck`), and the
    /// level it asks the authenticator for: the RP's, else level 3 for a resident key required with UV preferred,
    /// level 2 for one that may be discoverable (`ProtectionPolicyToCredProtect`, the authenticator's default being 1).
    func requestedProtection(_ options: CreationOptions) throws(CeremonyError) -> (level: CredentialProtection, enforced: Bool)? {
        guard knobs.credProtect != .notProcessed else { return nil }
        let inputs = options.extensionInputs
        let policy = inputs.credentialProtectionPolicy.flatMap(CredentialProtection.init(name:))
        let residentKey = ["required", "preferred", "discouraged"].contains(options.residentKey ?? "")
            ? options.residentKey! : (options.requireResidentKey ? "required" : "discouraged")
        let mightBeResident = residentKey != "discouraged"
        let enforced = inputs.enforceCredentialProtectionPolicy
        if (enforced && (policy == nil || policy == .userVerificationOptional)) || (!mightBeResident && policy == .userVerificationOptional)
            || (policy == .userVerificationRequired && options.userVerification != .required) {
            throw CeremonyError(.notSupported("Requested protection policy is inconsistent or incongruent with other requested parameters."),
                                reason: .invalidExtensionInput)
        }
        if let policy { return (policy, enforced) }
        if residentKey == "required" && options.userVerification == .preferred { return (.userVerificationRequired, false) }
        return mightBeResident ? (.userVerificationOptionalWithCredentialIDList, false) : nil
    }

    /// An enforced policy on an authenticator without credProtect: not a candidate once touched
    /// (make_credential_request_handler.cc `IsCandidateAuthenticatorPostTouch`), so the request fails.
    func checkProtectionEnforceable(_ requested: (level: CredentialProtection, enforced: Bool)?) throws(CeremonyError) {
        guard let requested, requested.enforced, knobs.credProtect != .supported else { return }
        throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the RP enforces credProtect (\(requested.level.name)) and the authenticator does not support it; \(knobs.cite("extensions.credProtect", knobs.credProtect.rawValue))."),
                            reason: .credProtectUnsupported)
    }

    /// The AppID to use, checked as Chromium's `ValidateAppIdExtension`: "" is the caller's origin; otherwise an https
    /// URL of a caller on https, whose host is the caller's or shares its registrable domain; else SecurityError.
    func checkedAppID(_ appid: String, caller: Caller) throws(CeremonyError) -> String {
        guard case .web(let scheme, let callerHost, _) = caller.origin else {
            throw CeremonyError(.securityError(Engine.invalidDomain), reason: .invalidExtensionInput)
        }
        let value = appid.isEmpty ? caller.serializedOrigin : appid
        guard scheme == "https", let host = Engine.appIDParts(value),
              host == callerHost || RelyingPartyID.registrableDomain(host) == RelyingPartyID.registrableDomain(callerHost) else {
            throw CeremonyError(.securityError(Engine.invalidDomain), reason: .invalidExtensionInput)
        }
        return value
    }

    /// Whether `text` starts as an absolute URL does (a scheme, then ":"): the renderer's `KURL::IsValid` as far as it
    /// decides the appidExclude refusal; what the URL must be is the browser's check, `checkedAppID`.
    static func hasURLScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), let first = text.first, first.isASCII, first.isLetter else { return false }
        return text[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// The host of an https URL (lower-cased), or nil when `url` is not one with a valid domain.
    static func appIDParts(_ url: String) -> String? {
        guard url.lowercased().hasPrefix("https://") else { return nil }
        let rest = url.dropFirst("https://".count)
        let authority = rest.prefix { !"/?#".contains($0) }
        guard !authority.contains("@") else { return nil }
        var host = Substring(authority)
        if let colon = authority.lastIndex(of: ":") {
            guard authority[authority.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
            host = authority[..<colon]
        }
        let lowered = host.lowercased()
        return RelyingPartyID.isValidDomain(lowered) ? lowered : nil
    }

    /// The get's AppID when the client processes `appid` (nil otherwise, or without the input).
    func requestAppID(_ options: RequestOptions, caller: Caller) throws(CeremonyError) -> String? {
        guard knobs.appid != .notProcessed, let appid = options.extensionInputs.appid else { return nil }
        return try checkedAppID(appid, caller: caller)
    }

    /// The create's `appidExclude` when the client processes it.
    func creationAppIDExclude(_ options: CreationOptions, caller: Caller) throws(CeremonyError) -> String? {
        guard knobs.appid != .notProcessed, let exclude = options.extensionInputs.appidExclude else { return nil }
        return try checkedAppID(exclude, caller: caller)
    }

    // MARK: Creation

    /// What a new credential carries in its authenticator data's extensions (CTAP 2.1 §12) and keeps in the vault.
    struct CreationExtensions {
        var authenticatorData: CBOR?
        var credProtect: CredentialProtection?
        var credBlob: [UInt8]?
        var results: [(String, JSONValue)] = []
    }

    /// The authenticator's answer to a create's CTAP inputs, and the client outputs Chromium echoes.
    func creationExtensions(_ options: CreationOptions, rpID: String) throws(CeremonyError) -> CreationExtensions {
        let inputs = options.extensionInputs
        var out = CreationExtensions()
        var data: [(CBOR, CBOR)] = []
        if inputs.hmacCreateSecret, knobs.hmacSecret != .notProcessed {
            let created = knobs.hmacSecret == .supported
            // A CTAP key says so in its authenticator data (CTAP 2.1 §12.5); a provider Chrome reaches otherwise reports
            // it beside the response (`prf_enabled` in CreateMakeCredentialResponse), its authenticator data unchanged.
            if created && securityKey != nil { data.append((.text("hmac-secret"), .bool(true))) }
            out.results.append(("hmacCreateSecret", .bool(created)))
        }
        if knobs.credProtect == .supported, let requested = try requestedProtection(options) {
            out.credProtect = requested.level
            data.append((.text("credProtect"), .unsigned(UInt64(requested.level.rawValue))))
        }
        if let blob = inputs.credBlob, knobs.credBlob != .notProcessed {
            let stored = knobs.credBlob == .supported && blob.count <= Vault.credBlobLimit
            if knobs.credBlob == .supported { data.append((.text("credBlob"), .bool(stored))) }
            if stored { out.credBlob = blob }
            out.results.append(("credBlob", .bool(stored)))
        }
        if inputs.minPinLength, knobs.minPinLength == .supported, let key = securityKey,
           key.minPinLengthRPIDs.map({ $0.contains(rpID) }) ?? true {
            data.append((.text("minPinLength"), .unsigned(UInt64(key.minPinLength))))
        }
        out.authenticatorData = data.isEmpty ? nil : .map(data)
        return out
    }

    /// Keeps a new credential's credProtect level and credBlob (`credential_extensions`).
    func storeCreationExtensions(_ extensions: CreationExtensions, for credentialID: [UInt8]) throws(CeremonyError) {
        try store { () throws(VaultError) in
            try vault.setCredentialExtensions(credentialID, credProtect: extensions.credProtect?.rawValue, credBlob: extensions.credBlob)
        }
    }

    // MARK: Assertion

    /// Whether credProtect lets a get use the credential (CTAP 2.1 §12.1): level 3 only after user verification;
    /// level 2 without it only when the RP listed it.
    func protectionAllows(_ record: PasskeyRecord, listed: Bool, verified: Bool) throws(CeremonyError) -> Bool {
        guard knobs.credProtect == .supported, !verified else { return true }
        let level = try store { () throws(VaultError) in try vault.credentialExtensions(record.credentialID).credProtect }
        return level == 1 || (level == 2 && listed)
    }

    /// The assertion's authenticator-data extensions and client outputs: `appid` (true when the AppID's hash was
    /// used), `getCredBlob` (the stored blob, empty when none or when the authenticator has no credBlob).
    func assertionAuthenticatorExtensions(_ options: RequestOptions, record: PasskeyRecord, appID: String?)
        throws(CeremonyError) -> (CBOR?, [(String, JSONValue)]) {
        var results: [(String, JSONValue)] = []
        var data: [(CBOR, CBOR)] = []
        if options.extensionInputs.appid != nil, knobs.appid != .notProcessed {
            results.append(("appid", .bool(appID != nil && record.rpID == appID)))
        }
        // Chromium answers getCredBlob whatever the authenticator: an empty buffer when it returned no blob (measured
        // against its virtual authenticator without hasCredBlob, Tests/interop/test_extensions.py).
        if options.extensionInputs.getCredBlob, knobs.credBlob != .notProcessed {
            var blob: [UInt8] = []
            if knobs.credBlob == .supported {
                blob = try store { () throws(VaultError) in try vault.credentialExtensions(record.credentialID).credBlob } ?? []
                data.append((.text("credBlob"), .bytes(blob)))
            }
            results.append(("getCredBlob", .string(Base64URL.encode(blob))))
        }
        return (data.isEmpty ? nil : .map(data), results)
    }
}
