import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// `credemu-bench worker`: credemu's figures one round at a time, for `bench/side_by_side.py`, which interleaves
/// them with the peers' rounds so that the machine's noise falls on every peer alike.
///
/// Reads lines `FIGURE SECONDS` from standard input and answers each with `FIGURE RATE` (per second); `quit`
/// ends it. Figures (ES256 throughout):
/// - `raw-keygen-sign`, `raw-sign`: OpenSSL's own cost, the floor (the same calls the engine makes);
/// - `create`, `get`: in-process on one thread, a persisting, encrypted vault (a new user per registration;
///   assertions with an allow list);
/// - `http-create`, `http-get`: `credemu serve` from `--clients N` keep-alive connections (default 4);
///   `http1-create`, `http1-get`: from one connection, one ceremony at a time;
/// - `http-ready`: the server's start to its first served request, in milliseconds (no SECONDS).
enum BenchWorker {
    static func run(arguments: [String]) throws {
        var clients = 4
        var args = arguments[...]
        while let a = args.popFirst() {
            if a == "--clients", let n = args.popFirst().flatMap({ Int($0) }), n > 0 { clients = n }
        }
        try Bench.withBenchVault { _, engine in try serve(engine: engine, clients: clients) }
    }

    /// One answer line, written at once: the orchestrator waits for it.
    static func answer(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func serve(engine: Engine, clients: Int) throws {
        let caller = try Caller(origin: "https://login.example.com")
        let message = [UInt8](repeating: 0x5A, count: 37 + 32)
        let key = try SigningKeys.generate(.es256)
        let request = try Bench.assertionRequest(engine, caller: caller)
        // The RP writes the options; credemu parses them. The texts (a new user each) are made before the clock starts,
        // and made again for the next users before a round that could use the last of them: a run past the first
        // batch re-registered its users (a replacing create, not the new user's the figure names).
        var texts: [String] = [], first = 1  // texts[i] is user first + i
        var n = 0
        func textsAhead() {
            guard n + 50_000 >= first + texts.count else { return }
            first = n + 1
            texts = (first..<first + 100_000).map { Bench.creationOptions(algorithm: .es256, user: $0) }
        }
        textsAhead()
        var server: BenchServer?
        defer { server?.stop() }
        var httpRound = 0
        func http() throws -> BenchServer {
            if let server { return server }
            let started = try BenchServer(threads: max(clients, 2))
            server = started
            return started
        }
        sync()
        while let line = readLine() {
            let parts = line.split(separator: " ")
            guard let figure = parts.first.map(String.init) else { continue }
            if figure == "quit" { break }
            let seconds = parts.count > 1 ? Double(parts[1]) ?? 0.2 : 0.2
            let rate: Double
            switch figure {
            case "raw-keygen-sign":
                rate = try Bench.measure(seconds: seconds) { _ = try SigningKeys.generate(.es256).sign(message) }.perSecond
            case "raw-sign":
                rate = try Bench.measure(seconds: seconds) { _ = try key.sign(message) }.perSecond
            case "create":
                textsAhead()
                rate = try Bench.measure(seconds: seconds) {
                    n += 1
                    _ = try engine.create(try CreationOptions(json: texts[(n - first) % texts.count]), caller: caller)
                }.perSecond
            case "get":
                rate = try Bench.measure(seconds: seconds) { _ = try engine.get(request, caller: caller) }.perSecond
            case "http-create", "http1-create":
                httpRound += 1
                let result = try http().registrations(seconds: seconds, clients: figure == "http-create" ? clients : 1, round: httpRound)
                rate = result.failures > 0 ? -1 : result.rate
            case "http-get", "http1-get":
                let result = try http().assertions(seconds: seconds, clients: figure == "http-get" ? clients : 1)
                rate = result.failures > 0 ? -1 : result.rate
            case "http-ready":
                rate = try http().readyMilliseconds
            default:
                answer("\(figure) unknown")
                continue
            }
            answer("\(figure) \(rate)")
        }
    }
}
