import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
import CredemuEngine
import CredemuOperations
@testable import CredemuScenarios

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
            let matrix = try DivergenceMatrix.run(scenario, providers: try registry.select("all", for: scenario), directory: directory.path,
                                                  packs: registry.all, limits: .server, mover: Operations.scenarioMover)
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

    /// A `move` step with `keepSource`: both managers hold the passkey and each answers a sign-in with it by its own pack.
    func testAMoveStepThatKeepsTheSourceLeavesBothManagersSigningIn() throws {
        let registry = try PolicyRegistry()
        var text = try String(contentsOfFile: Self.scenariosDirectory + "/passkey-moved-between-managers.json", encoding: .utf8)
        text = text.replacingOccurrences(of: "\"to\": \"importer\",", with: "\"to\": \"importer\", \"keepSource\": true,")
        let scenario = try Scenario(json: text)
        let matrix = try DivergenceMatrix.run(scenario, providers: try registry.select("apple,windows-hello", for: scenario),
                                              directory: TemporaryDirectory().path, packs: registry.all, limits: .server,
                                              mover: Operations.scenarioMover)
        let move = scenario.steps.firstIndex { $0.label.contains("moves the site's credentials") }!
        XCTAssertTrue(matrix.cells[move].allSatisfy { $0.summary.contains("gpm keeping its copies") }, "\(matrix.cells[move].map(\.summary))")
        for step in [move + 1, move + 2] {
            XCTAssertEqual(matrix.cells[step].map(\.outcome), ["signedIn", "signedIn"], "\(scenario.steps[step].label): \(matrix.cells[step].map(\.summary))")
        }
    }

    func testDivergingRowsStandOutInEveryFormat() throws {
        let registry = try PolicyRegistry()
        let scenario = try Scenario.load(path: Self.scenariosDirectory + "/revocation-unknown-signal.json")
        let matrix = try DivergenceMatrix.run(scenario, providers: try registry.select("gpm,bitwarden,gpm-pre-m144", for: scenario),
                                              directory: TemporaryDirectory().path, limits: .server)
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

    /// An automatic upgrade that GPM makes silently with UP=0 UV=0 and Bitwarden with its sheet and UP=1 UV=1:
    /// the RP and the user see different things, so the row diverges, in every rendering.
    func testTheUpgradeRowDivergesBetweenGPMAndBitwardenInEveryFormat() throws {
        let registry = try PolicyRegistry(directory: providersDirectory)
        let scenario = try Scenario.load(path: Self.scenariosDirectory + "/upgrade-after-autofill.json")
        let matrix = try DivergenceMatrix.run(scenario, providers: try registry.select("gpm,bitwarden", for: scenario), directory: TemporaryDirectory().path, limits: .server)
        let row = try XCTUnwrap(scenario.steps.firstIndex { $0.label.hasPrefix("automatic upgrade") })
        let (gpm, bitwarden) = (matrix.cells[row][0], matrix.cells[row][1])
        XCTAssertEqual([gpm.outcome, gpm.vault], [bitwarden.outcome, bitwarden.vault], "both created a passkey")
        XCTAssertEqual(gpm.ui, "notice")
        XCTAssertEqual(bitwarden.ui, "sheet")
        XCTAssertEqual(gpm.flags, "UP=0 UV=0")
        XCTAssertEqual(bitwarden.flags, "UP=1 UV=1")
        XCTAssertTrue(matrix.diverges(row))
        let signIn = try XCTUnwrap(scenario.steps.firstIndex { $0.label.hasPrefix("sign in") })
        XCTAssertFalse(matrix.diverges(signIn), "both sign in with pk1, UP=1 UV=1, through a sheet")
        XCTAssertTrue(matrix.table.contains("≠ automatic upgrade"))
        XCTAssertTrue(matrix.markdown.contains("**≠ automatic upgrade (conditional create)**"))
        XCTAssertTrue(matrix.markdown.contains("UI: notice · UP=0 UV=0"))
        XCTAssertEqual(matrix.json["steps"]?.arrayValue?[row]["diverges"], .bool(true))
        XCTAssertEqual(matrix.json["steps"]?.arrayValue?[row]["cells"]?["gpm@chrome-desktop"]?["ui"], "notice")
        let html = matrix.html
        XCTAssertTrue(html.contains("<tr class=\"diverges\"><th scope=\"row\"><span class=\"mark\">≠</span> automatic upgrade (conditional create)</th>"), html)
        XCTAssertTrue(html.contains("<tr class=\"same\"><th scope=\"row\">sign in with a passkey</th>"))
        XCTAssertTrue(html.contains("<div class=\"observed\">UI: sheet · UP=1 UV=1</div>"))
        XCTAssertTrue(html.contains("1 of \(scenario.steps.count) steps diverge"))
    }

    /// A web page and an Android app never see the same error class: that alone is no divergence; two columns on
    /// platforms of one kind that render the same failure differently are.
    func testDialectsAreComparedOnlyAmongPlatformsOfOneKind() throws {
        let scenario = try Scenario.load(path: Self.scenariosDirectory + "/nudge-cancelled.json")
        func cell(_ dialect: String) -> Cell {
            Cell(outcome: "error", summary: "NotAllowedError: userCancelled", reason: "userCancelled", error: "NotAllowedError", dialect: dialect,
                 vault: "no change", ui: "sheet")
        }
        func column(_ platform: Platform) -> DivergenceMatrix.Column { .init(pack: "p", name: "P", version: "1", platform: platform) }
        let rows = scenario.steps.map { _ in [cell("NotAllowedError"), cell("CreateCredentialCancellationException"), cell("CreateCredentialUnknownException")] }
        let across = DivergenceMatrix(scenario: scenario, columns: [column(.chromeDesktop), column(.android)],
                                      cells: rows.map { Array($0.prefix(2)) }, findings: [[], []])
        XCTAssertFalse(across.diverges(0))
        let within = DivergenceMatrix(scenario: scenario, columns: [column(.chromeDesktop), column(.android), column(.android)],
                                      cells: rows, findings: [[], [], []])
        XCTAssertTrue(within.diverges(0))
    }

    func testMalformedScenariosAreRejectedWithTheirFault() {
        XCTAssertThrowsError(try Scenario(json: #"{"format": "credemu-scenario", "version": 1, "name": "x", "title": "x", "steps": [{"do": "dance"}]}"#)) {
            XCTAssertTrue("\($0)".contains("steps[0].do 'dance'"))
        }
        XCTAssertThrowsError(try Scenario(json: #"{"format": "other"}"#))
    }

    /// Accounts and devices are read as strictly as the rest: every reference must name something declared.
    func testMalformedDeviceScenariosNameTheirFault() {
        func scenario(_ accounts: String, _ devices: String, _ step: String) -> String {
            #"{"format": "credemu-scenario", "version": 1, "name": "x", "title": "x", "accounts": \#(accounts), "devices": \#(devices), "steps": [\#(step)]}"#
        }
        let good = (#"{"a": {}, "b": {"pack": "gpm"}}"#, #"{"phone": {"platform": "android", "providers": ["a", "b"], "preferred": "b"}}"#)
        XCTAssertNoThrow(try Scenario(json: scenario(good.0, good.1, #"{"do": "create", "on": "phone"}"#)))
        let cases: [(String, String, String, String)] = [
            (good.0, #"{"phone": {"platform": "android", "providers": ["z"]}}"#, #"{"do": "get"}"#, "names 'z'"),
            (good.0, #"{"phone": {"platform": "android", "providers": ["a"], "preferred": "b"}}"#, #"{"do": "get"}"#, "preferred"),
            (good.0, #"{"phone": {"providers": ["a"]}}"#, #"{"do": "get"}"#, "platform"),
            (good.0, #"{"phone": {"platform": "windows", "providers": ["a"]}}"#, #"{"do": "get"}"#, "platform"),
            (good.0, good.1, #"{"do": "get", "on": "tablet"}"#, "steps[0].on"),
            (good.0, good.1, #"{"do": "autofill", "account": "c"}"#, "steps[0].account"),
            (good.0, good.1, #"{"do": "savePassword", "on": "phone"}"#, "unknown member \"on\""),
            (good.0, good.1, #"{"do": "get", "on": "phone", "account": "a"}"#, "cannot both"),
            (good.0, good.1, #"{"do": "setting", "on": "phone", "automaticPasskeyUpgrades": false}"#, "automaticPasskeyUpgrades"),
            (#"{"a": {"platform": "ios"}}"#, good.1, #"{"do": "get"}"#, "account setting"),
            (#"{"a/b": {}}"#, "{}", #"{"do": "get"}"#, "profile name"),
        ]
        for (accounts, devices, step, fault) in cases {
            XCTAssertThrowsError(try Scenario(json: scenario(accounts, devices, step)), fault) { error in
                XCTAssertEqual((error as? InvalidConfiguration)?.kind, .scenario)
                XCTAssertTrue("\(error)".contains(fault), "\(error) should name \(fault)")
            }
        }
        XCTAssertThrowsError(try Scenario(json: #"{"format": "credemu-scenario", "version": 1, "name": "x", "title": "x", "devices": {"p": {"platform": "android", "providers": ["a"]}}, "steps": [{"do": "get"}]}"#),
                             "devices need accounts")
    }
}
