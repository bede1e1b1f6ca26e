/// An error a `JSONFields` reader raises for a member of the wrong type or a missing one.
public protocol JSONFieldFailure: Error {
    static func invalidField(_ message: String) -> Self
}

/// Typed reads from a JSON object, raising the reader's own error type (TEMPORARY: replaced by the shared
/// reader on merge).
public struct JSONFields<Failure: JSONFieldFailure> {
    let value: JSONValue
    let path: OptionsPath

    public init(_ value: JSONValue, path: OptionsPath) throws(Failure) {
        guard case .object = value else { throw .invalidField("\(path) must be an object, not \(value.typeName).") }
        self.value = value
        self.path = path
    }

    private func present(_ key: String) -> JSONValue? {
        guard let v = value[key], !v.isNull else { return nil }
        return v
    }

    public func onlyKeys(_ allowed: Set<String>) throws(Failure) {
        for (key, _) in value.objectValue ?? [] where !allowed.contains(key) {
            throw .invalidField("\(path) has an unknown member \"\(key)\".")
        }
    }

    public func string(_ key: String) throws(Failure) -> String? {
        guard let v = present(key) else { return nil }
        guard let s = v.stringValue else { throw .invalidField("\(path).\(key) must be a string, not \(v.typeName).") }
        return s
    }

    public func requiredString(_ key: String) throws(Failure) -> String {
        guard let s = try string(key) else { throw .invalidField("\(path).\(key) is required.") }
        return s
    }

    public func bool(_ key: String) throws(Failure) -> Bool? {
        guard let v = present(key) else { return nil }
        guard let b = v.boolValue else { throw .invalidField("\(path).\(key) must be a boolean, not \(v.typeName).") }
        return b
    }

    public func number(_ key: String) throws(Failure) -> Double? {
        guard let v = present(key) else { return nil }
        guard let n = v.numberValue else { throw .invalidField("\(path).\(key) must be a number, not \(v.typeName).") }
        return n
    }

    public func strings(_ key: String) throws(Failure) -> [String] {
        guard let v = present(key) else { return [] }
        guard let items = v.arrayValue else { throw .invalidField("\(path).\(key) must be an array, not \(v.typeName).") }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard let s = item.stringValue else { throw .invalidField("\(path).\(key)[\(i)] must be a string, not \(item.typeName).") }
            out.append(s)
        }
        return out
    }
}
