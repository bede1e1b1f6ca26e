/// Why a probe could not run at all (as opposed to a server rejecting a response, which is a result).
public struct ProbeError: Error, Sendable, CustomStringConvertible {
    /// The error's stable name, printed before its message.
    public enum Kind: String, Sendable, CaseIterable {
        /// The target URL, or a path the adapter names, is not one the probe can request.
        case badURL = "BadURL"
        /// The server's host does not resolve, or it refuses or drops the connection.
        case unreachable = "Unreachable"
        /// One exchange (connect, send, status line, headers and body) passed its limit.
        case exchangeTimedOut = "ExchangeTimedOut"
        /// The whole run passed its limit (`--max-time`).
        case runTimedOut = "RunTimedOut"
        /// The answer is not HTTP/1.x, or its framing is wrong or cut short.
        case malformedResponse = "MalformedResponse"
        /// The answer's status line, headers, body or bytes on the wire are over `HTTPLimits`.
        case responseTooLarge = "ResponseTooLarge"
        /// The server set more cookies, or a larger one, than `HTTPLimits` allows.
        case cookieOverLimit = "CookieOverLimit"
        /// The origin the responses would name is not a web origin in a secure context.
        case badOrigin = "BadOrigin"
        /// The adapter file is unreadable or malformed.
        case badAdapter = "BadAdapter"
        /// The vault the probe logs to could not be made or written.
        case vault = "VaultRefused"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    /// `text` (a URL given, or a server's words) as a message may show it on a terminal: at most `limit`
    /// characters, control characters (escape sequences among them) escaped.
    static func quote(_ text: String, limit: Int = 200) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            out += scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return text.unicodeScalars.count > limit ? out + "…" : out
    }
}
