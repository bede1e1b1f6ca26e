import CredemuEngine
import Vault
import WebAuthn

/// Why an operation was refused, as data: the CLI and the server render the same value in their own terms
/// (an exit status and a stream; an HTTP status and headers).
public struct OperationError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Malformed or out-of-range input: HTTP 400 `TypeError`, CLI usage error (exit 2).
        case invalidInput
        /// A request acting for an origin it does not come from: HTTP 403 `SecurityError`.
        case wrongOrigin
        /// HTTP 404; the CLI's VaultError `notFound` (exit 3).
        case notFound
        /// HTTP 409; the CLI's VaultError `duplicate` (exit 3).
        case conflict
        /// A ceremony or signal failed as a browser would fail it: the body carries every dialect.
        case ceremony
        /// A profile setting, policy pack or scenario that does not validate.
        case configuration
        /// The vault failed: HTTP 500, CLI exit 3.
        case storage
        /// Not now: the server runs as many scenarios as it may, is stopping, or the run passed its deadline.
        /// HTTP 503, CLI exit 3.
        case unavailable
    }

    /// The error's name in the body, as a typed value: a WebAuthn or DOMException name, a kind of invalid
    /// configuration, or credemu's own. Compared as values, never as strings; `rawValue` is what a body says.
    public enum Name: Sendable, Equatable, CustomStringConvertible {
        case web(WebAuthnError.Name)
        case configuration(InvalidConfiguration.Kind)
        case notFound
        case conflict
        case vaultError
        case internalError
        /// `unavailable`: the server runs as many scenarios as it may.
        case scenarioRunsBusy
        /// `unavailable`: a scenario run passed its deadline.
        case scenarioTimedOut
        /// `unavailable`: the server is stopping.
        case serverStopping
        /// `unavailable`: the run's client went away (nobody reads the answer).
        case clientGone
        /// `invalidInput`: WebDriver's "invalid argument" (WebAuthn L3 §11's commands).
        case invalidArgument
        /// `invalidInput`: WebDriver's "unsupported operation" (§11.3: an extension the authenticator cannot process).
        case unsupportedOperation
        /// `conflict`: a forged answer armed on the target (`forge-next`, override bits) that cannot be made of this answer.
        case forgeryNotMade

        public var rawValue: String {
            switch self {
            case .web(let name): return name.rawValue
            case .configuration(let kind): return kind.rawValue
            case .notFound: return "NotFound"
            case .conflict: return "Conflict"
            case .vaultError: return "VaultError"
            case .internalError: return "InternalError"
            case .scenarioRunsBusy: return "ScenarioRunsBusy"
            case .scenarioTimedOut: return "ScenarioTimedOut"
            case .serverStopping: return "ServerStopping"
            case .clientGone: return "ClientGone"
            case .invalidArgument: return "InvalidArgument"
            case .unsupportedOperation: return "UnsupportedOperation"
            case .forgeryNotMade: return "ForgeryNotMade"
            }
        }

        public var description: String { rawValue }
    }

    public var code: Code
    public var name: Name
    public var message: String
    /// The complete `{"error": {...}}` body when it carries more than name and message (ceremonies).
    public var body: JSONValue?
    /// The vault's own failure, kept so the CLI can print its code.
    public var vaultCode: VaultError.Code?
    /// For a ceremony: the web error's name and whether a rate limit asks the caller to wait.
    public var ceremony: CeremonyError?
    /// For a refusal that may succeed later (`unavailable`): when to try again.
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ name: Name, _ message: String) {
        self.code = code
        self.name = name
        self.message = message
    }

    public static func invalidInput(_ message: String) -> OperationError { .init(.invalidInput, .web(.typeError), message) }
    public static func notFound(_ message: String) -> OperationError { .init(.notFound, .notFound, message) }
    public static func conflict(_ message: String) -> OperationError { .init(.conflict, .conflict, message) }
    public static func wrongOrigin(_ message: String) -> OperationError { .init(.wrongOrigin, .web(.securityError), message) }
    public static func internalError(_ message: String) -> OperationError { .init(.storage, .internalError, message) }
    public static func invalidArgument(_ message: String) -> OperationError { .init(.invalidInput, .invalidArgument, message) }
    public static func unsupportedOperation(_ message: String) -> OperationError { .init(.invalidInput, .unsupportedOperation, message) }

    /// A run that `Cancellation` ended: `ScenarioTimedOut`, `ServerStopping` or `ClientGone` (which nobody reads).
    public static func stopped(_ stop: Cancellation.Stopped, what: String) -> OperationError {
        let done = "after \(stop.completed) of \(stop.total) step runs"
        switch stop.reason {
        case .deadline: return .init(.unavailable, .scenarioTimedOut, "The \(what) ran past its deadline \(done); name fewer providers or repeat steps fewer times.")
        case .stopping: return .init(.unavailable, .serverStopping, "The server is stopping; the \(what) was stopped \(done).")
        case .clientGone: return .init(.unavailable, .clientGone, "The \(what) was stopped \(done): its client went away.")
        case .removed: return .notFound("The \(what) was stopped \(done): what it ran for was removed.")
        }
    }

    /// A ceremony failure, rendered with the engine's profile and dialects.
    public static func ceremony(_ failure: CeremonyError, _ operation: Dialect.Operation, _ engine: Engine) -> OperationError {
        var e = OperationError(.ceremony, .web(failure.error.name), failure.error.message)
        e.body = failure.json(operation: operation, engine: engine)
        e.ceremony = failure
        return e
    }

    /// A profile setting, pack or scenario that cannot be used.
    public static func configuration(_ error: InvalidConfiguration) -> OperationError {
        OperationError(.configuration, .configuration(error.kind), error.message)
    }

    /// A vault failure: missing and duplicate rows are the caller's; the rest is the store's.
    public static func vault(_ error: VaultError) -> OperationError {
        var e: OperationError
        switch error.code {
        case .notFound: e = .notFound(error.message)
        case .duplicate: e = .conflict(error.message)
        case .invalidInput: e = .invalidInput(error.message)
        default: e = OperationError(.storage, .vaultError, error.message)
        }
        e.vaultCode = error.code
        return e
    }

    /// The error body: `{"error": {"name", "message", ...}}`, the one shape every front end prints.
    public var json: JSONValue {
        if let body { return body }
        var members: [(String, JSONValue)] = [("name", .string(name.rawValue)), ("message", .string(message))]
        if let vaultCode, code == .storage { members.append(("code", .string(vaultCode.rawValue))) }
        return ErrorBody.json(members)
    }

    public var description: String { "\(name): \(message)" }
}

extension OperationError: JSONFieldFailure {
    public static func invalidField(_ message: String) -> OperationError { .invalidInput(message) }
}
