import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 client over POSIX sockets: one connection per request (`Connection: close`), JSON bodies,
/// and a cookie jar so a sign-in step's session carries over. Plain `http` only.
///
/// Each exchange (connect, send, status line, headers, body) has one deadline, `limits.exchange`, cut short by
/// the run's deadline when that comes first; every wait on the socket is a `poll` for what is left of it, so a
/// server trickling bytes cannot hold the client past it. Name resolution (`getaddrinfo`) is outside it.
///
/// Foundation's `URLSession` on Linux lives in FoundationNetworking, which pulls libcurl into the binary; the
/// static release build and the `.deb`'s dependency list are kept free of it.
public final class HTTPClient {
    public private(set) var cookies: CookieJar
    public let limits: HTTPLimits
    /// The deadline of the whole run this client is part of, if any.
    public let runDeadline: Deadline?

    public init(limits: HTTPLimits = .standard, runDeadline: Deadline? = nil) {
        self.limits = limits
        self.runDeadline = runDeadline
        cookies = CookieJar(limits: limits)
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `method url` with `body` (as `application/json` when given) and reads the whole response.
    public func request(_ method: String, _ url: HTTPURL, json body: String? = nil) throws(ProbeError) -> Response {
        let exchange = Deadline(after: limits.exchange, ProbeError(.exchangeTimedOut, "\(url) did not answer in full within \(Deadline.text(limits.exchange))."))
        let deadline = exchange.earlier(runDeadline)
        _ = try deadline.remainingMilliseconds()
        let fd = try connect(url, deadline)
        defer { close(fd) }
        var head = "\(method) \(url.path) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nConnection: close\r\nAccept: application/json\r\n"
        head += "User-Agent: credemu-probe\r\n"
        if let cookie = cookies.header(for: url) { head += "Cookie: \(cookie)\r\n" }
        let payload = Array((body ?? "").utf8)
        if body != nil { head += "Content-Type: application/json\r\n" }
        head += "Content-Length: \(payload.count)\r\n\r\n"
        try send(fd, Array(head.utf8) + payload, url, deadline)
        var reader = HTTPResponseReader(limits: limits, url: url) { (buffer) throws(ProbeError) in
            try HTTPClient.receive(fd, into: &buffer, url, deadline)
        }
        let response = try reader.response()
        for (name, value) in response.headers where name == "set-cookie" { try cookies.store(value, from: url) }
        return response
    }

    /// Reads an answer held whole in `raw` (as the connection would deliver it).
    static func parse(_ raw: [UInt8], _ url: HTTPURL, limits: HTTPLimits = .standard) throws(ProbeError) -> Response {
        var delivered = false
        var reader = HTTPResponseReader(limits: limits, url: url) { (buffer) throws(ProbeError) in
            guard !delivered else { return 0 }
            delivered = true
            buffer.append(contentsOf: raw)
            return raw.count
        }
        return try reader.response()
    }

    // MARK: The socket, within the deadline

    private func connect(_ url: HTTPURL, _ deadline: Deadline) throws(ProbeError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(url.host, String(url.port), &hints, &list) == 0, let first = list else {
            throw ProbeError(.unreachable, "Cannot resolve \(url.host).")
        }
        defer { freeaddrinfo(list) }
        var failure = ECONNREFUSED
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            node = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                            info.pointee.ai_protocol)
            guard fd >= 0 else {
                failure = errno
                continue
            }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            failure = errno
            if failure == EINPROGRESS {
                do {
                    try HTTPClient.wait(fd, for: Int16(POLLOUT), url, deadline)
                } catch {
                    close(fd)
                    throw error
                }
                var result: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &result, &size)
                if result == 0 { return fd }
                failure = result
            }
            close(fd)
        }
        throw ProbeError(.unreachable, "Cannot connect to \(url.hostHeader): \(String(cString: strerror(failure))).")
    }

    private func send(_ fd: Int32, _ bytes: [UInt8], _ url: HTTPURL, _ deadline: Deadline) throws(ProbeError) {
        var sent = 0
        while sent < bytes.count {
            try HTTPClient.wait(fd, for: Int16(POLLOUT), url, deadline)
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if n > 0 {
                sent += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                continue
            } else {
                throw ProbeError(.unreachable, "Sending to \(url.hostHeader) failed: \(String(cString: strerror(errno))).")
            }
        }
    }

    /// Appends what `fd` has next to `buffer`, waiting at most until `deadline`; 0 at the end of the connection.
    private static func receive(_ fd: Int32, into buffer: inout [UInt8], _ url: HTTPURL, _ deadline: Deadline) throws(ProbeError) -> Int {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            try wait(fd, for: Int16(POLLIN), url, deadline)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n >= 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return n
            }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw ProbeError(.unreachable, "The connection to \(url.hostHeader) failed: \(String(cString: strerror(errno))).")
            }
        }
    }

    /// Waits until `fd` is ready for `events` (or has failed), or throws the deadline's error once it passes.
    private static func wait(_ fd: Int32, for events: Int16, _ url: HTTPURL, _ deadline: Deadline) throws(ProbeError) {
        while true {
            var target = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&target, 1, try deadline.remainingMilliseconds())
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw ProbeError(.unreachable, "Waiting on \(url.hostHeader) failed: \(String(cString: strerror(errno))).")
            }
        }
    }
}
