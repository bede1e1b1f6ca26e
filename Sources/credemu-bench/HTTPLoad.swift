import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 keep-alive client over a POSIX socket: enough to drive `credemu serve` from several
/// threads without the cost of a general-purpose client distorting the figure.
final class HTTPConnection {
    private let fd: Int32
    private var buffer = [UInt8]()
    private var chunk = [UInt8](repeating: 0, count: 16384)

    init?(port: UInt16) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 {
            close(fd)
            return nil
        }
    }

    deinit { close(fd) }

    /// Sends one request and reads the whole response; returns (status, body). Kept lean (bytes, no string
    /// parsing) so the client takes little of the CPU it shares with the server.
    func request(_ method: String, _ path: String, body: [UInt8] = []) -> (Int, [UInt8])? {
        guard let (status, start, length) = exchange(method, path, body: body) else { return nil }
        let payload = Array(buffer[start..<start + length])
        consume(start + length)
        return (status, payload)
    }

    /// `request` for a caller that needs the status only: the body is skipped where it lies, not copied.
    func status(_ method: String, _ path: String, body: [UInt8] = []) -> Int? {
        guard let (status, start, length) = exchange(method, path, body: body) else { return nil }
        consume(start + length)
        return status
    }

    /// The request line and headers up to the body's length, by method and path: made once per connection.
    private var heads: [String: [UInt8]] = [:]

    /// Sends the request and reads until the whole response is in `buffer`: its status, and where its body is.
    private func exchange(_ method: String, _ path: String, body: [UInt8]) -> (status: Int, start: Int, length: Int)? {
        let key = method + " " + path
        let head = heads[key] ?? {
            let made = Array((key + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ").utf8)
            heads[key] = made
            return made
        }()
        out.removeAll(keepingCapacity: true)
        out += head
        out += String(body.count).utf8
        out += "\r\n\r\n".utf8
        out += body
        var sent = 0
        while sent < out.count {
            let n = out.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, 0) }
            if n <= 0 { return nil }
            sent += n
        }
        var headerEnd: Int?
        while headerEnd == nil {
            if let end = find([13, 10, 13, 10]) { headerEnd = end } else if !fill() { return nil }
        }
        let end = headerEnd!
        // "HTTP/1.1 200": the status is bytes 9..<12.
        let status = buffer.count >= 12 ? buffer[9..<12].reduce(0) { $0 * 10 + Int($1) - 48 } : 0
        let length = contentLength(upTo: end)
        let start = end + 4
        while buffer.count < start + length { if !fill() { return nil } }
        return (status, start, length)
    }

    /// What is sent, kept between requests.
    private var out = [UInt8]()

    /// Drops the first `count` bytes of `buffer` (a response read whole).
    private func consume(_ count: Int) {
        if count == buffer.count { buffer.removeAll(keepingCapacity: true) } else { buffer.removeFirst(count) }
    }

    /// The Content-Length header's value, found by bytes (case-insensitive name).
    private func contentLength(upTo end: Int) -> Int {
        let name = Array("content-length:".utf8)
        var i = 0
        while i + name.count < end {
            var match = true
            for j in 0..<name.count where (buffer[i + j] | 0x20) != name[j] && !(name[j] == 0x3A && buffer[i + j] == 0x3A) {
                match = false
                break
            }
            if match {
                var k = i + name.count
                while k < end && buffer[k] == 0x20 { k += 1 }
                var value = 0
                while k < end, (48...57).contains(buffer[k]) { value = value * 10 + Int(buffer[k]) - 48; k += 1 }
                return value
            }
            i += 1
        }
        return 0
    }

    private func fill() -> Bool {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        return buffer.withUnsafeBufferPointer { b -> Int? in
            var i = 0
            while i <= b.count - needle.count {
                if b[i] == needle[0] && b[i + 1] == needle[1] && b[i + 2] == needle[2] && b[i + 3] == needle[3] { return i }
                i += 1
            }
            return nil
        }
    }
}

