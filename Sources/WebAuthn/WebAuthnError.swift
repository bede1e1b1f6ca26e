/// A failed ceremony or signal, as data: the DOMException (or TypeError) name a browser raises, and why.
///
/// Platform dialects (web, Android, Apple) are renderings of this one value; see WebAuthn L3 §5.1.3 and §5.1.4
/// for which name each failure carries.
public struct WebAuthnError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The closed set of names a WebAuthn caller can see.
    public enum Name: String, Sendable, CaseIterable, Codable {
        case typeError = "TypeError"
        case securityError = "SecurityError"
        case notAllowedError = "NotAllowedError"
        case invalidStateError = "InvalidStateError"
        case notSupportedError = "NotSupportedError"
        case constraintError = "ConstraintError"
        case abortError = "AbortError"
        case unknownError = "UnknownError"
        case encodingError = "EncodingError"
        /// Chromium's answer to a PRF `evalByCredential` key that is not base64url or not in the allow list.
        case syntaxError = "SyntaxError"
        /// Chromium's answer to a second request while one is pending.
        case operationError = "OperationError"
        /// A DOMException Blink names "RangeError" (an `excludeCredentials` or `allowCredentials` list over 64 entries).
        case rangeError = "RangeError"
    }

    public var name: Name
    public var message: String

    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    public static func typeError(_ message: String) -> WebAuthnError { .init(.typeError, message) }
    public static func securityError(_ message: String) -> WebAuthnError { .init(.securityError, message) }
    public static func notAllowed(_ message: String) -> WebAuthnError { .init(.notAllowedError, message) }
    public static func invalidState(_ message: String) -> WebAuthnError { .init(.invalidStateError, message) }
    public static func notSupported(_ message: String) -> WebAuthnError { .init(.notSupportedError, message) }
    public static func constraint(_ message: String) -> WebAuthnError { .init(.constraintError, message) }

    public var description: String { "\(name.rawValue): \(message)" }

    /// `{"error": {"name": ..., "message": ...}}`, the CLI's and the API's error body.
    public var json: JSONValue {
        ErrorBody.json(name: name.rawValue, message: message)
    }
}
