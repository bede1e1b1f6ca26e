import CredemuEngine
import CredemuTestSupport
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// Profile rules live once, in the operations layer, for the CLI and the server alike.
final class ProfileOperationsTests: XCTestCase {
    func makeOperations() throws -> (Operations, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        return (try Operations(vault: vault, registry: try PolicyRegistry()), directory)
    }

    func testProfileNamesAreShortSafeWordsOnly() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        for bad in ["", ".", "..", "a/b", "a b", "ä", String(repeating: "x", count: 65), "x\u{0}"] {
            XCTAssertThrowsError(try ops.createProfile(bad, settings: [], allowPackPath: true), bad) { error in
                XCTAssertEqual((error as? OperationError)?.code, .invalidInput)
            }
        }
        XCTAssertEqual(try ops.createProfile("alice-1.test_x", settings: [], allowPackPath: true).name, "alice-1.test_x")
    }

    func testAPlatformThePackDoesNotModelIsRefusedNotMapped() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        XCTAssertThrowsError(try ops.createProfile("a", settings: [("pack", "apple"), ("platform", "android")], allowPackPath: true)) { error in
            XCTAssertEqual((error as? OperationError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try ops.profile("a"), "nothing was saved")
        let ios = try ops.createProfile("i", settings: [("pack", "apple"), ("platform", "ios")], allowPackPath: true)
        XCTAssertEqual(ios.platform, .ios)
        XCTAssertThrowsError(try ops.engine("i", platform: "chrome-android"))
        XCTAssertThrowsError(try ops.engine("i", platform: "windows"))
        let moved = try ops.createProfile("m", settings: [("pack", "apple")], allowPackPath: true)
        XCTAssertTrue(try ops.policy(for: moved).platforms.contains(moved.platform), "a pack without a platform takes the pack's default")
    }

    func testPackPathIsOnlyForTrustedFrontEnds() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        XCTAssertThrowsError(try ops.createProfile("p", settings: [("packPath", "/etc/passwd")], allowPackPath: false)) { error in
            XCTAssertEqual((error as? OperationError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try ops.updateProfile("default", settings: [("packPath", "/etc/passwd")], allowPackPath: false))
    }

    func testClockChangesAreRangeCheckedAndLogged() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.setClock("2026-11-29T10:00:00Z", profile: "default")
        _ = try ops.advanceClock("6m", profile: "default")
        XCTAssertThrowsError(try ops.advanceClock(seconds: .infinity, profile: "default"))
        XCTAssertThrowsError(try ops.advanceClock(seconds: -1, profile: "default"))
        XCTAssertThrowsError(try ops.advanceClock(seconds: 1e300, profile: "default"))
        XCTAssertEqual(Timestamp.format(ops.clock.now()), "2026-11-29T10:06:00Z")
        let logged = try ops.events("default", kind: "clock").map { $0["outcome"]?.stringValue }
        XCTAssertEqual(logged, ["set", "advanced"])
        _ = try ops.systemClock(profile: "default")
        XCTAssertFalse(ops.clock.isVirtual)
    }

    func testHoldTimeoutsAreWholeMillisecondsInRange() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        for bad in [1e300, -1e300, 0, 1.5, .nan, 120_001] {
            XCTAssertThrowsError(try ops.armHold("default", timeoutMillis: bad), "\(bad)")
        }
        XCTAssertEqual(try ops.armHold("default", timeoutMillis: 120_000)["timeoutMs"], .number(120_000))
    }

    func testAPageMayNotSpeakForAnotherOrigin() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.savePassword("default", origin: "https://a.example", username: "u", password: "p")
        XCTAssertThrowsError(try ops.autofill("default", origin: "https://a.example", username: nil, submit: false, restrictedTo: "https://b.example")) { error in
            XCTAssertEqual((error as? OperationError)?.name, .web(.securityError))
        }
        XCTAssertThrowsError(try ops.autofill("default", origin: nil, username: nil, submit: false, restrictedTo: "https://b.example"),
                             "b has no password of its own")
        XCTAssertEqual(try ops.autofill("default", origin: nil, username: nil, submit: false, restrictedTo: "https://a.example")["password"], "p")
    }
}
