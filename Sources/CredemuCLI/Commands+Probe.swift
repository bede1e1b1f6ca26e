import CredemuEngine
import CredemuOperations
import CredemuProbe
import Foundation
import Vault

extension Context {
    /// `credemu probe URL [--adapter FILE] [--origin O] [--providers ...] [--format table|json|html] [--out F] [--log VAULT]`.
    func probeCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["adapter", "origin", "providers", "format", "out", "log"])
        guard args.positionals.count == 1 else {
            throw UsageError("Usage: credemu probe URL [--adapter FILE] [--origin ORIGIN] [--providers all|every|ID[@platform],...] [--format table|json|html] [--out FILE] [--log VAULT]")
        }
        let format = args.value("format") ?? "table"
        guard ["table", "json", "html"].contains(format) else { throw UsageError("--format takes table, json or html, not '\(format)'.") }
        let base: HTTPURL
        let adapter: ProbeAdapter
        do {
            base = try HTTPURL(args.positionals[0])
            adapter = try args.value("adapter").map { (path) throws(ProbeError) in try ProbeAdapter.load(path: path) } ?? .conformance
        } catch {
            throw UsageError(error.message)
        }
        let providers = try Prober.select(args.value("providers") ?? "all", from: try self.registry())
        let logPath = args.value("log") ?? ".credemu/probe.db"
        let vault = try Vault.open(path: logPath, key: .keyFile(path: Vault.defaultKeyFile(forVault: logPath)))
        defer { vault.close() }
        let registry = try registry()
        let ops: Operations
        do {
            ops = try Operations(vault: vault, registry: registry)
        } catch {
            throw OperationFailureOutput(failure: error)
        }
        let report: ProbeReport
        do {
            report = try Prober(base: base, adapter: adapter, origin: args.value("origin") ?? base.origin, operations: ops).run(providers)
        } catch {
            terminal.writeError("credemu: \(error.message)\n")
            return error.kind == .vault ? .vaultError : .usage
        }
        let text = format == "json" ? report.json.pretty() : format == "html" ? report.html : report.table
        if let out = args.value("out") {
            guard (try? text.write(toFile: out, atomically: true, encoding: .utf8)) != nil else { throw UsageError("Cannot write \(out).") }
            if format != "table" { terminal.write(report.table) }
        } else {
            terminal.write(text)
        }
        return report.failed ? .webAuthnError : .success
    }
}
