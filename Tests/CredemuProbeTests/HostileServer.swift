@testable import CredemuProbe
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server on loopback that reads each request's head and answers with whatever `answer` writes, on a
/// thread of its own; a write the client no longer reads ends that connection.
final class HostileServer: @unchecked Sendable {
    /// Writes the answer through `send`, which returns false once the client has gone.
    typealias Answer = @Sendable (_ send: (ArraySlice<UInt8>) -> Bool) -> Void

    let port: UInt16
    private let listener: Int32
    private let answer: Answer
    private let done = DispatchSemaphore(value: 0)

    init(_ answer: @escaping Answer) {
        self.answer = answer
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(listener, $0, length) }
        }
        listen(listener, 16)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        self.listener = listener
        Thread { [self] in serve() }.start()
    }

    /// Stops accepting and waits (at most 10 s) for the thread to end.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        _ = done.wait(timeout: .now() + 10)
    }

    var url: HTTPURL { try! HTTPURL("http://127.0.0.1:\(port)/probe") }

    private func serve() {
        defer { done.signal() }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            readRequest(client)
            answer { bytes in
                var sent = bytes.startIndex
                while sent < bytes.endIndex {
                    let n = bytes[sent...].withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard n > 0 else { return false }
                    sent += n
                }
                return true
            }
            close(client)
        }
    }

    /// The request's head and its Content-Length's worth of body.
    private func readRequest(_ fd: Int32) {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = data.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
                let head = String(decoding: data[..<end], as: UTF8.self).lowercased()
                let length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if data.count - end >= length { return }
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            data += chunk[0..<n]
        }
    }
}

extension HostileServer {
    /// Writes `text` whole.
    static func text(_ text: String) -> Answer {
        { send in _ = send(ArraySlice(text.utf8)) }
    }

    /// `head`, then `byte` every `interval` for as long as the client reads (at most `limit` bytes).
    static func trickle(_ head: String, interval: TimeInterval, limit: Int = 600) -> Answer {
        { send in
            guard send(ArraySlice(head.utf8)) else { return }
            for _ in 0..<limit {
                Thread.sleep(forTimeInterval: interval)
                guard send([UInt8(ascii: "x")]) else { return }
            }
        }
    }

    /// `head`, then `piece` again and again until `total` bytes are out or the client stops reading.
    static func flood(_ head: String, _ piece: String, total: Int) -> Answer {
        { send in
            guard send(ArraySlice(head.utf8)) else { return }
            let block = Array(String(repeating: piece, count: max(1, 65536 / max(1, piece.utf8.count))).utf8)
            var sent = 0
            while sent < total {
                guard send(block[...]) else { return }
                sent += block.count
            }
        }
    }
}
