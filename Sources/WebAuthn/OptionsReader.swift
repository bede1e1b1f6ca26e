extension OptionsReader {
    /// `PublicKeyCredentialDescriptorJSON`s: an exclude or allow list.
    func descriptors(_ key: String) throws(WebAuthnError) -> [CredentialDescriptor] {
        var out: [CredentialDescriptor] = []
        for r in try objects(key) {
            out.append(CredentialDescriptor(type: try r.requiredString("type"), id: try r.requiredBase64URL("id"),
                                            transports: try r.strings("transports")))
        }
        return out
    }
}

/// Parses the text of an options document, mapping malformed JSON to a `TypeError`.
func parseOptionsDocument(_ text: String, what: String) throws(WebAuthnError) -> JSONValue {
    do {
        return try JSONValue.parse(text)
    } catch {
        throw .typeError("The \(what) are not valid JSON: \(error.description).")
    }
}

/// Splits `{"publicKey": {...}, "mediation": ...}` from a bare options dictionary.
func unwrapPublicKey(_ document: JSONValue, what: String) throws(WebAuthnError) -> (JSONValue, String?) {
    guard case .object = document else { throw .typeError("The \(what) must be a JSON object, not \(document.typeName).") }
    if let inner = document["publicKey"] {
        let outer = try OptionsReader(document, path: "options")
        return (inner, try outer.string("mediation"))
    }
    return (document, nil)
}
