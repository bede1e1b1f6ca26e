import WebAuthn

/// One of the three WebAuthn signals (WebAuthn L3 §5.1.10), as the RP sends it: the dictionaries verbatim.
public enum SignalRequest: Equatable, Sendable {
    case unknownCredential(rpId: String, credentialId: String)
    case allAcceptedCredentials(rpId: String, userId: String, allAcceptedCredentialIds: [String])
    case currentUserDetails(rpId: String, userId: String, name: String, displayName: String)

    public var kind: String {
        switch self {
        case .unknownCredential: return "unknown"
        case .allAcceptedCredentials: return "accepted"
        case .currentUserDetails: return "details"
        }
    }

    /// The `PublicKeyCredential` method a page calls.
    public var methodName: String {
        switch self {
        case .unknownCredential: return "signalUnknownCredential"
        case .allAcceptedCredentials: return "signalAllAcceptedCredentials"
        case .currentUserDetails: return "signalCurrentUserDetails"
        }
    }

    public var rpId: String {
        switch self {
        case .unknownCredential(let rp, _), .allAcceptedCredentials(let rp, _, _), .currentUserDetails(let rp, _, _, _): return rp
        }
    }

    /// Reads `UnknownCredentialOptions`, `AllAcceptedCredentialsOptions` or `CurrentUserDetailsOptions`
    /// (`kind`: unknown, accepted, details); a missing or mistyped member is a `TypeError`.
    public init(kind: String, json text: String) throws(WebAuthnError) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw .typeError("The signal options are not valid JSON: \(error.description).")
        }
        try self.init(kind: kind, document: document)
    }

    public init(kind: String, document: JSONValue) throws(WebAuthnError) {
        let dictionary = ["unknown": "UnknownCredentialOptions", "accepted": "AllAcceptedCredentialsOptions",
                          "details": "CurrentUserDetailsOptions"][kind]
        guard let dictionary else { throw .typeError("'\(kind)' is not a signal; the signals are unknown, accepted and details.") }
        let o = try OptionsReader(document, path: .root(dictionary))
        switch kind {
        case "unknown":
            self = .unknownCredential(rpId: try o.requiredString("rpId"), credentialId: try o.requiredString("credentialId"))
        case "accepted":
            _ = try o.required("allAcceptedCredentialIds", o.array)
            let ids = try o.strings("allAcceptedCredentialIds")
            self = .allAcceptedCredentials(rpId: try o.requiredString("rpId"), userId: try o.requiredString("userId"), allAcceptedCredentialIds: ids)
        default:
            self = .currentUserDetails(rpId: try o.requiredString("rpId"), userId: try o.requiredString("userId"),
                                       name: try o.requiredString("name"), displayName: try o.requiredString("displayName"))
        }
    }
}
