import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 client over POSIX sockets: one connection per request (`Connection: close`), JSON bodies,
/// and a cookie jar so a sign-in step's session carries over. Plain `http` only.
///
/// Foundation's `URLSession` on Linux lives in FoundationNetworking, which pulls libcurl into the binary; the
/// static release build and the `.deb`'s dependency list are kept free of it.
public final class HTTPClient {
    /// Cookies by name, as the server set them (attributes are ignored: every request goes to one server).
    public private(set) var cookies: [(String, String)] = []
    /// Seconds a connect, send or receive may take.
    public var timeout: Int = 30
    /// The most a response may be: a larger one is an error rather than memory use without bound.
    public static let maxResponse = 8 << 20

    public init() {}

    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `method url` with `body` (as `application/json` when given) and reads the whole response.
    public func request(_ method: String, _ url: HTTPURL, json body: String? = nil) throws(ProbeError) -> Response {
        let fd = try connect(url)
        defer { close(fd) }
        var head = "\(method) \(url.path) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nConnection: close\r\nAccept: application/json\r\n"
        head += "User-Agent: credemu-probe\r\n"
        if !cookies.isEmpty { head += "Cookie: " + cookies.map { "\($0.0)=\($0.1)" }.joined(separator: "; ") + "\r\n" }
        let payload = Array((body ?? "").utf8)
        if body != nil { head += "Content-Type: application/json\r\n" }
        head += "Content-Length: \(payload.count)\r\n\r\n"
        try send(fd, Array(head.utf8) + payload, url)
        let raw = try receive(fd, url)
        let response = try HTTPClient.parse(raw, url)
        for (name, value) in response.headers where name == "set-cookie" { remember(cookie: value) }
        return response
    }

    private func connect(_ url: HTTPURL) throws(ProbeError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(url.host, String(url.port), &hints, &list) == 0, let first = list else {
            throw ProbeError(.target, "Cannot resolve \(url.host).")
        }
        defer { freeaddrinfo(list) }
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if fd >= 0 {
                var tv = timeval(tv_sec: timeout, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
                close(fd)
            }
            node = info.pointee.ai_next
        }
        throw ProbeError(.target, "Cannot connect to \(url.hostHeader): \(String(cString: strerror(errno))).")
    }

    private func send(_ fd: Int32, _ bytes: [UInt8], _ url: HTTPURL) throws(ProbeError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ProbeError(.target, "Sending to \(url.hostHeader) failed.") }
            sent += n
        }
    }

    private func receive(_ fd: Int32, _ url: HTTPURL) throws(ProbeError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return out }
            guard n > 0 else { throw ProbeError(.target, "No answer from \(url) within \(timeout) s.") }
            out.append(contentsOf: chunk[0..<n])
            guard out.count <= HTTPClient.maxResponse else { throw ProbeError(.target, "The answer from \(url) is over \(HTTPClient.maxResponse) bytes.") }
        }
    }

    /// Status line, headers (names lowercased) and body: by Content-Length, chunked, or to the end.
    static func parse(_ raw: [UInt8], _ url: HTTPURL) throws(ProbeError) -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = raw.firstRange(of: separator)?.lowerBound else { throw ProbeError(.target, "\(url) did not answer with HTTP.") }
        let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw ProbeError(.target, "\(url) did not answer with HTTP/1.x.")
        }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(raw[(end + 4)...])
        func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }
        if header("transfer-encoding")?.lowercased().contains("chunked") == true {
            body = try dechunk(body, url)
        } else if let length = header("content-length").flatMap(Int.init), length >= 0, length <= body.count {
            body = Array(body[..<length])
        }
        return Response(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ bytes: [UInt8], _ url: HTTPURL) throws(ProbeError) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard let lineEnd = bytes[i...].firstRange(of: [13, 10])?.lowerBound,
                  let size = Int(String(decoding: bytes[i..<lineEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16),
                  size >= 0 else { throw ProbeError(.target, "\(url) sent a malformed chunked body.") }
            if size == 0 { return out }
            let start = lineEnd + 2
            guard start + size <= bytes.count else { throw ProbeError(.target, "\(url) sent a truncated chunked body.") }
            out.append(contentsOf: bytes[start..<start + size])
            i = start + size + 2
        }
        return out
    }

    private func remember(cookie header: String) {
        let pair = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        guard let eq = pair.firstIndex(of: "=") else { return }
        let name = pair[..<eq].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: eq)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return }
        cookies.removeAll { $0.0 == name }
        cookies.append((name, value))
    }
}
