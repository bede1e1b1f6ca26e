import CredemuTestSupport
import Foundation
import XCTest
import CredemuEngine
@testable import CredemuScenarios

/// A scenario run is bounded before it starts (steps, step runs times columns) and ends between step runs when its
/// cancellation says so: its client gone, its deadline passed, the process stopping.
final class ScenarioLimitsTests: XCTestCase {
    func scenario(steps: Int, times: Int) throws -> Scenario {
        let step = #"{"do": "create", "times": \#(times)}"#
        return try Scenario(json: #"{"format": "credemu-scenario", "version": 1, "name": "x", "title": "x", "steps": [\#(Array(repeating: step, count: steps).joined(separator: ","))]}"#)
    }

    func columns(_ ids: String) throws -> [(any ProviderPolicy, Platform)] {
        try PolicyRegistry().select(ids, for: try scenario(steps: 1, times: 1))
    }

    func testARunOverTheStepOrWorkLimitIsRefusedBeforeAnyColumnRuns() throws {
        let limits = ScenarioLimits(maxSteps: 3, maxWork: 20, seconds: 60)
        let directory = TemporaryDirectory()
        for (steps, times, ids, fault) in [(4, 1, "gpm", "4 steps"), (2, 10, "gpm,bitwarden", "40 in all"), (1, 100, "gpm", "100 in all")] {
            XCTAssertThrowsError(try DivergenceMatrix.run(try scenario(steps: steps, times: times), providers: try columns(ids),
                                                          directory: directory.path, limits: limits)) { error in
                XCTAssertEqual((error as? InvalidConfiguration)?.kind, .scenarioTooLarge)
                XCTAssertTrue("\(error)".contains(fault), "\(error) should say \(fault)")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [], "no column's vault was made")
        XCTAssertNoThrow(try DivergenceMatrix.run(try scenario(steps: 2, times: 5), providers: try columns("gpm,bitwarden"),
                                                  directory: directory.path, limits: limits), "exactly at the limit")
    }

    func testTheServersLimitsAreWithinTheCommandLines() {
        let (server, cli) = (ScenarioLimits.server, ScenarioLimits.commandLine)
        XCTAssertLessThanOrEqual(server.maxSteps, cli.maxSteps)
        XCTAssertLessThanOrEqual(server.maxWork, cli.maxWork)
        XCTAssertLessThanOrEqual(server.seconds, cli.seconds)
    }

    /// The client goes after three step runs: the run stops before the fourth, across columns.
    func testARunWhoseClientGoesStopsBeforeItsNextStepRun() throws {
        let calls = Counter()
        let cancellation = Cancellation(clientGone: { calls.next() > 3 })
        XCTAssertThrowsError(try DivergenceMatrix.run(try scenario(steps: 2, times: 2), providers: try columns("gpm,bitwarden"),
                                                      directory: TemporaryDirectory().path, limits: .server, cancellation: cancellation)) { error in
            let stopped = error as? Cancellation.Stopped
            XCTAssertEqual(stopped?.reason, .clientGone)
            XCTAssertEqual(stopped?.completed, 3, "the whole first column and one step run of the second")
            XCTAssertEqual(stopped?.total, 8)
        }
        XCTAssertEqual(calls.value, 4, "asked before each step run, and no more")
    }

    func testTheStopSignalAndTheDeadlineEndARun() throws {
        let stopping = StopSignal()
        stopping.set()
        let runs: [(ScenarioLimits, Cancellation, Cancellation.Reason)] = [
            (.server, Cancellation(stopping: stopping), .stopping),
            (ScenarioLimits(maxSteps: 10, maxWork: 100, seconds: 0), .never, .deadline),
        ]
        for (limits, cancellation, reason) in runs {
            XCTAssertThrowsError(try DivergenceMatrix.run(try scenario(steps: 1, times: 3), providers: try columns("gpm"),
                                                          directory: TemporaryDirectory().path, limits: limits, cancellation: cancellation)) { error in
                XCTAssertEqual((error as? Cancellation.Stopped)?.reason, reason)
                XCTAssertEqual((error as? Cancellation.Stopped)?.completed, 0)
            }
        }
    }
}

/// Counts calls from any thread.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var count = 0

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
