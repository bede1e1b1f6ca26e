import Foundation
import XCTest
@testable import CredemuCLI

/// A command line the declarations do not accept exits 2 with a message on standard error, nothing on standard
/// output (docs/cli.md, "The CLI contract"), and never reaches the vault.
final class UsageRefusalTests: XCTestCase {
    func assertRefused(_ words: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        let cli = CLIHarness()
        let run = cli.run(words, input: "{}")
        XCTAssertEqual(run.status, .usage, "\(words)", file: file, line: line)
        XCTAssertEqual(run.errors, "credemu: \(message)\nRun 'credemu --help' for usage.\n", "\(words)", file: file, line: line)
        XCTAssertEqual(run.output, "", "\(words)", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: cli.vault), "\(words) opened the vault", file: file, line: line)
    }

    func testUnknownOptionsAreRefused() {
        assertRefused(["get", "--origin", "https://a.test", "--bogus"], "Unknown option --bogus.")
        assertRefused(["password", "list", "--domain", "a.test"], "Unknown option --domain.")
        assertRefused(["vault", "list", "--include-secrets"], "Unknown option --include-secrets.")
        assertRefused(["--bogus", "vault", "list"], "Unknown global option --bogus.")
    }

    func testAnOptionGivenTwiceIsRefusedNotSilentlyOverwritten() {
        assertRefused(["serve", "--allow-origin", "https://a.test", "--allow-origin", "https://b.test"],
                      "--allow-origin is given twice; give one comma-separated list.")
        assertRefused(["get", "--origin", "https://a.test", "--origin=https://b.test"], "--origin is given twice.")
        assertRefused(["--vault", "a.db", "--vault", "b.db", "vault", "list"], "--vault is given twice.")
    }

    func testMissingValuesAndValuesOnFlagsAreRefused() {
        assertRefused(["create", "--origin"], "--origin needs a value.")
        assertRefused(["--vault"], "--vault needs a value.")
        assertRefused(["autofill", "--origin", "https://a.test", "--submit=yes"], "--submit takes no value.")
    }

    func testValuesOutsideAnOptionsListAreRefused() {
        assertRefused(["create", "--origin", "https://a.test", "--counter", "sometimes"], "--counter takes zero or increment, not 'sometimes'.")
        assertRefused(["capabilities", "--platform", "windows"],
                      "--platform takes chrome-desktop, chrome-android, chrome-windows, android, safari, firefox, ios or macos, not 'windows'.")
        assertRefused(["scenario", "run", "s.json", "--format", "pdf"], "--format takes table, markdown, json or html, not 'pdf'.")
        assertRefused(["signal", "bogus", "--origin", "https://a.test"], "signal takes unknown, accepted or details as KIND, not 'bogus'.")
        assertRefused(["profile", "set", "default", "--relatedOrigins", "{not json"], "--relatedOrigins takes JSON.")
    }

    func testAnAllowedOriginNoBrowserSendsIsRefused() {
        for unsent in ["https://a.test:443", "http://localhost:8000/", "HTTPS://A.TEST"] {
            assertRefused(["serve", "--allow-origin", "http://localhost:8000," + unsent],
                          "--allow-origin \(unsent) is not an origin a browser sends: give scheme://host[:port] in lower case, "
                          + "with no path and no default port (https://example.com, not https://example.com:443).")
        }
    }

    func testMissingAndExtraWordsAreRefused() {
        assertRefused(["offer"], "--origin is required.")
        assertRefused(["password", "save", "--origin", "https://a.test"], "--username is required.")
        assertRefused(["vault", "show"], "vault show needs a credential ID (base64url).")
        assertRefused(["vault", "list", "extra"], "Unexpected argument 'extra'.")
        assertRefused(["user", "next"], "user next needs a decision: accept, cancel, timeout, pick:CREDENTIAL_ID[@ACCOUNT] or use:NAME.")
        assertRefused(["signal", "--origin", "https://a.test"], "signal needs a kind: unknown, accepted or details.")
    }

    func testUnknownCommandsAndSubcommandsAreRefused() {
        assertRefused(["frobnicate"], "Unknown command 'frobnicate'.")
        assertRefused(["vault"], "vault needs a subcommand: list, show, remove, rename, attestation-root, import, export or move.")
        assertRefused(["vault", "frob"], "Unknown vault subcommand 'frob': list, show, remove, rename, attestation-root, import, export or move.")
        assertRefused(["clock", "5"], "Unknown clock subcommand '5': show, set, advance or system.")
    }

    func testNoCommandPrintsTheHelpOnStandardErrorAndExits2() {
        let run = CLIHarness.run([])
        XCTAssertEqual(run.status, .usage)
        XCTAssertEqual(run.output, "")
        XCTAssertEqual(run.errors, "credemu: no command given.\n\n" + Commands.root.help([]))
    }

    func testHelpAnywhereAfterTheCommandPrintsItsHelp() {
        let run = CLIHarness.run(["vault", "export", "--bogus", "--help"])
        XCTAssertEqual(run.status, .success)
        XCTAssertTrue(run.output.hasPrefix("Usage: credemu [GLOBAL OPTIONS] vault export [--include-secrets] [--format fixture|playwright|webdriver|cxf]"), run.output)
    }
}
