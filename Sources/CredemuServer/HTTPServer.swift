import CMicroHTTPD
import Dispatch
import Foundation
import WebAuthn

/// One HTTP request as the API sees it.
public struct HTTPRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [String: String]
    /// Header values by lower-case name (only those the API reads).
    public var headers: [String: String]
    public var body: [UInt8]
    /// The body went past the cap; it was discarded.
    public var bodyTooLarge: Bool
    /// Whether the client has closed its connection: known for a request that may block (suspended, so
    /// libmicrohttpd does not watch its socket); false for the others, which answer at once.
    public var clientGone: @Sendable () -> Bool = { false }
    /// Whether the request may wait (for a hold's release, a dropdown's pick): false for one answered on a pool
    /// thread, which must not be held there; what it would have waited for does not apply to it.
    public var mayWait = true
    /// The request is a message of the shim's channel: relayed inside the server (`DevToolsChannel`), or by a
    /// client's relay that says so with `X-Credemu-Channel` (the header only narrows what a request may reach).
    /// It may reach the routes the table marks `relayed` only.
    public var viaChannel = false
    /// `body` parsed already, by the one who made the request from a message it parsed whole (the server's own
    /// channel): the route's reader (`RequestBody`) takes it instead of parsing `body` again. Nil for HTTP.
    var bodyValue: JSONValue?

    /// The path's non-empty segments, split on "/" byte-wise (no grapheme breaking for an ASCII separator).
    ///
    /// One pass over the path's bytes: the generic `split` and `map` took about 5.5k of the route lookup's 7.5k
    /// instructions a request (callgrind, docs/benchmarks.md, 2026-12-06).
    public var segments: [String] {
        var segments: [String] = []
        segments.reserveCapacity(6)
        var path = path
        path.withUTF8 { bytes in
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                if index > start { segments.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) }
                start = index + 1
            }
        }
        return segments
    }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// An HTTP/1.1 server on libmicrohttpd: a pool of threads polling one listening socket, each request handed to
/// `handler` once its body is complete.
public final class HTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    let handler: Handler
    /// Says whether a request may wait a long time (a held ceremony): such a request is suspended and
    /// answered from another thread, so it does not stall the other connections of its pool thread.
    let mayBlock: @Sendable (HTTPRequest) -> Bool
    let maxBodyBytes: Int
    private var daemon: OpaquePointer?
    public private(set) var port: UInt16 = 0
    /// Requests suspended while their handler runs elsewhere, until their answer is queued: libmicrohttpd
    /// aborts the process if it is stopped while one is suspended.
    let suspended = NSCondition()
    var suspendedCount = 0

    /// The request headers the API reads.
    /// The headers the API reads: (name as looked up, the lower-case key it is stored under).
    /// The names are C strings made once: a `String` passed as one is copied to the heap on every call.
    static let headerNames = ["Authorization", "Origin", "Host", "Content-Type", "Access-Control-Request-Method", "Access-Control-Request-Headers",
                              "X-Credemu-Errors", "X-Credemu-Channel"]
        .map { ($0.utf8CString, $0.lowercased()) }

    public init(maxBodyBytes: Int, mayBlock: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false }, handler: @escaping Handler) {
        self.maxBodyBytes = maxBodyBytes
        self.mayBlock = mayBlock
        self.handler = handler
    }

    /// Binds `host:port` (port 0: any free port) and starts `threads` worker threads; returns the bound port.
    public func start(host: String, port: UInt16, threads: Int) throws -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw ServerError("'\(host)' is not an IPv4 address to bind.")
        }
        let cls = Unmanaged.passUnretained(self).toOpaque()
        let flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ERROR_LOG.rawValue
                           | MHD_ALLOW_SUSPEND_RESUME.rawValue)
        daemon = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                cmhd_start(flags, port, sa, UInt32(max(threads, 1)), 64 * 1024, 60, credemuAccessHandler, cls, credemuRequestCompleted,
                           credemuUnescape)
            }
        }
        guard let daemon else { throw ServerError("Cannot listen on \(host):\(port) (in use, or not permitted).") }
        self.port = cmhd_bound_port(daemon)
        return self.port
    }

    /// Takes a request out of `suspendedCount`, once.
    func uncount(_ state: RequestState) {
        suspended.lock()
        if state.counted {
            state.counted = false
            suspendedCount -= 1
            suspended.broadcast()
        }
        suspended.unlock()
    }

    /// Stops accepting, waits (up to `drainSeconds`) for suspended requests to be answered, then finishes the
    /// requests in flight and joins the threads. End whatever the suspended requests wait for first.
    public func stop(drainSeconds: Double = 10) {
        guard let daemon else { return }
        _ = MHD_quiesce_daemon(daemon)
        let deadline = Date().addingTimeInterval(drainSeconds)
        suspended.lock()
        while suspendedCount > 0 && suspended.wait(until: deadline) {}
        let stuck = suspendedCount
        suspended.unlock()
        // A request still suspended here would make MHD_stop_daemon abort: leave the threads to the exit.
        if stuck == 0 { MHD_stop_daemon(daemon) }
        self.daemon = nil
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Per-request state kept between libmicrohttpd's calls: the body as it arrives.
final class RequestState: @unchecked Sendable {
    var body: [UInt8] = []
    var tooLarge = false
    /// The answer of a request handled off the pool thread, waiting for the connection to resume.
    var response: HTTPResponse?
    var deferred = false
    /// Counted in the server's `suspendedCount` until its answer is queued or the request ends.
    var counted = false
}

/// libmicrohttpd's access handler: a plain global function, since a closure captured in `main.swift` would be
/// MainActor-isolated and trap on the library's threads (platform-notes.md).
func credemuAccessHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
                          _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
                          _ uploadDataSize: UnsafeMutablePointer<Int>?, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let cls, let connection, let requestContext else { return MHD_Result.NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    // First call: headers only. Set up the state and ask for the body.
    guard let raw = requestContext.pointee else {
        requestContext.pointee = Unmanaged.passRetained(RequestState()).toOpaque()
        return MHD_Result.YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(raw).takeUnretainedValue()
    if let uploadDataSize, uploadDataSize.pointee > 0 {
        if let uploadData, !state.tooLarge {
            if state.body.count + uploadDataSize.pointee > server.maxBodyBytes {
                state.tooLarge = true
                state.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadDataSize.pointee) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadDataSize.pointee))
                }
            }
        }
        uploadDataSize.pointee = 0
        return MHD_Result.YES
    }
    if let response = state.response {
        state.response = nil
        let result = queue(response, on: connection)
        server.uncount(state)
        return result
    }
    if state.deferred { return MHD_Result.YES }
    let fullURL = url.map { String(cString: $0) } ?? "/"
    var headers: [String: String] = [:]
    headers.reserveCapacity(HTTPServer.headerNames.count)
    for (name, key) in HTTPServer.headerNames {
        if let value = name.withUnsafeBufferPointer({ MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, $0.baseAddress) }) {
            headers[key] = String(cString: value)
        }
    }
    var query = QueryCollector()
    withUnsafeMutablePointer(to: &query) { pointer in
        _ = MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, credemuCollectArgument, pointer)
    }
    let request = HTTPRequest(method: method.map { String(cString: $0) } ?? "GET", path: fullURL, query: query.values,
                              headers: headers, body: state.body, bodyTooLarge: state.tooLarge)
    if server.mayBlock(request) {
        state.deferred = true
        server.suspended.lock()
        server.suspendedCount += 1
        state.counted = true
        server.suspended.unlock()
        let peer = Peer(socket: cmhd_connection_fd(connection))
        var watched = request
        watched.clientGone = { peer.isGone }
        let waiting = watched
        MHD_suspend_connection(connection)
        let resumable = SuspendedConnection(connection)
        // A thread of its own: a request that waits long must not hold one of the shared queue's few threads.
        // The boards bound how many wait at once.
        Thread.detachNewThread {
            state.response = server.handler(waiting)
            peer.answered()
            MHD_resume_connection(resumable.connection)
        }
        return MHD_Result.YES
    }
    var answeredNow = request
    answeredNow.mayWait = false
    return queue(server.handler(answeredNow), on: connection)
}

