import CredemuEngine
import CredemuTestSupport
import Foundation
import Shipped
import WebAuthn
import XCTest
@testable import CredemuServer

/// One version: the repository's VERSION file (which the Makefile names the .deb and the archive by) is what
/// `credemu --version` prints and `/health` reports.
final class VersionTests: XCTestCase {
    static let versionFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("VERSION").path

    func theVersion() throws -> String {
        let text = try String(contentsOfFile: Self.versionFile, encoding: .utf8)
        XCTAssertTrue(text.hasSuffix("\n") && !text.dropLast().contains("\n"), "VERSION is one line")
        return text.trimmingCharacters(in: .newlines)
    }

    func testVersionFlagPrintsTheVersionFile() throws {
        let version = try theVersion()
        XCTAssertNotNil(version.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+$"#, options: .regularExpression), "a dotted version: \(version)")
        let run = CLIHarness.run(["--version"])
        XCTAssertEqual(run.status, .success)
        // The version, then the commit built from in parentheses when the Makefile wrote it (`make commit-stamp`).
        XCTAssertNotNil(run.output.range(of: "^" + NSRegularExpression.escapedPattern(for: version) + #"( \([0-9a-f]{7,40}(-dirty)?\))?\n$"#,
                                         options: .regularExpression), run.output)
        XCTAssertEqual(run.output, CredemuVersion.description + "\n")
        XCTAssertEqual(run.errors, "")
        XCTAssertEqual(CLIHarness.run(["--vault", "/nonexistent/v.db", "--version"]).output, run.output, "no vault is opened")
    }

    func testTheChangelogLeadsWithTheVersion() throws {
        let changelog = URL(fileURLWithPath: Self.versionFile).deletingLastPathComponent().appendingPathComponent("CHANGELOG.md").path
        let text = try String(contentsOfFile: changelog, encoding: .utf8)
        let first = text.split(separator: "\n").first { $0.hasPrefix("## ") }
        XCTAssertEqual(first?.dropFirst(3).split(separator: " ").first.map(String.init), try theVersion(),
                       "CHANGELOG.md's newest entry is the VERSION file's")
    }

    func testHealthReportsTheVersion() throws {
        let (vault, directory) = try makeTestVault()
        _ = directory
        let api = try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init())
        defer { vault.close() }
        let response = api.handle(HTTPRequest(method: "GET", path: "/health", query: [:], headers: ["host": "127.0.0.1:8765"], body: [],
                                              bodyTooLarge: false))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try JSONValue.parse(response.body)["version"], .string(try theVersion()))
        XCTAssertEqual(try JSONValue.parse(response.body)["commit"], CredemuVersion.commit.map(JSONValue.string) ?? .null)
    }
}