/// `credemu serve` started by the bench on a fresh vault in a temporary directory, with a profile on the
/// reference pack and one registered credential for assertions; stopped (and the directory removed) on `stop`.
final class BenchServer {
    let port: UInt16
    /// Process start to a served `/health`, in milliseconds.
    let readyMilliseconds: Double
    private let process: Process
    private let directory: String
    private let assertionBody: [UInt8]

    /// Starts the server on a fresh vault with the bench's profile and credential, or, given `vault` (its path
    /// and key file), on that vault as it is.
    init(threads: Int, vault: (path: String, keyFile: String)? = nil) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("credemu").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchFailure("no credemu binary beside the bench at \(binary); build it with `swift build -c release`")
        }
        directory = NSTemporaryDirectory() + "credemu-http-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        let vaultArguments = vault.map { ["--vault", $0.path, "--key-file", $0.keyFile] } ?? ["--vault", directory + "/vault.db"]
        process.arguments = vaultArguments + ["serve", "--port", "0", "--port-file", directory + "/port", "--threads", "\(threads)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let started = DispatchTime.now().uptimeNanoseconds
        try process.run()
        var port: UInt16 = 0
        var ready: Double = .nan
        while Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 < 30 {
            if port == 0, let text = try? String(contentsOfFile: directory + "/port", encoding: .utf8), let p = UInt16(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                port = p
            }
            if port != 0, let connection = HTTPConnection(port: port), let (status, _) = connection.request("GET", "/health"), status == 200 {
                ready = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
                break
            }
            usleep(500)
        }
        self.port = port
        readyMilliseconds = ready
        guard port != 0, !ready.isNaN else {
            process.terminate()
            throw BenchFailure("the server did not start")
        }
        guard vault == nil else {
            assertionBody = []
            return
        }
        // A profile on the reference policy, as in-process, and one credential for the assertions.
        let setup = HTTPConnection(port: port)!
        _ = setup.request("POST", "/profiles", body: Array(#"{"name": "bench", "pack": "webauthn-spec"}"#.utf8))
        let registration = Array("""
            {"origin": "https://login.example.com", "options": \(Bench.creationOptions(algorithm: .es256, user: 0))}
            """.utf8)
        guard let (status, body) = setup.request("POST", "/profiles/bench/credentials/create", body: registration), status == 200,
              let id = try? JSONValueShim.id(body) else {
            process.terminate()
            throw BenchFailure("the first registration failed")
        }
        assertionBody = Array("""
            {"origin": "https://login.example.com", "options": {"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com",
             "allowCredentials": [{"type": "public-key", "id": "\(id)"}]}}
            """.utf8)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The server's peak resident set (VmHWM), in megabytes.
    var peakResidentMegabytes: Double? { ProcessMemory.peakResidentMegabytes(pid: process.processIdentifier) }

    private final class Tally: @unchecked Sendable {
        let lock = NSLock()
        var total = 0
        var failures = 0
        func add(_ count: Int, _ failed: Int) { lock.lock(); total += count; failures += failed; lock.unlock() }
    }

    /// Requests per second that `clients` keep-alive connections get answered 200 for about `seconds`.
    func load(_ path: String, method: String = "POST", seconds: Double, clients: Int,
              _ makeBody: @escaping @Sendable (Int, Int) -> [UInt8]) -> (rate: Double, failures: Int) {
        let tally = Tally()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let group = DispatchGroup()
        let begin = DispatchTime.now().uptimeNanoseconds
        let boundPort = port
        for client in 0..<clients {
            group.enter()
            Thread.detachNewThread {
                var count = 0
                var failed = 0
                if let connection = HTTPConnection(port: boundPort) {
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        guard let status = connection.status(method, path, body: makeBody(client, count + failed)) else { failed += 1; break }
                        if status == 200 { count += 1 } else { failed += 1 }
                    }
                }
                tally.add(count, failed)
                group.leave()
            }
        }
        group.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9
        return (Double(tally.total) / elapsed, tally.failures)
    }

    /// Registrations per second, each for a new user (`round` keeps users distinct across calls).
    ///
    /// The bodies are made before the clock starts, as the in-process figure's option texts are and as the virtual
    /// authenticator's figure sends one fixed expression: making one (a random challenge, base64url, interpolation)
    /// took 5-7 µs of the client's thread, inside a ceremony's 140 µs. A client that outruns them makes the rest as
    /// it goes.
    func registrations(seconds: Double, clients: Int, round: Int) -> (rate: Double, failures: Int) {
        @Sendable func body(_ client: Int, _ n: Int) -> [UInt8] {
            Array("""
                {"origin": "https://login.example.com", "options": \(Bench.creationOptions(algorithm: .es256, user: 10_000_000 * (client + 1) + 100_000 * round + n))}
                """.utf8)
        }
        let ahead = min(90_000, Int(seconds * 25_000) / clients + 1_000)
        let made = (0..<clients).map { client in (0..<ahead).map { body(client, $0) } }
        return load("/profiles/bench/credentials/create", seconds: seconds, clients: clients) { client, n in
            n < made[client].count ? made[client][n] : body(client, n)
        }
    }

    /// Assertions per second with the registered credential in the allow list.
    func assertions(seconds: Double, clients: Int) -> (rate: Double, failures: Int) {
        let body = assertionBody
        return load("/profiles/bench/credentials/get", seconds: seconds, clients: clients) { _, _ in body }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A process's memory as Linux reports it in `/proc/PID/status`.
enum ProcessMemory {
    static func peakResidentMegabytes(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kb / 1024
    }
}

extension Bench {
    /// HTTP figures: `credemu serve` from process start to a served request, then registrations and
    /// assertions per second from `clients` keep-alive connections on loopback.
    static func runHTTP(seconds: Double, clients: Int, inProcess: (Double, Double)) throws {
        let threads = Int(ProcessInfo.processInfo.environment["CREDEMU_BENCH_THREADS"] ?? "") ?? max(clients, 2)
        let server: BenchServer
        do { server = try BenchServer(threads: threads) } catch { print("HTTP: \(error)"); return }
        defer { server.stop() }
        if ProcessInfo.processInfo.environment["CREDEMU_BENCH_HEALTH"] != nil {
            let health = server.load("/health", method: "GET", seconds: seconds, clients: clients) { _, _ in [] }
            print("  /health requests/s: \(fmt(health.rate))")
        }
        // Three rounds each, median: one short run on a shared machine swings by more than the margin we look at.
        // As in-process, every registration is for a new user.
        let regRounds = [0, 1, 2].map { server.registrations(seconds: seconds, clients: clients, round: $0) }
        let asrtRounds = [0, 1, 2].map { _ in server.assertions(seconds: seconds, clients: clients) }
        let failures = (regRounds + asrtRounds).reduce(0) { $0 + $1.failures }
        if failures > 0 { print("  (\(failures) failed requests)") }
        let regs = regRounds.map(\.rate).sorted()[1]
        let asserts = asrtRounds.map(\.rate).sorted()[1]
        let ready = server.readyMilliseconds
        print("HTTP (ES256, \(clients) keep-alive clients on loopback, release build):")
        print("  ready (process start to a served /health): \(String(format: "%.1f", ready)) ms   goal < 100 ms: \(ready < 100 ? "met" : "NOT met")")
        print("  registrations/s: \(fmt(regs)) (in-process \(fmt(inProcess.0)), \(String(format: "%.0f", 100 * regs / inProcess.0))%)")
        print("  assertions/s:    \(fmt(asserts)) (in-process \(fmt(inProcess.1)), \(String(format: "%.0f", 100 * asserts / inProcess.1))%)")
        let met = regs >= inProcess.0 / 2 && asserts >= inProcess.1 / 2
        print("goal (HTTP): at least half the in-process throughput: " + (met ? "met" : "NOT met"))
    }
}

/// Reads the credential ID out of a registration response without pulling in more than needed.
enum JSONValueShim {
    static func id(_ body: [UInt8]) throws -> String {
        let text = String(decoding: body, as: UTF8.self)
        guard let range = text.range(of: "\"id\":\"") else { throw CocoaError(.coderReadCorrupt) }
        let rest = text[range.upperBound...]
        return String(rest.prefix(while: { $0 != "\"" }))
    }
}
