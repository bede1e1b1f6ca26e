import Foundation
import Signing
#if canImport(Glibc)
import Glibc
#endif

/// A websocket client (RFC 6455) over POSIX sockets, for the DevTools connection of the server-side channel
/// (`DevToolsChannel`): text messages, one connection, loopback peers only, in the socket style of the probe's
/// `HTTPClient`. No `Origin` header is sent (Chromium refuses a DevTools handshake that carries one it was not
/// told to allow). Everything the peer sends is hostile: a frame the RFC forbids ends the connection, a message
/// over `maxMessage` bytes is read past and dropped (never buffered), and nothing it sends can make it crash.
///
/// Nothing the peer does can hold a thread, and `shutdown` cuts every wait short. The socket is non-blocking and
/// the only wait is the reading thread's `poll`, on the socket and on a pipe `shutdown` writes to, with no lock
/// held across it. A send never waits: it queues its frame whole and writes what the socket takes at once; the
/// reading thread writes the rest as the socket takes it. Each frame must be taken within `sendSeconds` of being
/// queued, else the connection ends: a peer that stops reading is dropped, not waited on. One thread reads
/// (`connect`, then `receive`); any thread may send.
final class WebSocketClient: @unchecked Sendable {
    /// Seconds the peer has to take each frame queued to it.
    static let sendSeconds = 10.0

    private let url: WebSocketURL
    private let lock = NSLock()
    private var fd: Int32
    /// The pipe every wait polls beside the socket: `shutdown` makes it readable for good; a send that leaves bytes
    /// queued writes a byte to wake the reading thread, which drains it.
    private var wake: (read: Int32, write: Int32)
    /// Why the connection ended, once it has: every call after it throws this.
    private var ended: WebSocketError?
    /// The reading thread is in `poll` with the descriptors: `close` leaves them to it.
    private var polling = false
    private var woken = false
    private var closeWanted = false
    /// Bytes queued and not yet taken by the socket, from `outboxStart`.
    private var outbox: [UInt8] = []
    private var outboxStart = 0
    /// Bytes ever queued and ever taken; for each frame not wholly taken, where it ends in that count and by when.
    private var queued = 0
    private var taken = 0
    private var due: [(end: Int, deadline: Date)] = []
    /// Untaken bytes past which a peer counts as not reading (a frame into an empty queue is always taken).
    private let maxOutbox: Int
    /// The reading thread's.
    private var frames: WebSocketFrames
    /// What one `recv` reads into (reading thread only): kept, so a message costs no 64 KB allocation and fill.
    private var readBuffer = [UInt8](repeating: 0, count: 65536)

