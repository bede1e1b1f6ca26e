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
        guard document.objectValue != nil else { throw .typeError("The signal options must be a JSON object.") }
        func string(_ key: String) throws(WebAuthnError) -> String {
            guard let v = document[key] else { throw .typeError("The signal options need '\(key)'.") }
            guard let s = v.stringValue else { throw .typeError("'\(key)' must be a string, not \(v.typeName).") }
            return s
        }
        switch kind {
        case "unknown":
            self = .unknownCredential(rpId: try string("rpId"), credentialId: try string("credentialId"))
        case "accepted":
            guard let list = document["allAcceptedCredentialIds"]?.arrayValue else {
                throw .typeError("The signal options need 'allAcceptedCredentialIds' as an array.")
            }
            var ids: [String] = []
            for item in list {
                guard let s = item.stringValue else { throw .typeError("'allAcceptedCredentialIds' must hold strings.") }
                ids.append(s)
            }
            self = .allAcceptedCredentials(rpId: try string("rpId"), userId: try string("userId"), allAcceptedCredentialIds: ids)
        case "details":
            self = .currentUserDetails(rpId: try string("rpId"), userId: try string("userId"), name: try string("name"),
                                       displayName: try string("displayName"))
        default:
            throw .typeError("'\(kind)' is not a signal; the signals are unknown, accepted and details.")
        }
    }
}
