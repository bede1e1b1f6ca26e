/// Where a member sits in the options ("publicKey.pubKeyCredParams[0]"): spelled out only for an error message.
public indirect enum OptionsPath: CustomStringConvertible, ExpressibleByStringLiteral, Sendable {
    case root(String)
    case member(OptionsPath, String)
    case element(OptionsPath, String, Int)

    public init(stringLiteral value: String) { self = .root(value) }

    public var description: String {
        switch self {
        case .root(let name): return name
        case .member(let parent, let key): return "\(parent).\(key)"
        case .element(let parent, let key, let index): return "\(parent).\(key)[\(index)]"
        }
    }
}

/// Typed reads from an options dictionary, raising the `TypeError` WebIDL conversion would raise. Also reads the
/// platforms' native request fields (`PlatformRequest`).
public struct OptionsReader {
    let value: JSONValue
    let path: OptionsPath

    public init(_ value: JSONValue, path: OptionsPath) throws(WebAuthnError) {
        guard case .object = value else { throw .typeError("\(path) must be an object, not \(value.typeName).") }
        self.value = value
        self.path = path
    }

    private func present(_ key: String) -> JSONValue? {
        guard let v = value[key], !v.isNull else { return nil }
        return v
    }

    func object(_ key: String) throws(WebAuthnError) -> OptionsReader? {
        guard let v = present(key) else { return nil }
        return try OptionsReader(v, path: .member(path, key))
    }

    func requiredObject(_ key: String) throws(WebAuthnError) -> OptionsReader {
        guard let o = try object(key) else { throw .typeError("\(path).\(key) is required.") }
        return o
    }

    public func string(_ key: String) throws(WebAuthnError) -> String? {
        guard let v = present(key) else { return nil }
        guard let s = v.stringValue else { throw .typeError("\(path).\(key) must be a string, not \(v.typeName).") }
        return s
    }

    public func requiredString(_ key: String) throws(WebAuthnError) -> String {
        guard let s = try string(key) else { throw .typeError("\(path).\(key) is required.") }
        return s
    }

    public func bool(_ key: String) throws(WebAuthnError) -> Bool? {
        guard let v = present(key) else { return nil }
        guard let b = v.boolValue else { throw .typeError("\(path).\(key) must be a boolean, not \(v.typeName).") }
        return b
    }

    func number(_ key: String) throws(WebAuthnError) -> Double? {
        guard let v = present(key) else { return nil }
        guard let n = v.numberValue else { throw .typeError("\(path).\(key) must be a number, not \(v.typeName).") }
        return n
    }

    func base64URL(_ key: String, required: Bool) throws(WebAuthnError) -> [UInt8]? {
        guard let s = try string(key) else {
            if required { throw .typeError("\(path).\(key) is required.") }
            return nil
        }
        guard let bytes = Base64URL.decode(s) else { throw .typeError("Invalid base64url string for \(path).\(key).") }
        return bytes
    }

    func array(_ key: String) throws(WebAuthnError) -> [JSONValue]? {
        guard let v = present(key) else { return nil }
        guard let a = v.arrayValue else { throw .typeError("\(path).\(key) must be an array, not \(v.typeName).") }
        return a
    }

    public func strings(_ key: String) throws(WebAuthnError) -> [String] {
        guard let items = try array(key) else { return [] }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard let s = item.stringValue else { throw .typeError("\(path).\(key)[\(i)] must be a string, not \(item.typeName).") }
            out.append(s)
        }
        return out
    }

    func descriptors(_ key: String) throws(WebAuthnError) -> [CredentialDescriptor] {
        guard let items = try array(key) else { return [] }
        var out: [CredentialDescriptor] = []
        for (i, item) in items.enumerated() {
            let r = try OptionsReader(item, path: .element(path, key, i))
            out.append(CredentialDescriptor(
                type: try r.requiredString("type"),
                id: try r.base64URL("id", required: true)!,
                transports: try r.strings("transports")))
        }
        return out
    }
}

/// A `PublicKeyCredentialDescriptorJSON`: a credential the RP names in an exclude or allow list.
public struct CredentialDescriptor: Equatable, Sendable {
    public var type: String
    public var id: [UInt8]
    public var transports: [String]

    public init(type: String = "public-key", id: [UInt8], transports: [String] = []) {
        self.type = type
        self.id = id
        self.transports = transports
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
