/// `RegistrationResponseJSON` (WebAuthn L3 §5.1, `toJSON()`), what `create()` hands the RP.
public struct RegistrationResponse: Equatable, Sendable {
    public var credentialID: [UInt8]
    public var clientDataJSON: [UInt8]
    public var attestationObject: [UInt8]
    public var authenticatorData: [UInt8]
    public var transports: [String]
    /// DER SubjectPublicKeyInfo (`getPublicKey()`); nil where the provider's response gives null (the JSON form then
    /// has no `publicKey`, which L3 §5.2.1.1 allows).
    public var publicKey: [UInt8]?
    public var publicKeyAlgorithm: COSEAlgorithm
    public var authenticatorAttachment: String
    public var clientExtensionResults: [(String, JSONValue)]

    public init(credentialID: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8], authenticatorData: [UInt8],
                transports: [String], publicKey: [UInt8]?, publicKeyAlgorithm: COSEAlgorithm,
                authenticatorAttachment: String = "platform", clientExtensionResults: [(String, JSONValue)] = []) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.authenticatorData = authenticatorData
        self.transports = transports
        self.publicKey = publicKey
        self.publicKeyAlgorithm = publicKeyAlgorithm
        self.authenticatorAttachment = authenticatorAttachment
        self.clientExtensionResults = clientExtensionResults
    }

    public static func == (a: RegistrationResponse, b: RegistrationResponse) -> Bool { a.json == b.json }

    public var json: JSONValue {
        let id = Base64URL.encode(credentialID)
        var response: [(String, JSONValue)] = [
            ("clientDataJSON", .string(Base64URL.encode(clientDataJSON))),
            ("attestationObject", .string(Base64URL.encode(attestationObject))),
            ("authenticatorData", .string(Base64URL.encode(authenticatorData))),
            ("transports", .array(transports.map(JSONValue.string))),
        ]
        if let publicKey { response.append(("publicKey", .string(Base64URL.encode(publicKey)))) }
        response.append(("publicKeyAlgorithm", .number(Double(publicKeyAlgorithm.rawValue))))
        return .object([
            ("id", .string(id)),
            ("rawId", .string(id)),
            ("type", "public-key"),
            ("authenticatorAttachment", .string(authenticatorAttachment)),
            ("response", .object(response)),
            ("clientExtensionResults", .object(clientExtensionResults)),
        ])
    }
}

/// `AuthenticationResponseJSON` (WebAuthn L3 §5.1, `toJSON()`), what `get()` hands the RP.
public struct AuthenticationResponse: Equatable, Sendable {
    public var credentialID: [UInt8]
    public var clientDataJSON: [UInt8]
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    public var userHandle: [UInt8]?
    public var authenticatorAttachment: String
    public var clientExtensionResults: [(String, JSONValue)]

    public init(credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8],
                userHandle: [UInt8]?, authenticatorAttachment: String = "platform",
                clientExtensionResults: [(String, JSONValue)] = []) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
        self.authenticatorAttachment = authenticatorAttachment
        self.clientExtensionResults = clientExtensionResults
    }

    public static func == (a: AuthenticationResponse, b: AuthenticationResponse) -> Bool { a.json == b.json }

    public var json: JSONValue {
        let id = Base64URL.encode(credentialID)
        var response: [(String, JSONValue)] = [
            ("clientDataJSON", .string(Base64URL.encode(clientDataJSON))),
            ("authenticatorData", .string(Base64URL.encode(authenticatorData))),
            ("signature", .string(Base64URL.encode(signature))),
        ]
        if let userHandle { response.append(("userHandle", .string(Base64URL.encode(userHandle)))) }
        return .object([
            ("id", .string(id)),
            ("rawId", .string(id)),
            ("type", "public-key"),
            ("authenticatorAttachment", .string(authenticatorAttachment)),
            ("response", .object(response)),
            ("clientExtensionResults", .object(clientExtensionResults)),
        ])
    }
}
