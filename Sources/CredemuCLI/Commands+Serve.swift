import CredemuEngine
import CredemuOperations
import CredemuServer
import Dispatch
import Foundation
import Vault
import WebAuthn

extension Commands {
    static let serve: Command = Command(
        "serve", summary: "The HTTP JSON API (OpenAPI at /openapi.json) and the browser shim (/shim.js).",
        discussion: """
        Serves the JSON API over the vault, the OpenAPI document at /openapi.json and the browser shim at
        /shim.js?profile=NAME. Prints the URL on the first line. --token requires 'Authorization: Bearer T' on every route
        but /shim.js, /health and /openapi.json; a --host that is not a loopback address needs it. Requests must name a
        loopback host (or the --host address, or an --allow-host name). A page (a request with an Origin header) is
        served only when its origin is given with --allow-origin ("*" for any) or later with POST /origins (from a caller
        that is not a page), and then acts only for that origin. POST and PATCH take Content-Type: application/json only.
        The console's 'Try the demo shop' (POST /demo) starts a demo relying party on the next port (on a loopback address,
        without --token). SIGTERM or SIGINT stops it cleanly.
        """,
        options: [
            Option("host", .text("ADDRESS"), "The address to listen on (default 127.0.0.1)."),
            Option("port", .text("N"), "The port (default 8765; 0 picks a free one)."),
            Option("port-file", .text("F"), "Write the port to F once listening."),
            Option("token", .text("T"), "The bearer token the API requires (printable ASCII without spaces)."),
            Option("allow-origin", .text("O1,O2"), "The origins whose pages may call the API (\"*\" for any)."),
            Option("allow-host", .text("NAME,..."), "Host names requests may name besides loopback and --host."),
            Option("threads", .text("N"), "Worker threads, 1 to 64 (default 4)."),
            Option("max-body", .text("BYTES"), "The largest request body, at least 1024 (default \(APIServer.Configuration.defaultMaxBodyBytes))."),
        ]
    ) { context, args in try context.serve(args) }
}

extension Context {
    /// `credemu serve`: the JSON API and the browser shim until SIGTERM or SIGINT.
    func serve(_ args: Arguments) throws -> ExitStatus {
        let host = args.value("host") ?? "127.0.0.1"
        guard let port = UInt16(args.value("port") ?? "8765") else { throw UsageError("--port takes 0 to 65535.") }
        guard let threads = Int(args.value("threads") ?? "4"), (1...64).contains(threads) else { throw UsageError("--threads takes 1 to 64.") }
        guard let maxBody = Int(args.value("max-body") ?? String(APIServer.Configuration.defaultMaxBodyBytes)), maxBody >= 1024 else { throw UsageError("--max-body takes bytes, at least 1024.") }
        func list(_ name: String) -> Set<String> {
            Set((args.value(name) ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        if let token = args.value("token"), token.isEmpty || !token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) {
            throw UsageError("--token takes printable ASCII without spaces.")
        }
        let configuration = APIServer.Configuration(token: args.value("token"), allowedOrigins: list("allow-origin"),
                                                    allowedHosts: list("allow-host"), maxBodyBytes: maxBody)
        do {
            try configuration.check(bindAddress: host)
        } catch {
            throw UsageError(error.description)
        }
        guard let termination = Termination() else {
            throw UsageError("Cannot catch SIGTERM and SIGINT: pipe() failed (\(String(cString: strerror(errno)))); the server would not stop cleanly.")
        }
        // The server owns the vault while it runs: other processes use its API.
        let ops = try operations(exclusive: true)
        let vault = ops.vault
        let api: APIServer
        do {
            api = try APIServer(operations: ops, configuration: configuration, bindAddress: host)
        } catch {
            vault.close()
            throw error
        }
        let server = HTTPServer(maxBodyBytes: maxBody, mayBlock: { api.mayBlock($0) }) { request in api.handle(request) }
        let bound: UInt16
        do {
            bound = try server.start(host: host, port: port, threads: threads)
        } catch {
            vault.close()
            throw UsageError("\(error)")
        }
        let url = "http://\(host):\(bound)"
        // The console's demo shop (POST /demo), on the next port when the API's is fixed: the same origin every run.
        api.offerDemo(host: host, apiPort: bound, preferredPort: port == 0 || bound == UInt16.max ? 0 : bound + 1)
        if let file = args.value("port-file") {
            do {
                try "\(bound)\n".write(toFile: file, atomically: true, encoding: .utf8)
            } catch {
                server.stop()
                vault.close()
                throw UsageError("Cannot write the port file \(file).")
            }
        }
        terminal.write("\(url)\n")
        // The console reads the token from the fragment, which the browser never sends.
        let console = url + "/" + (configuration.token.map { "#token=" + $0 } ?? "")
        terminal.write("credemu is serving \(vaultPath) (profile 'default': GPM on Chrome desktop). Console: \(console) (its 'Try the demo shop' opens a shop to sign in to) ; try: curl \(url)/profiles/default/capabilities ; browser pages load \(url)/shim.js ; API: \(url)/openapi.json ; Ctrl-C stops.\n")
        termination.wait()
        api.closeChannels()
        ops.endWaits()
        api.stopDemo()
        server.stop()
        vault.close()
        terminal.writeError("credemu: stopped; the vault is closed.\n")
        return .success
    }
}

/// SIGTERM and SIGINT, caught from before the server is reachable: a signal that arrives as soon as the port
/// file exists still stops the server cleanly.
///
/// A plain handler writes a byte to a pipe that `wait` reads: from the moment it is installed, no signal is
/// lost. (A dispatch signal source needs SIG_IGN first and registers asynchronously, so a signal in between was
/// discarded and a harness's SIGTERM right after start-up went unanswered.)
final class Termination: @unchecked Sendable {
    /// The pipe's write end, for the handler (which can capture nothing).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    private let readEnd: Int32

    /// Nil when no pipe can be made (no file descriptors left): `wait` could then never block.
    init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        readEnd = fds[0]
        Termination.writeEnd = fds[1]
        for sig in [SIGTERM, SIGINT] {
            signal(sig) { _ in
                var byte: UInt8 = 1
                _ = write(Termination.writeEnd, &byte, 1)
            }
        }
    }

    /// Blocks until one of the signals arrives.
    func wait() {
        var byte: UInt8 = 0
        while true {
            let n = read(readEnd, &byte, 1)
            if n == 1 || (n < 0 && errno != EINTR) || n == 0 { break }
        }
    }
}