    /// A socket for `url`, not yet connected (`connect`): no network wait here.
    init(_ url: WebSocketURL, maxMessage: Int) throws(WebSocketError) {
        let family = url.address.contains(":") ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw WebSocketError("cannot make a socket: \(String(cString: strerror(errno)))") }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw WebSocketError("cannot make a pipe: \(reason)")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        self.url = url
        self.fd = fd
        wake = (ends[0], ends[1])
        frames = WebSocketFrames(maxMessage: maxMessage)
        maxOutbox = 4 * maxMessage
    }

    deinit { release() }

    /// Connects and completes the opening handshake within `timeout` seconds (reading thread).
    func connect(timeout: Double) throws(WebSocketError) {
        let deadline = Date().addingTimeInterval(timeout)
        var (result, failure) = try lock.locked { () throws(WebSocketError) -> (Int32, Int32) in
            if let ended { throw ended }
            if url.address.contains(":") {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = url.port.bigEndian
                inet_pton(AF_INET6, url.address, &address.sin6_addr)
                let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
                return (result, errno)
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = url.port.bigEndian
            inet_pton(AF_INET, url.address, &address.sin_addr)
            let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            return (result, errno)
        }
        if result != 0 && failure == EINPROGRESS {
            do {
                _ = try wait(for: Int16(POLLOUT), until: deadline)
            } catch {
                throw WebSocketError("cannot connect to \(url.hostHeader): \(error.description)")
            }
            lock.withLock {
                var size = socklen_t(MemoryLayout<Int32>.size)
                if fd < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size) != 0 { failure = ECONNABORTED }
            }
            result = failure == 0 ? 0 : -1
        }
        guard result == 0 else { throw WebSocketError("cannot connect to \(url.hostHeader): \(String(cString: strerror(failure)))") }
        try handshake(deadline)
    }

    static func milliseconds(until deadline: Date) -> Int32 {
        Int32(max(0, min(Double(Int32.max), (deadline.timeIntervalSinceNow * 1000).rounded(.up))))
    }

    private func handshake(_ deadline: Date) throws(WebSocketError) {
        var generator = SystemRandomNumberGenerator()
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
        let request = "GET \(url.path) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try queue(Array(request.utf8))
        var head: [UInt8] = []
        let end: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            guard head.count < 16 * 1024 else { throw WebSocketError("the handshake's answer is over 16 KiB") }
            let chunk = try read(deadline: deadline)
            guard !chunk.isEmpty else { throw WebSocketError("the connection closed during the handshake") }
            let from = max(0, head.count - 3)
            head += chunk
            var i = from
            while i + 4 <= head.count {
                if head[i] == 13 && Array(head[i..<(i + 4)]) == end { headEnd = i; break }
                i += 1
            }
        }
        let text = String(decoding: head[..<headEnd!], as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let status = lines.first ?? ""
        guard status.hasPrefix("HTTP/1.1 101") else {
            throw WebSocketError("the handshake was refused: \(status.prefix(120))")
        }
        var accept: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == "sec-websocket-accept" {
                accept = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        guard accept == WebSocketClient.accept(for: key) else {
            throw WebSocketError("the handshake's Sec-WebSocket-Accept does not answer the key sent")
        }
        frames.append(head[(headEnd! + 4)...])
    }

    /// The `Sec-WebSocket-Accept` an RFC 6455 server answers `key` with.
    static func accept(for key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    /// Queues one text message, whole (several threads may send), and writes what the socket takes; never waits.
    /// Throws when the connection has ended, or ends it when the peer has left too much untaken.
    func send(text payload: [UInt8]) throws(WebSocketError) {
        try queue(WebSocketFrames.frame(opcode: 0x1, payload, mask: WebSocketFrames.randomMask()))
    }

    /// The next text message; pings are answered, pongs and dropped messages skipped (reading thread). Throws at
    /// the close, at a frame the RFC forbids, when the connection ends; with `deadline`, once it passes, whatever
    /// the peer is still sending.
    func receive(deadline: Date? = nil) throws(WebSocketError) -> [UInt8] {
        while true {
            if let deadline, Date() >= deadline { throw WebSocketError("no answer in time") }
            if let ended = lock.withLock({ self.ended }) { throw ended }
            if let event = try frames.next() {
                switch event {
                case .text(let bytes): return bytes
                // RFC 6455 §5.5.3 lets an endpoint answer only the latest ping: a peer that leaves bytes untaken
                // gets no pile of pongs.
                case .ping(let bytes): try queue(WebSocketFrames.frame(opcode: 0xA, bytes, mask: WebSocketFrames.randomMask()), onlyIfIdle: true)
                case .pong, .dropped: continue
                case .close:
                    try? queue(WebSocketFrames.frame(opcode: 0x8, [], mask: WebSocketFrames.randomMask()))
                    throw WebSocketError("the peer closed the connection")
                }
                continue
            }
            let chunk = try read(deadline: deadline)
            guard !chunk.isEmpty else { throw WebSocketError("the connection closed") }
            frames.append(chunk[...])
        }
    }

    /// What the socket has, once it is readable (reading thread).
    private func read(deadline: Date?) throws(WebSocketError) -> [UInt8] {
        while true {
            _ = try wait(for: Int16(POLLIN), until: deadline)
            // Not a wait: the socket is non-blocking. The lock keeps `close` from closing it meanwhile.
            let (n, failure) = lock.withLock { () -> (Int, Int32) in
                guard fd >= 0 else { return (-1, EBADF) }
                // ACK at once: a peer's two small writes would otherwise wait on this end's delayed ACK (Nagle).
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
                let n = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                return (n, errno)
            }
            if n >= 0 { return Array(readBuffer[0..<n]) }
            if failure == EINTR || failure == EAGAIN { continue }
            throw WebSocketError("reading the connection failed: \(String(cString: strerror(failure)))")
        }
    }

    /// The reading thread's one wait: until the socket is ready for `events`, writing queued bytes as it takes
    /// them meanwhile. Throws when the connection ends (shut down, a write failed, a frame not taken in time) or
    /// `deadline` passes, whatever else `poll` reports.
    private func wait(for events: Int16, until deadline: Date?) throws(WebSocketError) -> Int16 {
        while true {
            let (socket, wakeRead, writing, due) = try lock.locked { () throws(WebSocketError) in
                flush()
                if let ended { throw ended }
                polling = true
                return (fd, wake.read, outboxStart < outbox.count, self.due.first?.deadline)
            }
            var targets = [pollfd(fd: socket, events: events | (writing ? Int16(POLLOUT) : 0), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let limit = [deadline, due].compactMap { $0 }.min()
            let ready = poll(&targets, 2, limit.map(WebSocketClient.milliseconds(until:)) ?? -1)
            let failure = errno
            try lock.locked { () throws(WebSocketError) in
                polling = false
                if closeWanted { release() }
                if targets[1].revents != 0 && ended == nil { drain() }
                if let ended { throw ended }
            }
            if let deadline, Date() >= deadline { throw WebSocketError("no answer in time") }
            if ready < 0 && failure != EINTR { throw WebSocketError("waiting on the connection failed: \(String(cString: strerror(failure)))") }
            let revents = targets[0].revents
            if revents & (events | Int16(POLLERR) | Int16(POLLHUP)) != 0 { return revents }
            // Writable only, the wake pipe, or a frame's deadline: write, check, wait again.
        }
    }

    /// Queues `frame` and writes what the socket takes now; with `onlyIfIdle`, only when nothing is left untaken.
    private func queue(_ frame: [UInt8], onlyIfIdle: Bool = false) throws(WebSocketError) {
        try lock.locked { () throws(WebSocketError) in
            if let ended { throw ended }
            let backlog = outbox.count - outboxStart
            if onlyIfIdle && backlog > 0 { return }
            if backlog > 0 && backlog + frame.count > maxOutbox {
                end(WebSocketError("the peer left \(backlog) bytes untaken: it is not reading"))
                throw ended!
            }
            // Nothing left untaken (the usual case): the frame becomes the outbox, not a copy of it.
            if outbox.isEmpty { outbox = frame } else { outbox += frame }
            queued += frame.count
            due.append((queued, Date().addingTimeInterval(WebSocketClient.sendSeconds)))
            flush()
            if let ended { throw ended }
            // Bytes left for the reading thread, which may be in a poll that does not ask for POLLOUT: wake it.
            if outboxStart < outbox.count && polling && !woken {
                woken = true
                var byte: UInt8 = 1
                _ = Glibc.write(wake.write, &byte, 1)
            }
        }
    }

    /// Writes what the socket takes without waiting; ends the connection on a write's failure or when a frame's
    /// deadline has passed untaken (under the lock).
    private func flush() {
        guard ended == nil else { return }
        while outboxStart < outbox.count {
            let n = outbox[outboxStart...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n > 0 {
                outboxStart += n
                taken += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && errno == EAGAIN {
                break
            } else {
                return end(WebSocketError("sending failed: \(String(cString: strerror(errno)))"))
            }
        }
        if outboxStart == outbox.count {
            outbox = []
            outboxStart = 0
        } else if outboxStart > 64 * 1024 && outboxStart > outbox.count / 2 {
            outbox.removeFirst(outboxStart)
            outboxStart = 0
        }
        due.removeAll { $0.end <= taken }
        if let first = due.first, first.deadline <= Date() {
            end(WebSocketError("the peer took no frame for \(Int(WebSocketClient.sendSeconds)) s: it is not reading"))
        }
    }

    /// Ends the connection with `reason`, once: every wait wakes and every call throws it; the peer sees the
    /// close at once (under the lock).
    private func end(_ reason: WebSocketError) {
        guard ended == nil else { return }
        ended = reason
        outbox = []
        outboxStart = 0
        due = []
        if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        if wake.write >= 0 {
            var byte: UInt8 = 0
            _ = Glibc.write(wake.write, &byte, 1)
        }
    }

    /// Empties the wake pipe of a send's byte, so the next poll sleeps again (under the lock; never once the
    /// connection has ended, so `end`'s byte stays).
    private func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wake.read, &bytes, bytes.count) > 0 {}
        woken = false
    }

    /// Closes the descriptors, once (under the lock, or from `deinit`).
    private func release() {
        for descriptor in [fd, wake.read, wake.write] where descriptor >= 0 { Glibc.close(descriptor) }
        fd = -1
        wake = (-1, -1)
    }

    /// Ends the connection: every wait wakes at once and throws; the descriptors stay open until `close`.
    func shutdown() {
        lock.withLock { end(WebSocketError("the connection was shut down")) }
    }

    /// Ends the connection and closes its descriptors (once the reading thread is out of its wait); a send after
    /// it throws.
    func close() {
        lock.withLock {
            end(WebSocketError("the connection is closed"))
            closeWanted = true
            if !polling { release() }
        }
    }
}

extension NSLock {
    /// `withLock` for a body with a typed error, which Foundation's would rethrow as `any Error`.
    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

struct WebSocketError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A `ws://` URL on a loopback host: `127.0.0.0/8`, `localhost` (connected as 127.0.0.1) or `[::1]`, with a port.
struct WebSocketURL: Equatable, Sendable {
    /// The numeric address connected to.
    let address: String
    let hostHeader: String
    let port: UInt16
    let path: String

    /// At most 256 bytes of printable ASCII; `path` must satisfy `pathAllowed`.
    init?(_ text: String, pathAllowed: (String) -> Bool) {
        let bytes = Array(text.utf8)
        guard bytes.count <= 256, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f }), text.hasPrefix("ws://") else { return nil }
        let rest = text.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let authority = rest[..<slash], path = String(rest[slash...])
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        let digits = authority[authority.index(after: colon)...]
        guard (1...5).contains(digits.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let port = UInt16(digits), port > 0 else { return nil }
        let host = String(authority[..<colon]).lowercased()
        switch host {
        case "localhost": address = "127.0.0.1"
        case "[::1]": address = "::1"
        default:
            guard HostCheck.isLoopbackAddress(host) else { return nil }
            address = host
        }
        guard pathAllowed(path) else { return nil }
        hostHeader = host + ":" + String(port)
        self.port = port
        self.path = path
    }
}

/// RFC 6455 framing as a client reads it: bytes in, messages out, within bounds. A server's frame that is masked,
/// has a reserved bit, an unknown opcode, a control frame over 125 bytes or fragmented, a continuation with no
/// message, a new message inside one, or a length with the top bit set is a violation (the connection ends). A
/// message whose length passes `maxMessage` is read past without being kept, and reported as `.dropped`.
struct WebSocketFrames {
    enum Event: Equatable {
        case text([UInt8])
        case ping([UInt8])
        case pong
        case close
        /// A message over the bound, or a binary one (the DevTools protocol sends none): its bytes were dropped.
        case dropped(Int)
    }

    let maxMessage: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// The message being assembled from fragments: its opcode, and whether it is being dropped.
    private var message: (opcode: UInt8, bytes: [UInt8], dropping: Bool, length: Int)?
    /// Payload bytes of the current frame still to be skipped (a dropped message's).
    private var skipping = 0
    private var skippingFinal = false

    init(maxMessage: Int) { self.maxMessage = maxMessage }

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet framed (the bound's test: a dropped message is never held).
    var held: Int { buffer.count - start }

    /// The next complete event, nil when more bytes are needed.
    mutating func next() throws(WebSocketError) -> Event? {
        while true {
            if skipping > 0 {
                let n = min(skipping, buffer.count - start)
                start += n
                skipping -= n
                message?.length += n
                if skipping > 0 { return nil }
                if skippingFinal, let done = message {
                    message = nil
                    return .dropped(done.length)
                }
                continue
            }
            let available = buffer.count - start
            guard available >= 2 else { return nil }
            let first = buffer[start], second = buffer[start + 1]
            let fin = first & 0x80 != 0, opcode = first & 0x0F
            guard first & 0x70 == 0 else { throw WebSocketError("a frame with a reserved bit set") }
            guard second & 0x80 == 0 else { throw WebSocketError("a masked frame from the server") }
            var length = Int(second & 0x7F), header = 2
            if length == 126 {
                guard available >= 4 else { return nil }
                length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
                header = 4
            } else if length == 127 {
                guard available >= 10 else { return nil }
                guard buffer[start + 2] & 0x80 == 0 else { throw WebSocketError("a frame length with the top bit set") }
                var value: UInt64 = 0
                for i in 2..<10 { value = value << 8 | UInt64(buffer[start + i]) }
                guard value <= UInt64(Int32.max) else { throw WebSocketError("a frame of \(value) bytes") }
                length = Int(value)
                header = 10
            }
            switch opcode {
            case 0x8, 0x9, 0xA:
                guard fin, length <= 125 else { throw WebSocketError("a control frame fragmented or over 125 bytes") }
                guard available >= header + length else { return nil }
                let payload = Array(buffer[(start + header)..<(start + header + length)])
                start += header + length
                if opcode == 0x8 { return .close }
                if opcode == 0x9 { return .ping(payload) }
                return .pong
            case 0x0, 0x1, 0x2:
                if opcode == 0x0 {
                    guard message != nil else { throw WebSocketError("a continuation frame with no message") }
                } else {
                    guard message == nil else { throw WebSocketError("a new message inside a fragmented one") }
                }
                let current = message ?? (opcode, [], opcode == 0x2, 0)
                if current.dropping || current.length + length > maxMessage {
                    message = current
                    // Read past it: never hold more than the bound.
                    message!.dropping = true
                    message!.bytes = []
                    start += header
                    skipping = length
                    skippingFinal = fin
                    if length == 0 {
                        if fin, let done = message {
                            message = nil
                            return .dropped(done.length)
                        }
                    }
                    continue
                }
                guard available >= header + length else { return nil }
                message = current
                message!.bytes += buffer[(start + header)..<(start + header + length)]
                message!.length += length
                start += header + length
                if fin {
                    let done = message!
                    message = nil
                    return .text(done.bytes)
                }
            default:
                throw WebSocketError("a frame of unknown opcode \(opcode)")
            }
        }
    }

    /// One client frame: FIN, `opcode`, masked with `mask` (RFC 6455 §5.3: every client frame is).
    static func frame(opcode: UInt8, _ payload: [UInt8], mask: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        out.reserveCapacity(payload.count + 14)
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        out += mask
        let header = out.count
        out += payload
        // Masked in place, a word at a time where it can be: a relayed registration's reply is about 1.5 KB.
        out.withUnsafeMutableBytes { buffer in
            let body = UnsafeMutableRawBufferPointer(rebasing: buffer[header...])
            let word = (mask + mask).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            var i = 0
            while i + 8 <= body.count {
                body.storeBytes(of: body.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ word, toByteOffset: i, as: UInt64.self)
                i += 8
            }
            while i < body.count {
                body[i] ^= mask[i & 3]
                i += 1
            }
        }
        return out
    }

    /// RFC 6455 §5.3: an unpredictable key per frame, from `SecureRandom`'s pool (a system call per frame was one
    /// per relayed ceremony).
    static func randomMask() -> [UInt8] { SecureRandom.bytes(4) }
}

/// SHA-1 (FIPS 180-4), for the websocket handshake's `Sec-WebSocket-Accept` only: nothing secret depends on it.
enum SHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
        var data = message
        let bits = UInt64(message.count) * 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8((bits >> UInt64(shift)) & 0xFF)) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: data.count, by: 64) {
            for i in 0..<16 {
                w[i] = UInt32(data[chunk + 4 * i]) << 24 | UInt32(data[chunk + 4 * i + 1]) << 16 | UInt32(data[chunk + 4 * i + 2]) << 8 | UInt32(data[chunk + 4 * i + 3])
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A827999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1BBCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62C1D6)
                }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h[0] = h[0] &+ a; h[1] = h[1] &+ b; h[2] = h[2] &+ c; h[3] = h[3] &+ d; h[4] = h[4] &+ e
        }
        return h.flatMap { [UInt8($0 >> 24), UInt8(($0 >> 16) & 0xFF), UInt8(($0 >> 8) & 0xFF), UInt8($0 & 0xFF)] }
    }
}
