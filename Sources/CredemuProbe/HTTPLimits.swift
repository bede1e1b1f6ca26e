/// The most an answer may carry before the probe's client stops reading it with `ResponseTooLarge` or
/// `CookieOverLimit`, and how long one exchange may take.
///
/// Every request `HTTPClient` makes reads its answer through these, whatever the server, adapter or step.
public struct HTTPLimits: Sendable {
    /// The status line, reason phrase included.
    public var statusLine = 8 << 10
    /// Header fields in one answer, interim (1xx) answers' and the chunked body's trailers included.
    public var headerCount = 100
    /// Bytes of status lines, header fields and trailers together.
    public var headerBytes = 64 << 10
    /// A chunk's size line, extensions included.
    public var chunkLine = 4 << 10
    /// The body, after chunked framing is removed.
    public var body = 8 << 20
    /// Every byte read from the connection (chunked framing can cost more than its body).
    public var received = 16 << 20
    /// Cookies in one client's jar (Chrome keeps 180 per domain).
    public var cookieCount = 180
    /// A cookie's name and value together (RFC 6265 §6.1, and Chrome's limit).
    public var cookieBytes = 4096
    /// One exchange: connect, send, status line, headers and body.
    public var exchange: Duration = .seconds(30)

    public static let standard = HTTPLimits()

    public init() {}
}
