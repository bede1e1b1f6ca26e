import CredemuEngine
import WebAuthn

/// A request the API refuses, with its HTTP status and JSON error body.
struct APIError: Error {
    var status: Int
    var body: JSONValue
    var headers: [(String, String)] = []

    init(_ status: Int, _ name: String, _ message: String) {
        self.status = status
        self.body = .object([("error", .object([("name", .string(name)), ("message", .string(message))]))])
    }

    init(status: Int, body: JSONValue, headers: [(String, String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    static func badRequest(_ message: String) -> APIError { APIError(400, "TypeError", message) }
    static func notFound(_ message: String) -> APIError { APIError(404, "NotFound", message) }

    /// A ceremony or signal failure: the status says what kind, the body carries every dialect.
    static func ceremony(_ failure: CeremonyError, operation: Dialect.Operation, engine: Engine) -> APIError {
        let status: Int
        var headers: [(String, String)] = []
        switch failure.error.name {
        case .typeError: status = 400
        case .securityError: status = 403
        case .unknownError where failure.reason == .storage: status = 500
        default: status = failure.reason == .rateLimited ? 429 : 422
        }
        if let retry = failure.retryAfterMillis { headers.append(("Retry-After", String((retry + 999) / 1000))) }
        return APIError(status: status, body: failure.json(operation: operation, engine: engine), headers: headers)
    }
}

/// Typed reads from a JSON request body, refusing wrong types with a 400 that names the member.
struct Body {
    let value: JSONValue

    init(_ request: HTTPRequest, allowEmpty: Bool = false) throws(APIError) {
        if request.body.isEmpty && allowEmpty {
            value = .object([])
            return
        }
        do {
            value = try JSONValue.parse(request.body)
        } catch {
            throw .badRequest("The request body is not valid JSON: \(error.description).")
        }
        guard value.objectValue != nil else { throw .badRequest("The request body must be a JSON object.") }
    }

    func string(_ key: String) throws(APIError) -> String? {
        guard let v = value[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw .badRequest("'\(key)' must be a string, not \(v.typeName).") }
        return s
    }

    func requiredString(_ key: String) throws(APIError) -> String {
        guard let s = try string(key) else { throw .badRequest("'\(key)' is required.") }
        return s
    }

    func bool(_ key: String) throws(APIError) -> Bool? {
        guard let v = value[key], !v.isNull else { return nil }
        guard let b = v.boolValue else { throw .badRequest("'\(key)' must be true or false, not \(v.typeName).") }
        return b
    }

    func number(_ key: String) throws(APIError) -> Double? {
        guard let v = value[key], !v.isNull else { return nil }
        guard let n = v.numberValue else { throw .badRequest("'\(key)' must be a number, not \(v.typeName).") }
        return n
    }

    /// A member holding WebAuthn options: an object, or a JSON string of one.
    func options(_ key: String = "options") throws(APIError) -> JSONValue {
        guard let v = value[key], !v.isNull else { throw .badRequest("'\(key)' is required.") }
        if let s = v.stringValue {
            do {
                return try JSONValue.parse(s)
            } catch {
                throw .badRequest("'\(key)' is not valid JSON: \(error.description).")
            }
        }
        guard v.objectValue != nil else { throw .badRequest("'\(key)' must be an object, not \(v.typeName).") }
        return v
    }
}
