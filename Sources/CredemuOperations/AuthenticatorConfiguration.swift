import CredemuEngine
import WebAuthn

/// WebAuthn L3 §11.3's Authenticator Configuration read into a key's hardware (`AuthenticatorOptions`): §11.1's
/// members, each of its type and valid values, `protocol` and `transport` required, the others defaulting as the table
/// says (which are not `AuthenticatorOptions`' defaults: no resident keys, no user verification, no extensions). Read
/// as chromedriver reads them (chrome/test/chromedriver/webauthn_commands.cc `ExecuteAddVirtualAuthenticator`), so a
/// suite written for it meets no refusal it does not make: a member outside its table is dropped, not refused (§11.3
/// would refuse it), and the extension capabilities below are given their meaning.
enum AuthenticatorConfiguration {
    /// The §11.1 keys chromedriver maps (`isUserConsenting` onto DevTools' `automaticPresenceSimulation`).
    static let keys: Set<String> = ["protocol", "transport", "hasResidentKey", "hasUserVerification", "isUserConsenting",
                                    "isUserVerified", "extensions", "defaultBackupEligibility", "defaultBackupState"]

    /// Extension capabilities (§11.1's "Authenticator Extension Capabilities", DevTools' `WebAuthn.VirtualAuthenticatorOptions`
    /// `has*` members) and the extension identifiers a `true` adds to the key's list. `hasHMACSecret` (web-platform-tests'
    /// webauthn/extension-prf) is CTAP's hmac-secret, which Chrome exposes as prf; `hasUvm` names an extension Chrome
    /// never processes, so it adds none. chromedriver itself drops all of these (measured: a key made with
    /// `hasHMACSecret: true` answers `prf: {enabled: false}`); credemu gives them the meaning their names have.
    static let capabilities: [String: [String]] = [
        "hasHMACSecret": ["hmac-secret"], "hasPrf": ["prf"], "hasLargeBlob": ["largeBlob"], "hasCredBlob": ["credBlob"],
        "hasMinPinLength": ["minPinLength"], "hasUvm": [],
    ]

    /// The authenticator extensions chromedriver maps onto its virtual authenticator (`largeBlob`, `credBlob`,
    /// `minPinLength`, `prf`); any other identifier is its UnsupportedOperation.
    static let chromedriverExtensions: Set<String> = ["largeBlob", "credBlob", "minPinLength", "prf"]

    /// Those Chromium's DevTools handler accepts only on a CTAP 2.1 authenticator
    /// (content/browser/devtools/protocol/webauthn_handler.cc `kRequiresCtap2_1`; `largeBlob` also needs resident keys,
    /// `kLargeBlobRequiresResidentKey`); prf and hmac-secret do not (measured: a `ctap2` or U2F key with `prf` is made).
    static let ctap21Extensions: Set<String> = ["largeBlob", "credBlob", "minPinLength"]

    /// The extension identifiers a credemu key processes: those of `chromedriverExtensions` the engine answers.
    static var supportedExtensions: Set<String> { chromedriverExtensions.intersection(Engine.answeredExtensions) }

    /// The options §11.3 steps 1 to 6 make of `parameters`; every refusal is `InvalidArgument`, an extension credemu
    /// does not process `UnsupportedOperation` (step 6).
    static func read(_ parameters: JSONValue) throws(OperationError) -> AuthenticatorOptions {
        var options = AuthenticatorOptions()
        var capable: [String] = []
        try WebDriverArgument.reading { () throws(WebDriverArgument) in
            let fields = try JSONFields<WebDriverArgument>(parameters, path: "parameters")
            for key in ["protocol", "transport"] where fields.value[key] == nil {
                throw fields.invalid(key, "is required (WebAuthn L3 §11.1 gives it no default)")
            }
            let text = try fields.requiredString("protocol")
            guard let p = AuthenticatorOptions.CTAPProtocol(rawValue: text) else {
                throw fields.invalid("protocol", "must be one of \(AuthenticatorOptions.CTAPProtocol.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(text)\"")
            }
            options.protocol = p
            options.transport = try fields.requiredString("transport")
            guard AuthenticatorOptions.transports.contains(options.transport) else {
                throw fields.invalid("transport", "must be an AuthenticatorTransport value (\(AuthenticatorOptions.transports.joined(separator: ", "))), not \"\(options.transport)\"")
            }
            options.hasResidentKey = try strictBool(fields, "hasResidentKey") ?? false
            options.hasUserVerification = try strictBool(fields, "hasUserVerification") ?? false
            options.isUserConsenting = try strictBool(fields, "isUserConsenting") ?? true
            options.isUserVerified = try strictBool(fields, "isUserVerified") ?? false
            options.defaultBackupEligibility = try strictBool(fields, "defaultBackupEligibility") ?? false
            options.defaultBackupState = try strictBool(fields, "defaultBackupState") ?? false
            options.extensions = fields.value["extensions"] == nil ? [] : try strictStrings(fields, "extensions")
            for (name, identifiers) in capabilities.sorted(by: { $0.key < $1.key }) where try strictBool(fields, name) == true {
                capable += identifiers
            }
        }
        let extensions = options.extensions ?? []
        guard extensions.count <= 32, Set(extensions).count == extensions.count, extensions.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
            throw .invalidArgument("parameters.extensions must list at most 32 extension identifiers (1 to 64 bytes), each once.")
        }
        if let unsupported = extensions.first(where: { !supportedExtensions.contains($0) }) {
            throw .unsupportedOperation("The extension \"\(unsupported)\" is not one credemu's virtual authenticators process; they process \(supportedExtensions.sorted().joined(separator: ", ")).")
        }
        let all = extensions + capable.filter { !extensions.contains($0) }
        if options.protocol != .ctap2_1, let needs21 = all.first(where: { ctap21Extensions.contains($0) }) {
            throw .invalidArgument("The extension \"\(needs21)\" needs a CTAP 2.1 authenticator: set parameters.protocol to \"ctap2_1\".")
        }
        if all.contains("largeBlob"), !options.hasResidentKey {
            throw .invalidArgument("The largeBlob extension needs resident keys: set parameters.hasResidentKey to true.")
        }
        options.extensions = all
        return options
    }

    /// A boolean member; null is not one of §11.1's valid values (JSONFields would read it as absent).
    private static func strictBool(_ fields: JSONFields<WebDriverArgument>, _ key: String) throws(WebDriverArgument) -> Bool? {
        if fields.value[key]?.isNull == true { throw fields.invalid(key, "must be true or false, not null") }
        return try fields.bool(key)
    }

    private static func strictStrings(_ fields: JSONFields<WebDriverArgument>, _ key: String) throws(WebDriverArgument) -> [String] {
        if fields.value[key]?.isNull == true { throw fields.invalid(key, "must be an array of extension identifiers, not null") }
        return try fields.strings(key)
    }
}
