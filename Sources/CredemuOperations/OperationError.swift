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
    }

    public var code: Code
    /// The error's name in the body: a WebAuthn or DOMException name, or credemu's own (`NotFound`, ...).
    public var name: String
    public var message: String
    /// The complete `{"error": {...}}` body when it carries more than name and message (ceremonies).
    public var body: JSONValue?
    /// The vault's own failure, kept so the CLI can print its code.
    public var vaultCode: VaultError.Code?
    /// For a ceremony: the web error's name and whether a rate limit asks the caller to wait.
    public var ceremony: CeremonyError?

    public init(_ code: Code, _ name: String, _ message: String) {
        self.code = code
        self.name = name
        self.message = message
    }

    public static func invalidInput(_ message: String) -> OperationError { .init(.invalidInput, "TypeError", message) }
    public static func notFound(_ message: String) -> OperationError { .init(.notFound, "NotFound", message) }
    public static func conflict(_ message: String) -> OperationError { .init(.conflict, "Conflict", message) }
    public static func wrongOrigin(_ message: String) -> OperationError { .init(.wrongOrigin, "SecurityError", message) }

    /// A ceremony failure, rendered with the engine's profile and dialects.
    public static func ceremony(_ failure: CeremonyError, _ operation: Dialect.Operation, _ engine: Engine) -> OperationError {
        var e = OperationError(.ceremony, failure.error.name.rawValue, failure.error.message)
        e.body = failure.json(operation: operation, engine: engine)
        e.ceremony = failure
        return e
    }

    /// A profile setting, pack or scenario that cannot be used.
    public static func configuration(_ error: InvalidConfiguration) -> OperationError {
        OperationError(.configuration, error.kind.rawValue, error.message)
    }

    /// A vault failure: missing and duplicate rows are the caller's; the rest is the store's.
    public static func vault(_ error: VaultError) -> OperationError {
        var e: OperationError
        switch error.code {
        case .notFound: e = .notFound(error.message)
        case .duplicate: e = .conflict(error.message)
        case .invalidInput: e = .invalidInput(error.message)
        default: e = OperationError(.storage, "VaultError", error.message)
        }
        e.vaultCode = error.code
        return e
    }

    /// The error body: `{"error": {"name", "message", ...}}`, the one shape every front end prints.
    public var json: JSONValue {
        if let body { return body }
        var members: [(String, JSONValue)] = [("name", .string(name)), ("message", .string(message))]
        if let vaultCode, code == .storage { members.append(("code", .string(vaultCode.rawValue))) }
        return ErrorBody.json(members)
    }

    public var description: String { "\(name): \(message)" }
}

extension OperationError: JSONFieldFailure {
    public static func invalidField(_ message: String) -> OperationError { .invalidInput(message) }
}
