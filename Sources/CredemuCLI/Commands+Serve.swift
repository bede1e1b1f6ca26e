import CredemuEngine
import CredemuOperations
import CredemuServer
import Dispatch
import Foundation
import Vault
import WebAuthn

extension Context {
    /// `credemu serve`: the JSON API and the browser shim until SIGTERM or SIGINT.
    func serve(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["host", "port", "port-file", "token", "allow-origin", "allow-host", "threads", "max-body"])
        try args.noMorePositionals(after: 0)
        let host = args.value("host") ?? "127.0.0.1"
        guard let port = UInt16(args.value("port") ?? "8765") else { throw UsageError("--port takes 0 to 65535.") }
        guard let threads = Int(args.value("threads") ?? "4"), (1...64).contains(threads) else { throw UsageError("--threads takes 1 to 64.") }
        guard let maxBody = Int(args.value("max-body") ?? "262144"), maxBody >= 1024 else { throw UsageError("--max-body takes bytes, at least 1024.") }
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
        terminal.write("credemu is serving \(vaultPath) (profile 'default': GPM on Chrome desktop). Console: \(console) ; try: curl \(url)/profiles/default/capabilities ; browser pages load \(url)/shim.js ; API: \(url)/openapi.json ; Ctrl-C stops.\n")
        termination.wait()
        ops.endWaits()
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
