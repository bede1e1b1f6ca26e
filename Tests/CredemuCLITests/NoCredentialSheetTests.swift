import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuCLI

/// Chrome's sheet for a modal get with no credential anywhere (`modalGet.noCredential` sheetUntilDismissed): it
/// waits for the simulated user's dismissal or the timeout as Chromium clamps it, where credemu used to fail at once.
final class NoCredentialSheetTests: XCTestCase {
    let origin = "https://shop.example.com"

    func requestOptions(timeout: Int) -> String {
        #"{"challenge": "AAECAwQFBgcICQoLDA0ODw", "rpId": "example.com", "timeout": \#(timeout)}"#
    }

    func refusal(_ run: CLIRun) throws -> [String?] {
        XCTAssertEqual(run.status, .webAuthnError, run.output + run.errors)
        let e = try JSONValue.parse(run.output)["error"]
        return [e?["name"]?.stringValue, e?["reason"]?.stringValue]
    }

    func testTheSheetWaitsForTheTimeoutAsChromiumClampsIt() throws {
        let cli = CLIHarness()
        let started = Date()
        // 1 ms asked: Chromium's AdjustTimeout makes it 10 s.
        let run = cli.run(["get", "--origin", origin], input: requestOptions(timeout: 1))
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(try refusal(run), ["NotAllowedError", "timedOut"])
        XCTAssertTrue(try JSONValue.parse(run.output)["error"]?["message"]?.stringValue?.contains("timed out after 10000 ms") == true, run.output)
        XCTAssertTrue(elapsed >= 9.5 && elapsed < 30, "settled after \(elapsed) s, at the clamped 10 s")
    }

    func testTheUsersDismissalQueuedFirstGivesTheOldFailureAtOnce() throws {
        let cli = CLIHarness()
        XCTAssertEqual(cli.run(["user", "next", "cancel"]).status, .success)
        let started = Date()
        XCTAssertEqual(try refusal(cli.run(["get", "--origin", origin], input: requestOptions(timeout: 600_000))), ["NotAllowedError", "userCancelled"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "answered at once")
        // Any decision answers the sheet: `accept` with nothing to accept is the old NotAllowedError, noCredential.
        XCTAssertEqual(cli.run(["user", "next", "accept"]).status, .success)
        XCTAssertEqual(try refusal(cli.run(["get", "--origin", origin], input: requestOptions(timeout: 600_000))), ["NotAllowedError", "noCredential"])
    }

    /// Runs a get for `profile` on a thread of its own, sees it still waiting after a second, then dismisses the sheet.
    func assertWaitsUntilDismissed(_ cli: CLIHarness, profile: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let done = expectation(description: "the get answered")
        let result = LockedBox<CLIRun?>(nil)
        let started = Date()
        let words = ["--vault", cli.vault, "--profile", profile, "get", "--origin", origin], input = requestOptions(timeout: 600_000)
        nonisolated(unsafe) let fulfil = done
        Thread.detachNewThread {
            result.set(CLIHarness.run(words, input: input))
            fulfil.fulfill()
        }
        Thread.sleep(forTimeInterval: 1)
        XCTAssertNil(result.get(), "\(profile): still waiting on the sheet", file: file, line: line)
        XCTAssertEqual(cli.run(["--profile", profile, "user", "next", "cancel"]).status, .success, file: file, line: line)
        wait(for: [done], timeout: 20)
        XCTAssertEqual(try refusal(try XCTUnwrap(result.get())), ["NotAllowedError", "userCancelled"], profile, file: file, line: line)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "\(profile): ended by the dismissal, not the 10 minutes", file: file, line: line)
    }

    func testADismissalWhileTheSheetWaitsEndsItWithinAPoll() throws {
        let cli = CLIHarness()
        _ = cli.run(["profile", "show"])   // the default profile exists before the two runs share the vault
        try assertWaitsUntilDismissed(cli, profile: "default")
    }

    func testARequestChromeRefusesBeforeAnyProviderShowsNoSheet() throws {
        let cli = CLIHarness()
        XCTAssertEqual(cli.run(["profile", "create", "key", "--pack", "security-key"]).status, .success)
        let started = Date()
        // Blink's check of a get's extensions (GPM), and the browser's AppID check (a key): refused at once, no sheet.
        let credProps = #"{"challenge": "AAECAwQFBgcICQoLDA0ODw", "rpId": "example.com", "timeout": 600000, "extensions": {"credProps": true}}"#
        XCTAssertEqual(try refusal(cli.run(["get", "--origin", origin], input: credProps)), ["NotSupportedError", "invalidExtensionInput"])
        let appid = #"{"challenge": "AAECAwQFBgcICQoLDA0ODw", "rpId": "example.com", "timeout": 600000, "extensions": {"appid": "https://u2f.example.org/app-id.json"}}"#
        XCTAssertEqual(try refusal(cli.run(["--profile", "key", "get", "--origin", origin], input: appid)).first, "SecurityError")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "answered at once, not at the 10 minutes")
    }

    func testANativeAndroidAppStillFailsAtOnceAsAndroidxDoes() throws {
        let cli = CLIHarness()
        XCTAssertEqual(cli.run(["profile", "create", "droid", "--pack", "gpm", "--platform", "android"]).status, .success)
        let started = Date()
        let run = cli.run(["--profile", "droid", "get", "--origin", origin], input: requestOptions(timeout: 600_000))
        XCTAssertEqual(try refusal(run), ["NotAllowedError", "noCredential"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testWindowsHelloAndEdgeWaitOnChromesSheetWhereProtonPassAnExtensionFailsAtOnce() throws {
        let cli = CLIHarness()
        for (name, pack) in [("hello", "windows-hello"), ("edge", "edge"), ("proton", "proton-pass")] {
            XCTAssertEqual(cli.run(["profile", "create", name, "--pack", pack]).status, .success)
        }
        try assertWaitsUntilDismissed(cli, profile: "hello")
        try assertWaitsUntilDismissed(cli, profile: "edge")
        let started = Date()
        XCTAssertEqual(try refusal(cli.run(["--profile", "proton", "get", "--origin", origin], input: requestOptions(timeout: 600_000))),
                       ["NotAllowedError", "noCredential"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }
}
