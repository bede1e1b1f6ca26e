import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuCLI

/// `credemu vault rename` (issue 24.2): the user's own edit of a passkey's names, and its refusals, which leave the
/// vault as it was.
final class VaultRenameTests: XCTestCase {
    let origin = "https://shop.example.com"

    func json(_ run: CLIRun, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        XCTAssertEqual(run.status, .success, run.output + run.errors, file: file, line: line)
        return try JSONValue.parse(run.output)
    }

    func testARenameSetsTheNamesAndMarksThePasskeyEditedByTheUser() throws {
        let cli = CLIHarness()
        let id = try XCTUnwrap(try json(cli.run(["create", "--origin", origin], input: creationOptionsJSON()))["id"]?.stringValue)
        XCTAssertNil(try json(cli.run(["vault", "show", id]))["editedByUser"], "not edited yet")
        let renamed = try json(cli.run(["vault", "rename", id, "--name", "work alice", "--display-name", "Alice at work"]))
        XCTAssertEqual(renamed["userName"], "work alice")
        XCTAssertEqual(renamed["displayName"], "Alice at work")
        XCTAssertEqual(renamed["editedByUser"], true)
        // One option alone keeps the other name.
        let again = try json(cli.run(["vault", "rename", id, "--display-name", "Alice"]))
        XCTAssertEqual(again["userName"], "work alice")
        XCTAssertEqual(again["displayName"], "Alice")
        let events = try json(cli.run(["events", "--kind", "vault"]))
        XCTAssertEqual(events.arrayValue?.compactMap { $0["outcome"]?.stringValue }.filter { $0 == "renamed" }.count, 2, "\(events)")
    }

    func testBadNamesUnknownIDsAndAnotherProfilesPasskeyAreRefusedAndTheVaultIsUnchanged() throws {
        let cli = CLIHarness()
        let id = try XCTUnwrap(try json(cli.run(["create", "--origin", origin], input: creationOptionsJSON()))["id"]?.stringValue)
        XCTAssertEqual(cli.run(["profile", "create", "other", "--pack", "gpm"]).status, .success)
        let before = cli.run(["vault", "export", "--include-secrets"]).output
        // Bad input is a usage error naming what is wrong (the CLI's contract for invalid input); a passkey not found a
        // vault error with its JSON.
        for (words, status, says) in [
            (["vault", "rename", id], ExitStatus.usage, "needs --name, --display-name or both"),
            (["vault", "rename", id, "--name", ""], .usage, "userName must not be empty"),
            (["vault", "rename", id, "--name", String(repeating: "a", count: 1025)], .usage, "userName must be at most 1024 bytes"),
            (["vault", "rename", id, "--name", "a\u{7}b"], .usage, "userName must not hold a control character"),
            (["vault", "rename", id, "--display-name", String(repeating: "é", count: 513)], .usage, "displayName must be at most 1024 bytes"),
            (["vault", "rename", "not+base64", "--name", "x"], .usage, "is not a base64url credential ID"),
            (["vault", "rename", "AAAAAAAAAAAAAAAAAAAAAA", "--name", "x"], .vaultError, "No passkey AAAAAAAAAAAAAAAAAAAAAA"),
            (["--profile", "other", "vault", "rename", id, "--name", "x"], .vaultError, "No passkey \(id) in profile other"),
        ] {
            let run = cli.run(words)
            XCTAssertEqual(run.status, status, "\(words)")
            XCTAssertTrue(run.errors.contains(says), "\(words): \(run.errors)")
            if status == .vaultError { XCTAssertEqual(try JSONValue.parse(run.output)["error"]?["code"], "notFound", "\(words)") }
        }
        XCTAssertEqual(cli.run(["vault", "export", "--include-secrets"]).output, before, "nothing changed")
    }
}
