import CredemuEngine
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
        let providers = try selectProviders(args.value("providers") ?? "all", scenario: scenario)
        let directory = NSTemporaryDirectory() + "credemu-scenario-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let matrix = try DivergenceMatrix.run(scenario, providers: providers, directory: directory)
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

    /// "all" (every pack on its default platform, or the scenario's), or "gpm,apple@ios,webauthn-spec".
    private func selectProviders(_ text: String, scenario: Scenario) throws -> [(any ProviderPolicy, Platform)] {
        let registry = try registry()
        func defaultPlatform(_ policy: any ProviderPolicy) -> Platform {
            scenario.platforms[policy.id] ?? (policy as? PolicyPack)?.defaultPlatform ?? .chromeDesktop
        }
        if text == "all" { return registry.all.map { ($0, defaultPlatform($0)) } }
        var out: [(any ProviderPolicy, Platform)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "@").map(String.init)
            guard let policy = registry.all.first(where: { $0.id == parts[0] }) else {
                throw UsageError("No pack '\(parts[0])'; the packs are \(registry.all.map(\.id).joined(separator: ", ")).")
            }
            var platform = defaultPlatform(policy)
            if parts.count > 1 {
                guard let p = Platform(rawValue: parts[1]) else { throw UsageError("'\(parts[1])' is not a platform.") }
                platform = p
            }
            out.append((policy, platform))
        }
        return out
    }

    /// `credemu findings`: what the RP's requests did against the seeds' guidance.
    func findingsCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [])
        try args.noMorePositionals(after: 0)
        let vault = try openVault()
        defer { vault.close() }
        printJSON(.array(try Finding.list(vault).map(\.json)))
        return .success
    }
}
