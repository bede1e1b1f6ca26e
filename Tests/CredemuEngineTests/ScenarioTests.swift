import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Every shipped scenario across every pack gives the matrix checked in under scenarios/expected/, so a pack
/// or engine change that alters behaviour shows up as a diff.
final class ScenarioTests: XCTestCase {
    static let scenariosDirectory = URL(fileURLWithPath: providersDirectory).deletingLastPathComponent().appendingPathComponent("scenarios").path

    func scenarios() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.scenariosDirectory).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 13)
        return names
    }

    func testEveryShippedScenarioMatchesItsExpectedMatrix() throws {
        let registry = try PolicyRegistry()
        for name in try scenarios() {
            let scenario = try Scenario.load(path: Self.scenariosDirectory + "/" + name)
            let directory = TemporaryDirectory()
            let matrix = try DivergenceMatrix.run(scenario, providers: try registry.select("all", for: scenario), directory: directory.path)
            let expectedPath = Self.scenariosDirectory + "/expected/" + name
            let expected = try String(contentsOfFile: expectedPath, encoding: .utf8)
            let actual = matrix.json.pretty()
            if actual != expected {
                let out = NSTemporaryDirectory() + "actual-" + name
                try? actual.write(toFile: out, atomically: true, encoding: .utf8)
                XCTFail("\(name) diverges from \(expectedPath); the actual matrix is in \(out) (diff them)")
            }
            for (row, step) in scenario.steps.enumerated() {
                for (column, cell) in zip(matrix.columns, matrix.cells[row]) {
                    XCTAssertNil(cell.unexpected, "\(name) step '\(step.label)' on \(column.header)")
                }
            }
        }
    }

    func testDivergingRowsStandOutInEveryFormat() throws {
        let registry = try PolicyRegistry()
        let scenario = try Scenario.load(path: Self.scenariosDirectory + "/revocation-unknown-signal.json")
        let matrix = try DivergenceMatrix.run(scenario, providers: try registry.select("gpm,bitwarden,gpm-pre-m144", for: scenario),
                                              directory: TemporaryDirectory().path)
        let signalRow = scenario.steps.firstIndex { $0.label.hasPrefix("signalUnknownCredential") }!
        XCTAssertTrue(matrix.diverges(signalRow))
        XCTAssertFalse(matrix.diverges(0))
        XCTAssertEqual(matrix.cells[signalRow].map(\.vault), ["pk1 hidden", "no change", "pk1 deleted"])
        XCTAssertTrue(matrix.cells[signalRow][0].knob?.contains("signals.unknownCredential = hide (chromium") == true, "cells cite knob and source")
        XCTAssertTrue(matrix.table.contains("≠ signalUnknownCredential"))
        XCTAssertTrue(matrix.markdown.contains("**≠ signalUnknownCredential(pk1)**"))
        XCTAssertTrue(matrix.html.contains("<tr class=\"diverges\">"))
        XCTAssertEqual(matrix.json["steps"]?.arrayValue?[signalRow]["diverges"], .bool(true))
    }

    func testMalformedScenariosAreRejectedWithTheirFault() {
        XCTAssertThrowsError(try Scenario(json: #"{"format": "credemu-scenario", "version": 1, "name": "x", "title": "x", "steps": [{"do": "dance"}]}"#)) {
            XCTAssertTrue("\($0)".contains("steps[0].do 'dance'"))
        }
        XCTAssertThrowsError(try Scenario(json: #"{"format": "other"}"#))
    }
}
