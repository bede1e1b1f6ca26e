import CredemuEngine
import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Context {
    /// `credemu scenario run FILE [--providers all|a,b@platform] [--format table|markdown|json|html] [--out F]`.
    func scenarioCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["providers", "format", "out"])
        guard args.positionals.first == "run", args.positionals.count == 2 else {
            throw UsageError("Usage: credemu scenario run FILE [--providers all|ID[@platform],...] [--format table|markdown|json|html] [--out FILE]")
        }
        let scenario = try Scenario.load(path: args.positionals[1])
        let packs = try registry()
        let providers = try packs.select(args.value("providers") ?? "all", for: scenario)
        let directory = NSTemporaryDirectory() + "credemu-scenario-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let matrix: DivergenceMatrix
        do {
            matrix = try DivergenceMatrix.run(scenario, providers: providers, directory: directory, packs: packs.all, limits: .commandLine)
        } catch let stop as Cancellation.Stopped {
            throw OperationError.stopped(stop, what: "scenario run")
        }
        let text: String
        switch args.value("format") ?? "table" {
        case "table": text = matrix.table
        case "markdown": text = matrix.markdown
        case "json": text = matrix.json.pretty()
        case "html": text = matrix.html
        case let other: throw UsageError("--format takes table, markdown, json or html, not '\(other)'.")
        }
        if let out = args.value("out") {
            do {
                try text.write(toFile: out, atomically: true, encoding: .utf8)
            } catch {
                throw UsageError("Cannot write \(out).")
            }
        } else {
            terminal.write(text)
        }
        return .success
    }

    /// `credemu findings`: what the RP's requests did against the seeds' guidance.
    func findingsCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [])
        try args.noMorePositionals(after: 0)
        printJSON(.array(try perform { (ops) throws(OperationError) in try ops.findings(profileName) }))
        return .success
    }
}
