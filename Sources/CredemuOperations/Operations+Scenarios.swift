import CredemuEngine
import Foundation
import Vault
import WebAuthn

extension Operations {
    /// The most provider columns one run may ask for (each is a fresh vault and the whole scenario).
    public static let scenarioColumnLimit = 32

    /// Runs a scenario (the `scenarios/` format, given as JSON) across `providers` (`all`, or `ID[@platform],...`)
    /// and returns its divergence matrix. Each provider plays in a fresh temporary vault, never this one.
    public func runScenario(_ scenario: JSONValue, providers: String?) throws(OperationError) -> JSONValue {
        let parsed: Scenario
        let columns: [(any ProviderPolicy, Platform)]
        do {
            parsed = try Scenario(json: scenario.serialized(), origin: "body.scenario")
            columns = try registry.select(providers ?? "all", for: parsed)
        } catch {
            throw .configuration(error)
        }
        guard columns.count <= Operations.scenarioColumnLimit else {
            throw .invalidInput("body.providers names \(columns.count) columns; at most \(Operations.scenarioColumnLimit) may run at once.")
        }
        let directory = NSTemporaryDirectory() + "credemu-scenario-" + UUID().uuidString
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            return try DivergenceMatrix.run(parsed, providers: columns, directory: directory, packs: registry.all).json
        } catch let error as VaultError {
            throw .vault(error)
        } catch {
            throw OperationError.internalError("The scenario could not be run: \(error)")
        }
    }
}
