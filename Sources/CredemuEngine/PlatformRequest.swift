import WebAuthn

/// The request shapes native apps hand their platform, mapped onto the same engine as the web's options:
/// Android's `CreatePublicKeyCredentialRequest` / `GetPublicKeyCredentialOption` (`requestJson` plus
/// `isConditional`, androidx.credentials 1.6; providers.md §2.4) and Apple's
/// `ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest` / `...AssertionRequest` fields
/// (providers.md §3.1). A document of neither shape is the web's options JSON.
public enum PlatformRequest {
    /// Which shape a document has.
    public enum Shape: String, Sendable { case web, android, apple }

    public static func shape(of document: JSONValue) -> Shape {
        if document["requestJson"] != nil { return .android }
        if document["relyingPartyIdentifier"] != nil { return .apple }
        return .web
    }

    /// Creation options from any of the three shapes. Apple's native requests use the origin
    /// `https://` + RP ID, which `caller` returns for them (Apple DTS, providers.md §3.1).
    public static func creationOptions(_ document: JSONValue) throws(WebAuthnError) -> (CreationOptions, nativeOrigin: String?) {
        switch shape(of: document) {
        case .web:
            return (try CreationOptions(document: document), nil)
        case .android:
            var options = try CreationOptions(document: try androidJSON(document))
            if try OptionsReader(document, path: "request").bool("isConditional") == true { options.mediation = "conditional" }
            return (options, document["origin"]?.stringValue)
        case .apple:
            let r = try OptionsReader(document, path: "request")
            let rpID = try r.requiredString("relyingPartyIdentifier")
            let name = try r.requiredString("name")
            let members: [(String, JSONValue)] = [
                ("rp", .object([("id", .string(rpID)), ("name", .string(rpID))])),
                ("user", .object([("id", .string(try r.requiredString("userID"))), ("name", .string(name)),
                                  ("displayName", .string(try r.string("displayName") ?? name))])),
                ("challenge", .string(try r.requiredString("challenge"))),
                // The platform provider creates ES256 passkeys; the request carries no algorithm list.
                ("pubKeyCredParams", .array([.object([("type", "public-key"), ("alg", -7)])])),
                ("excludeCredentials", .array(try r.strings("excludedCredentials").map { .object([("type", "public-key"), ("id", .string($0))]) })),
                ("authenticatorSelection", .object([("residentKey", "required"),
                                                    ("userVerification", .string(try r.string("userVerificationPreference") ?? "preferred"))])),
                ("attestation", .string(try r.string("attestationPreference") ?? "none")),
            ]
            var options = try CreationOptions(document: .object(members))
            switch try r.string("requestStyle") ?? "standard" {
            case "conditional": options.mediation = "conditional"
            case "standard": break
            case let other: throw .typeError("requestStyle must be \"standard\" or \"conditional\", not \"\(other)\".")
            }
            return (options, "https://" + rpID)
        }
    }

    /// Request options from any of the three shapes.
    public static func requestOptions(_ document: JSONValue) throws(WebAuthnError) -> (RequestOptions, nativeOrigin: String?) {
        switch shape(of: document) {
        case .web:
            return (try RequestOptions(document: document), nil)
        case .android:
            return (try RequestOptions(document: try androidJSON(document)), document["origin"]?.stringValue)
        case .apple:
            let r = try OptionsReader(document, path: "request")
            let rpID = try r.requiredString("relyingPartyIdentifier")
            let members: [(String, JSONValue)] = [
                ("challenge", .string(try r.requiredString("challenge"))), ("rpId", .string(rpID)),
                ("allowCredentials", .array(try r.strings("allowedCredentials").map { .object([("type", "public-key"), ("id", .string($0))]) })),
                ("userVerification", .string(try r.string("userVerificationPreference") ?? "preferred")),
            ]
            return (try RequestOptions(document: .object(members)), "https://" + rpID)
        }
    }

    /// Android carries the WebAuthn JSON as a string; a malformed one is the platform's IllegalArgumentException,
    /// a TypeError here.
    private static func androidJSON(_ document: JSONValue) throws(WebAuthnError) -> JSONValue {
        guard let text = document["requestJson"]?.stringValue else { throw .typeError("requestJson must be a string of WebAuthn JSON.") }
        do {
            return try JSONValue.parse(text)
        } catch {
            throw .typeError("requestJson is not valid JSON: \(error.description).")
        }
    }
}
