import CredemuEngine
import CredemuOperations
import WebAuthn

/// A request the API refuses: its HTTP status, headers and JSON error body.
struct APIError: Error {
    var status: Int
    var body: JSONValue
    var headers: [(String, String)] = []

    /// A refusal of the front door itself (host, origin, media type, token, route).
    init(_ status: Int, _ name: String, _ message: String, headers: [(String, String)] = []) {
        self.status = status
        self.body = ErrorBody.json(name: name, message: message)
        self.headers = headers
    }

    /// An operation's refusal, with the status its code implies.
    init(_ failure: OperationError) {
        body = failure.json
        switch failure.code {
        case .invalidInput: status = 400
        case .wrongOrigin: status = 403
        case .notFound: status = 404
        case .conflict: status = 409
        case .configuration: status = [.configuration(.policyPack), .configuration(.unansweredExtension)].contains(failure.name) ? 422 : 400
        case .storage: status = 500
        case .unavailable:
            status = 503
            if let seconds = failure.retryAfterSeconds { headers.append(("Retry-After", String(seconds))) }
        case .ceremony:
            let ceremony = failure.ceremony
            switch ceremony?.error.name {
            case .typeError?: status = 400
            case .securityError?: status = 403
            case .unknownError? where ceremony?.reason == .storage: status = 500
            default: status = ceremony?.reason == .rateLimited ? 429 : 422
            }
            if let retry = ceremony?.retryMillis { headers.append(("Retry-After", String((retry + 999) / 1000))) }
        }
    }

    static func notFound(_ message: String) -> APIError { APIError(404, "NotFound", message) }

    /// Runs an operation, turning its refusal into the HTTP one.
    static func wrap<T>(_ body: () throws(OperationError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            throw APIError(error)
        }
    }
}
