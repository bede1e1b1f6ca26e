/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn L3 §5.4 and §5.1.9), bare or wrapped as
/// `{"publicKey": ..., "mediation": ...}`, exactly as RP libraries such as py_webauthn emit it.
public struct CreationOptions: Equatable, Sendable {
    public struct RelyingParty: Equatable, Sendable {
        public var id: String?
        public var name: String
    }

    public struct User: Equatable, Sendable {
        public var id: [UInt8]
        public var name: String
        public var displayName: String
    }

    public struct Parameter: Equatable, Sendable {
        public var type: String
        public var alg: Int
    }

    public var rp: RelyingParty
    public var user: User
    public var challenge: [UInt8]
    public var pubKeyCredParams: [Parameter]
    public var timeout: Double?
    public var excludeCredentials: [CredentialDescriptor]
    public var authenticatorAttachment: String?
    public var residentKey: String?
    public var requireResidentKey: Bool
    public var userVerification: UserVerification
    public var attestation: String
    public var hints: [String]
    public var extensions: JSONValue?
    /// The extensions credemu answers, read from `extensions`.
    public var extensionInputs: ExtensionInputs
    /// From the wrapper: "conditional" for an automatic upgrade, nil for a modal create.
    public var mediation: String?

    /// Reads options, raising `TypeError` for anything a browser's WebIDL conversion would refuse.
    public init(json text: String) throws(WebAuthnError) {
        try self.init(document: parseOptionsDocument(text, what: "creation options"))
    }

    public init(document: JSONValue) throws(WebAuthnError) {
        let (inner, mediation) = try unwrapPublicKey(document, what: "creation options")
        let o = try OptionsReader(inner, path: "publicKey")
        self.mediation = mediation

        let rp = try o.requiredObject("rp")
        self.rp = RelyingParty(id: try rp.string("id"), name: try rp.requiredString("name"))

        let user = try o.requiredObject("user")
        let userID = try user.requiredBase64URL("id")
        // Over 64 bytes is the engine's to refuse, in its place among the client's checks (`Engine.checkUserHandle`).
        guard !userID.isEmpty else {
            throw .typeError("publicKey.user.id must be between 1 and 64 bytes long; it is 0.")
        }
        self.user = User(id: userID, name: try user.requiredString("name"), displayName: try user.requiredString("displayName"))

        self.challenge = try o.requiredBase64URL("challenge")

        _ = try o.required("pubKeyCredParams", o.array)
        var parsed: [Parameter] = []
        for p in try o.objects("pubKeyCredParams") {
            // A COSEAlgorithmIdentifier is a WebIDL long.
            let alg = try p.required("alg") { (key) throws(WebAuthnError) in try p.integer(key, in: -2_147_483_647...2_147_483_647) }
            parsed.append(Parameter(type: try p.requiredString("type"), alg: Int(alg)))
        }
        self.pubKeyCredParams = parsed

        self.timeout = try o.number("timeout")
        self.excludeCredentials = try o.descriptors("excludeCredentials")
        let selection = try o.object("authenticatorSelection")
        self.authenticatorAttachment = try selection?.string("authenticatorAttachment")
        self.residentKey = try selection?.string("residentKey")
        self.requireResidentKey = try selection?.bool("requireResidentKey") ?? false
        self.userVerification = UserVerification(try selection?.string("userVerification"))
        // Unknown enumeration values fall back to the default (§2.1.1: DOMString, not IDL enums).
        let attestation = try o.string("attestation") ?? "none"
        self.attestation = ["none", "indirect", "direct", "enterprise"].contains(attestation) ? attestation : "none"
        self.hints = try o.strings("hints")
        self.extensions = try o.object("extensions")?.value
        self.extensionInputs = try ExtensionInputs(extensions, path: "publicKey.extensions")
    }

    /// Whether the RP asked for the credProps extension (§10.1.3).
    public var wantsCredProps: Bool { extensionInputs.credProps }
}

/// `UserVerificationRequirement` (§5.8.6); unknown values mean the default, "preferred".
public enum UserVerification: String, Equatable, Sendable {
    case required, preferred, discouraged

    public init(_ raw: String?) {
        self = raw.flatMap(UserVerification.init(rawValue:)) ?? .preferred
    }
}
