import CredemuEngine
import Foundation

/// How much one scenario run may ask for, checked before anything runs, and how long it may take.
///
/// A run's cost is its step runs (each step's `times`, summed) times its columns, and each step run compares the
/// vault before and after, so a column's cost grows with the square of its creates: `maxWork` bounds the step runs
/// across columns, `maxSteps` the document, `seconds` the run whatever the machine.
public struct ScenarioLimits: Sendable {
    public var maxSteps: Int
    /// Step runs times columns.
    public var maxWork: Int
    public var seconds: TimeInterval

    public init(maxSteps: Int, maxWork: Int, seconds: TimeInterval) {
        self.maxSteps = maxSteps
        self.maxWork = maxWork
        self.seconds = seconds
    }

    /// `POST /scenarios/run`: a request any test or the console sends. The shipped scenarios across every pack make
    /// at most 200 step runs; 2,000 in one column (the costliest shape) take about 17 s on a release build.
    public static let server = ScenarioLimits(maxSteps: 100, maxWork: 2_000, seconds: 60)
    /// `credemu scenario run`: a file the user chose, in a process of its own, bounded still.
    public static let commandLine = ScenarioLimits(maxSteps: 1_000, maxWork: 20_000, seconds: 600)

    /// Refuses a run over the limits, naming the limit (`ScenarioTooLarge`).
    public func check(_ scenario: Scenario, columns: Int) throws(InvalidConfiguration) {
        guard scenario.steps.count <= maxSteps else {
            throw InvalidConfiguration(.scenarioTooLarge, "The scenario has \(scenario.steps.count) steps; a run takes at most \(maxSteps).")
        }
        let runs = scenario.steps.reduce(0) { $0 + $1.times }
        let (work, overflow) = runs.multipliedReportingOverflow(by: max(columns, 1))
        guard !overflow, work <= maxWork else {
            throw InvalidConfiguration(.scenarioTooLarge, "The scenario makes \(runs) step runs (each step's times, summed) across \(columns) columns, \(overflow ? "too many" : String(work)) in all; a run takes at most \(maxWork). Name fewer providers or repeat steps fewer times.")
        }
    }
}
