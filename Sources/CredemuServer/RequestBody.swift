import CredemuOperations
import WebAuthn

/// Typed reads from a JSON request body; a wrong type is a 400 that names the member.
struct RequestBody {
    let fields: JSONFields<OperationError>
    let value: JSONValue

    init(_ request: HTTPRequest, allowEmpty: Bool = false) throws(APIError) {
        if request.body.isEmpty && allowEmpty {
            value = .object([])
            fields = try APIError.wrap { () throws(OperationError) in try JSONFields(.object([]), path: "body") }
            return
        }
        let value: JSONValue
        if let parsed = request.bodyValue {
            value = parsed
        } else {
            do {
                value = try JSONValue.parse(request.body)
            } catch {
                throw APIError(.invalidInput("The request body is not valid JSON: \(error.description)."))
            }
        }
        self.value = value
        fields = try APIError.wrap { () throws(OperationError) in try JSONFields(value, path: "body") }
    }

    func only(_ keys: Set<String>) throws(APIError) { try APIError.wrap { () throws(OperationError) in try fields.onlyKeys(keys) } }
    func string(_ key: String) throws(APIError) -> String? { try APIError.wrap { () throws(OperationError) in try fields.string(key) } }
    func requiredString(_ key: String) throws(APIError) -> String { try APIError.wrap { () throws(OperationError) in try fields.requiredString(key) } }
    func bool(_ key: String) throws(APIError) -> Bool? { try APIError.wrap { () throws(OperationError) in try fields.bool(key) } }
    func number(_ key: String) throws(APIError) -> Double? { try APIError.wrap { () throws(OperationError) in try fields.number(key) } }
    func strings(_ key: String) throws(APIError) -> [String]? {
        guard value[key] != nil, value[key]?.isNull == false else { return nil }
        return try APIError.wrap { () throws(OperationError) in try fields.strings(key) }
    }

    /// A member holding WebAuthn options: an object, or a JSON string of one (parsed by the operation, so
    /// malformed text fails as the ceremony's TypeError).
    func options(_ key: String = "options") throws(APIError) -> CeremonyRequest.Options {
        guard let v = value[key], !v.isNull else { throw APIError(.invalidInput("body.\(key) is required.")) }
        if let s = v.stringValue { return .text(s) }
        guard v.objectValue != nil else { throw APIError(.invalidInput("body.\(key) must be an object, not \(v.typeName).")) }
        return .json(v)
    }
}
