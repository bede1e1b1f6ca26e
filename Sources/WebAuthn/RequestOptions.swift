/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn L3 §5.5 and §5.1.10), bare or wrapped.
public struct RequestOptions: Equatable, Sendable {
    public var challenge: [UInt8]
    public var timeout: Double?
    public var rpId: String?
    public var allowCredentials: [CredentialDescriptor]
    public var userVerification: UserVerification
    public var hints: [String]
    public var extensions: JSONValue?
    /// The extensions credemu answers, read from `extensions`.
    public var extensionInputs: ExtensionInputs
    public var mediation: String?

    public init(json text: String) throws(WebAuthnError) {
        try self.init(document: parseOptionsDocument(text, what: "request options"))
    }

    public init(document: JSONValue) throws(WebAuthnError) {
        let (inner, mediation) = try unwrapPublicKey(document, what: "request options")
        let o = try OptionsReader(inner, path: "publicKey")
        self.mediation = mediation
        self.challenge = try o.requiredBase64URL("challenge")
        self.timeout = try o.number("timeout")
        self.rpId = try o.string("rpId")
        self.allowCredentials = try o.descriptors("allowCredentials")
        self.userVerification = UserVerification(try o.string("userVerification"))
        self.hints = try o.strings("hints")
        self.extensions = try o.object("extensions")?.value
        self.extensionInputs = try ExtensionInputs(extensions, path: "publicKey.extensions")
    }
}
