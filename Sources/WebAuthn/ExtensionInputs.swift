/// The client extension inputs credemu answers, in their JSON forms (`AuthenticationExtensionsClientInputsJSON`,
/// WebAuthn L3 §5.1.8, §5.1.9): `appid` and `appidExclude` (§10.1.1, §10.1.2), `credProps` (§10.1.3), `prf`
/// (§10.1.4), `largeBlob` (§10.1.5), and CTAP 2.1's `hmacCreateSecret` (§12.5), `credentialProtectionPolicy` with
/// `enforceCredentialProtectionPolicy` (§12.1), `credBlob` and `getCredBlob` (§12.2), `minPinLength` (§12.4), as
/// Blink's IDL has them (authentication_extensions_client_inputs.idl). Other members are left alone, as a client that
/// does not implement an extension ignores it; one of these that is malformed is a `TypeError` naming its path.
public struct ExtensionInputs: Equatable, Sendable {
    /// `AuthenticationExtensionsPRFValues`: the RP's inputs, before the client hashes them.
    public struct PRFValues: Equatable, Sendable {
        public var first: [UInt8]
        public var second: [UInt8]?

        public init(first: [UInt8], second: [UInt8]? = nil) {
            self.first = first
            self.second = second
        }
    }

    /// `AuthenticationExtensionsPRFInputs`.
    public struct PRF: Equatable, Sendable {
        public var eval: PRFValues?
        /// Keyed by the base64url text the RP gave (checked against the allow list at assertion).
        public var evalByCredential: [(String, PRFValues)]?

        public static func == (a: PRF, b: PRF) -> Bool {
            a.eval == b.eval && a.evalByCredential?.map(\.0) == b.evalByCredential?.map(\.0)
                && a.evalByCredential?.map(\.1) == b.evalByCredential?.map(\.1)
        }
    }

    /// `AuthenticationExtensionsLargeBlobInputs`.
    public struct LargeBlob: Equatable, Sendable {
        /// As given; only "required" counts at creation, another value is "preferred" (Chromium ignores unknown ones).
        public var support: String?
        public var read: Bool?
        public var write: [UInt8]?
    }

    public var credProps: Bool
    public var prf: PRF?
    public var largeBlob: LargeBlob?
    /// `appid` (get) and `appidExclude` (create): a FIDO AppID URL as given ("" means the caller's origin).
    public var appid: String?
    public var appidExclude: String?
    public var hmacCreateSecret = false
    /// As given: Chromium's conversion fails on a name outside the three (`CredentialProtection(name:)`).
    public var credentialProtectionPolicy: String?
    public var enforceCredentialProtectionPolicy = false
    public var minPinLength = false
    public var credBlob: [UInt8]?
    public var getCredBlob = false

    public init(credProps: Bool = false, prf: PRF? = nil, largeBlob: LargeBlob? = nil) {
        self.credProps = credProps
        self.prf = prf
        self.largeBlob = largeBlob
    }

    /// Reads the options' `extensions` member (nil when absent).
    public init(_ extensions: JSONValue?, path: OptionsPath) throws(WebAuthnError) {
        self.init()
        guard let extensions, !extensions.isNull else { return }
        let e = try OptionsReader(extensions, path: path)
        credProps = try e.bool("credProps") ?? false
        if let p = try e.object("prf") {
            var prf = PRF()
            if let eval = try p.object("eval") { prf.eval = try ExtensionInputs.values(eval) }
            if let byCredential = try p.object("evalByCredential") {
                var entries: [(String, PRFValues)] = []
                for (key, _) in byCredential.members {
                    entries.append((key, try ExtensionInputs.values(try byCredential.requiredObject(key))))
                }
                prf.evalByCredential = entries
            }
            self.prf = prf
        }
        if let b = try e.object("largeBlob") {
            largeBlob = LargeBlob(support: try b.string("support"), read: try b.bool("read"), write: try b.base64URL("write"))
        }
        appid = try e.string("appid")
        appidExclude = try e.string("appidExclude")
        hmacCreateSecret = try e.bool("hmacCreateSecret") ?? false
        credentialProtectionPolicy = try e.string("credentialProtectionPolicy")
        enforceCredentialProtectionPolicy = try e.bool("enforceCredentialProtectionPolicy") ?? false
        minPinLength = try e.bool("minPinLength") ?? false
        credBlob = try e.base64URL("credBlob")
        getCredBlob = try e.bool("getCredBlob") ?? false
    }

    private static func values(_ v: OptionsReader) throws(WebAuthnError) -> PRFValues {
        PRFValues(first: try v.requiredBase64URL("first"), second: try v.base64URL("second"))
    }
}