/// The client of a suspended connection, as its handler asks after it: gone once its socket reads end of file or
/// an error. The socket is the connection's until it is resumed; after the answer nothing looks at it.
final class Peer: @unchecked Sendable {
    private let lock = NSLock()
    private var socket: Int32

    init(socket: Int32) { self.socket = socket }

    var isGone: Bool {
        lock.lock()
        defer { lock.unlock() }
        return socket >= 0 && cmhd_peer_gone(socket) != 0
    }

    /// The answer is queued: the socket goes back to libmicrohttpd.
    func answered() {
        lock.lock()
        socket = -1
        lock.unlock()
    }
}

/// A suspended connection handed to the thread that will resume it (libmicrohttpd allows this with ITC).
struct SuspendedConnection: @unchecked Sendable {
    let connection: OpaquePointer
    init(_ connection: OpaquePointer) { self.connection = connection }
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let resp = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(response.body.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
    }
    guard let resp else { return MHD_Result.NO }
    // withCString copies a short string to the stack, where passing the String itself copies it to the heap.
    for (name, value) in response.headers {
        name.withCString { name in value.withCString { value in _ = MHD_add_response_header(resp, name, value) } }
    }
    let result = MHD_queue_response(connection, UInt32(response.status), resp)
    MHD_destroy_response(resp)
    return result
}

/// Frees the request state when libmicrohttpd is done with a request.
func credemuRequestCompleted(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                             _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_RequestTerminationCode) {
    guard let requestContext, let raw = requestContext.pointee else { return }
    // A client that went away while its request was suspended is answered by nobody: uncount it here.
    let state = Unmanaged<RequestState>.fromOpaque(raw).takeUnretainedValue()
    if state.deferred, let cls { Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().uncount(state) }
    Unmanaged<RequestState>.fromOpaque(raw).release()
    requestContext.pointee = nil
}

struct QueryCollector {
    var values: [String: String] = [:]
}

func credemuCollectArgument(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
                            _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let collector = cls.assumingMemoryBound(to: QueryCollector.self)
    collector.pointee.values[String(cString: key)] = value.map { String(cString: $0) } ?? ""
    return MHD_Result.YES
}

/// Percent-decoding of the URL and query values, in place, as libmicrohttpd's own except that "%00" stays as
/// written: a decoded NUL would end the C string, and the server would route a shorter path than the one
/// requested. Returns the new length.
func credemuUnescape(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ text: UnsafeMutablePointer<CChar>?) -> Int {
    guard let text else { return 0 }
    func hex(_ c: CChar) -> UInt8? {
        switch UInt8(bitPattern: c) {
        case 0x30...0x39: return UInt8(bitPattern: c) - 0x30
        case 0x41...0x46: return UInt8(bitPattern: c) - 0x41 + 10
        case 0x61...0x66: return UInt8(bitPattern: c) - 0x61 + 10
        default: return nil
        }
    }
    var read = 0, write = 0
    while text[read] != 0 {
        if text[read] == 0x25, let high = hex(text[read + 1]), let low = hex(text[read + 2]), high | low != 0 {
            text[write] = CChar(bitPattern: high << 4 | low)
            read += 3
        } else {
            text[write] = text[read]
            read += 1
        }
        write += 1
    }
    text[write] = 0
    return write
}
