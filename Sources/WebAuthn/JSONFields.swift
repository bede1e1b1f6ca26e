/// The error a `JSONFields` reader raises: each reader's own (a `TypeError` for WebAuthn options, an
/// `invalidInput` `VaultError` for fixtures, a configuration error for profiles, packs and scenarios).
public protocol JSONFieldFailure: Error {
    /// The failure for a member that is missing, of the wrong type, out of range or not allowed; `message` names
    /// the member's path.
    static func invalidField(_ message: String) -> Self
}

/// Typed reads from a JSON object; every failure is a `Failure` whose message names the member's path
/// ("publicKey.pubKeyCredParams[0].alg"). A member that is null counts as absent.
public struct JSONFields<Failure: JSONFieldFailure> {
    /// The object read.
    public let value: JSONValue
    public let path: OptionsPath

    public init(_ value: JSONValue, path: OptionsPath) throws(Failure) {
        guard case .object = value else { throw .invalidField("\(path) must be an object, not \(value.typeName).") }
        self.value = value
        self.path = path
    }

    /// The object's members, in document order.
    public var members: [(String, JSONValue)] { value.objectValue ?? [] }

    /// The failure for a member: "<path>.<key> <why>."
    public func invalid(_ key: String, _ why: String) -> Failure { .invalidField("\(path).\(key) \(why).") }

    /// Refuses the first member whose name is not in `allowed`, naming it.
    public func onlyKeys(_ allowed: Set<String>) throws(Failure) {
        if let (key, _) = members.first(where: { !allowed.contains($0.0) }) {
            throw .invalidField("\(path) has an unknown member \"\(key)\".")
        }
    }

    /// The member, unless it is absent or null.
    public func present(_ key: String) -> JSONValue? {
        guard let v = value[key], !v.isNull else { return nil }
        return v
    }

    /// What `read` gives for the member, which must be there.
    public func required<T>(_ key: String, _ read: (String) throws(Failure) -> T?) throws(Failure) -> T {
        guard let v = try read(key) else { throw invalid(key, "is required") }
        return v
    }

    public func object(_ key: String) throws(Failure) -> JSONFields? {
        guard let v = present(key) else { return nil }
        return try JSONFields(v, path: .member(path, key))
    }

    public func requiredObject(_ key: String) throws(Failure) -> JSONFields { try required(key, object) }

    public func string(_ key: String) throws(Failure) -> String? {
        guard let v = present(key) else { return nil }
        guard let s = v.stringValue else { throw invalid(key, "must be a string, not \(v.typeName)") }
        return s
    }

    public func requiredString(_ key: String) throws(Failure) -> String { try required(key, string) }

    public func bool(_ key: String) throws(Failure) -> Bool? {
        guard let v = present(key) else { return nil }
        guard let b = v.boolValue else { throw invalid(key, "must be a boolean, not \(v.typeName)") }
        return b
    }

    public func number(_ key: String) throws(Failure) -> Double? {
        guard let v = present(key) else { return nil }
        guard let n = v.numberValue else { throw invalid(key, "must be a number, not \(v.typeName)") }
        return n
    }

    /// A number that is an integer in `range`; a fraction, or a number outside the range (1e300 included), is
    /// refused before anything converts it.
    public func integer(_ key: String, in range: ClosedRange<Int64>) throws(Failure) -> Int64? {
        guard let n = try number(key) else { return nil }
        guard let integer = JSONValue.number(n).integerValue(in: range) else {
            throw invalid(key, "must be an integer from \(range.lowerBound) to \(range.upperBound), not \(JSONValue.format(n))")
        }
        return integer
    }

    public func array(_ key: String) throws(Failure) -> [JSONValue]? {
        guard let v = present(key) else { return nil }
        guard let a = v.arrayValue else { throw invalid(key, "must be an array, not \(v.typeName)") }
        return a
    }

    /// An array of strings; absent is empty.
    public func strings(_ key: String) throws(Failure) -> [String] {
        var out: [String] = []
        for (i, item) in (try array(key) ?? []).enumerated() {
            guard let s = item.stringValue else { throw .invalidField("\(path).\(key)[\(i)] must be a string, not \(item.typeName).") }
            out.append(s)
        }
        return out
    }

    /// An array of objects, each read with its own path ("key[i]"); absent is empty.
    public func objects(_ key: String) throws(Failure) -> [JSONFields] {
        var out: [JSONFields] = []
        for (i, item) in (try array(key) ?? []).enumerated() { out.append(try JSONFields(item, path: .element(path, key, i))) }
        return out
    }

    /// Unpadded base64url text (`Base64URL`, strict), decoded.
    public func base64URL(_ key: String) throws(Failure) -> [UInt8]? {
        guard let s = try string(key) else { return nil }
        guard let bytes = Base64URL.decode(s) else { throw .invalidField("Invalid base64url string for \(path).\(key).") }
        return bytes
    }

    public func requiredBase64URL(_ key: String) throws(Failure) -> [UInt8] { try required(key, base64URL) }
}

/// Reads WebAuthn options, raising the `TypeError` WebIDL conversion would raise. Also reads the platforms'
/// native request fields (`PlatformRequest`) and the signal options (`SignalRequest`).
public typealias OptionsReader = JSONFields<WebAuthnError>

extension WebAuthnError: JSONFieldFailure {
    public static func invalidField(_ message: String) -> WebAuthnError { .typeError(message) }
}
