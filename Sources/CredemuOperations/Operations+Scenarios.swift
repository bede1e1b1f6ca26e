import CredemuEngine
import CredemuScenarios
import Foundation
import Vault
import WebAuthn

extension Operations {
    /// The most provider columns one run may ask for (each is a fresh vault and the whole scenario).
    public static let scenarioColumnLimit = 32
    /// Scenario runs at once: each keeps a core busy, and the machine must still answer the rest.
    public static let maxConcurrentScenarioRuns = 2

    /// Runs a scenario (the `scenarios/` format, given as JSON) across `providers` (`all`, or `ID[@platform],...`)
    /// and returns its divergence matrix. Each provider plays in a fresh temporary vault, never this one.
    ///
    /// Bounded by `ScenarioLimits.server` (refused before it runs) and `maxConcurrentScenarioRuns` (refused as
    /// `ScenarioRunsBusy`); it stops between step runs at its deadline, when its client goes, or when this layer stops.
    public func runScenario(_ scenario: JSONValue, providers: String?,
                            clientGone: @escaping @Sendable () -> Bool = { false }) throws(OperationError) -> JSONValue {
        let parsed: Scenario
        let columns: [(any ProviderPolicy, Platform)]
        do {
            parsed = try Scenario(json: scenario.serialized(), origin: "body.scenario")
            columns = try registry.select(providers ?? "all", for: parsed)
            try ScenarioLimits.server.check(parsed, columns: columns.count)
        } catch {
            throw .configuration(error)
        }
        guard columns.count <= Operations.scenarioColumnLimit else {
            throw .invalidInput("body.providers names \(columns.count) columns; at most \(Operations.scenarioColumnLimit) may run at once.")
        }
        try beginScenarioRun()
        defer { endScenarioRun() }
        let directory = NSTemporaryDirectory() + "credemu-scenario-" + UUID().uuidString
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            return try DivergenceMatrix.run(parsed, providers: columns, directory: directory, packs: registry.all, limits: .server,
                                            cancellation: cancellation(clientGone: clientGone), mover: Operations.scenarioMover).json
        } catch let error as Cancellation.Stopped {
            throw .stopped(error, what: "scenario run")
        } catch let error as InvalidConfiguration {
            throw .configuration(error)
        } catch let error as VaultError {
            throw .vault(error)
        } catch {
            throw OperationError.internalError("The scenario could not be run: \(error)")
        }
    }

    /// Takes one of the scenario runs' slots, or refuses: the server is stopping, or runs as many as it may.
    private func beginScenarioRun() throws(OperationError) {
        guard !stopping.isSet else { throw OperationError(.unavailable, .serverStopping, "The server is stopping; it runs no more scenarios.") }
        scenarioRunsLock.lock()
        defer { scenarioRunsLock.unlock() }
        guard scenarioRuns < Operations.maxConcurrentScenarioRuns else {
            var busy = OperationError(.unavailable, .scenarioRunsBusy,
                                      "\(Operations.maxConcurrentScenarioRuns) scenario runs are going on already; try again when one has finished.")
            busy.retryAfterSeconds = 1
            throw busy
        }
        scenarioRuns += 1
    }

    private func endScenarioRun() {
        scenarioRunsLock.lock()
        scenarioRuns -= 1
        scenarioRunsLock.unlock()
    }
}
