import CredemuEngine
import CredemuServer
import Dispatch
import Foundation
import Vault
import WebAuthn

extension Context {
    /// `credemu serve`: the JSON API and the browser shim until SIGTERM or SIGINT.
    func serve(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["host", "port", "port-file", "token", "allow-origin", "threads", "max-body"])
        try args.noMorePositionals(after: 0)
        let host = args.value("host") ?? "127.0.0.1"
        guard let port = UInt16(args.value("port") ?? "8765") else { throw UsageError("--port takes 0 to 65535.") }
        guard let threads = Int(args.value("threads") ?? "4"), (1...64).contains(threads) else { throw UsageError("--threads takes 1 to 64.") }
        guard let maxBody = Int(args.value("max-body") ?? "262144"), maxBody >= 1024 else { throw UsageError("--max-body takes bytes, at least 1024.") }
        let origins = Set((args.value("allow-origin") ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty })
        // The server owns the vault while it runs: other processes use its API.
        let vault = try openVault(exclusive: true)
        let api = try APIServer(vault: vault, registry: try registry(),
                                configuration: .init(token: args.value("token"), allowedOrigins: origins, maxBodyBytes: maxBody))
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
        terminal.write("credemu is serving \(vaultPath) (profile 'default': GPM on Chrome desktop). Try: curl \(url)/profiles/default/capabilities ; browser pages load \(url)/shim.js ; API: \(url)/openapi.json ; Ctrl-C stops.\n")
        Serve.waitForTermination()
        server.stop()
        vault.close()
        terminal.writeError("credemu: stopped; the vault is closed.\n")
        return .success
    }
}

enum Serve {
    /// Blocks until SIGTERM or SIGINT arrives.
    static func waitForTermination() {
        let done = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            sources.append(source)
        }
        done.wait()
        sources.forEach { $0.cancel() }
    }
}
