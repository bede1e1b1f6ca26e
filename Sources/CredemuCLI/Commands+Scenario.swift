import CredemuEngine
import CredemuScenarios
import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Commands {
    static let scenario: Command = Command(
        "scenario", summary: "Run a scenario across providers: the divergence matrix (table, markdown, json, html).",
        subcommands: [
            Command("run", summary: "Run a scenario once per provider and print the divergence matrix.",
                    discussion: """
                    Runs a scenario (format: scenarios/README.md) once per provider, each in a fresh vault with a virtual
                    clock, and prints the divergence matrix: rows are steps, columns providers, cells the outcome in the RP's
                    terms and what changed in the vault; rows that differ are marked, every cell names the pack knob and its
                    source, and the RP integration findings follow.
                    """,
                    positionals: [Positional("FILE", "a scenario file")],
                    options: [Option("providers", .text("all|ID[@platform],..."), "The columns (default: all)."),
                              Option("format", .oneOf(["table", "markdown", "json", "html"]), "The matrix's form (default: table)."),
                              Option("out", .text("FILE"), "Write the matrix to FILE instead of standard output.")]
            ) { context, args in try context.runScenario(args) },
        ])
}

extension Context {
    /// `credemu scenario run FILE`: the divergence matrix.
    func runScenario(_ args: Arguments) throws -> ExitStatus {
        let scenario = try Scenario.load(path: args.argument("FILE") ?? "")
        let packs = try registry()
        let providers = try packs.select(args.value("providers") ?? "all", for: scenario)
        let directory = NSTemporaryDirectory() + "credemu-scenario-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let matrix: DivergenceMatrix
        do {
            matrix = try DivergenceMatrix.run(scenario, providers: providers, directory: directory, packs: packs.all, limits: .commandLine,
                                               mover: Operations.scenarioMover)
        } catch let stop as Cancellation.Stopped {
            throw OperationError.stopped(stop, what: "scenario run")
        }
        let text: String
        switch args.value("format") {
        case "markdown": text = matrix.markdown
        case "json": text = matrix.json.pretty()
        case "html": text = matrix.html
        default: text = matrix.table
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
}
