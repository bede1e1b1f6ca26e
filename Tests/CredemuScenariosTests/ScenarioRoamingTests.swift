import CredemuEngine
import CredemuTestSupport
import Vault
import Foundation
import WebAuthn
import XCTest
@testable import CredemuScenarios

/// Security keys and phones in scenarios: the references are read strictly, and a step that uses one runs through
/// the browser's sheet as the operations layer builds it.
final class ScenarioRoamingTests: XCTestCase {
    func scenario(accounts: String, devices: String = "{}", steps: String) -> String {
        #"{"format": "credemu-scenario", "version": 1, "name": "r", "title": "R", "accounts": \#(accounts), "devices": \#(devices), "steps": [\#(steps)]}"#
    }

    func testKeysPhonesAndSheetChoicesMustNameWhatTheScenarioDeclares() {
        let accounts = #"{"browser": {}, "key1": {"pack": "security-key"}}"#
        XCTAssertNoThrow(try Scenario(json: scenario(accounts: #"{"browser": {"authenticators": ["key1"]}, "key1": {"pack": "security-key"}}"#,
                                                     steps: #"{"do": "create", "attachment": "cross-platform", "use": "key1", "residentKey": "discouraged", "attestation": "direct"}"#)))
        let cases: [(String, String, String, String)] = [
            (#"{"browser": {"authenticators": ["key2"]}}"#, "{}", #"{"do": "get"}"#, "accounts.browser.authenticators names 'key2'"),
            (accounts, #"{"laptop": {"platform": "chrome-desktop", "providers": ["browser"], "phones": ["pixel"]}}"#, #"{"do": "get"}"#,
             "devices.laptop.phones names 'pixel'"),
            (accounts, "{}", #"{"do": "setting", "authenticators": ["nokey"]}"#, "steps[0].authenticators names 'nokey'"),
            (accounts, "{}", #"{"do": "create", "use": "key9"}"#, "steps[0].use 'key9'"),
            (accounts, "{}", #"{"do": "create", "use": "key1", "mediation": "conditional"}"#, "steps[0].use is a choice in the browser's sheet"),
            (accounts, "{}", #"{"do": "create", "attachment": "roaming"}"#, "steps[0].attachment must be"),
            (accounts, "{}", #"{"do": "create", "residentKey": "sometimes"}"#, "steps[0].residentKey must be"),
            (accounts, "{}", #"{"do": "create", "attestation": "full"}"#, "steps[0].attestation must be"),
            (accounts, "{}", #"{"do": "get", "use": 3}"#, "steps[0].use must be a string"),
        ]
        for (accounts, devices, step, fault) in cases {
            XCTAssertThrowsError(try Scenario(json: scenario(accounts: accounts, devices: devices, steps: step)), fault) { error in
                XCTAssertTrue("\(error)".contains(fault), "\(error) should name \(fault)")
            }
        }
    }

    func run(_ text: String, pack: String = "gpm") throws -> [Cell] {
        let registry = try PolicyRegistry(directory: providersDirectory)
        let policy = try XCTUnwrap(registry.all.first { $0.id == pack })
        let (vault, directory) = try makeTestVault()
        defer { _ = directory }
        return try ScenarioRunner(scenario: try Scenario(json: text), policy: policy, platform: .chromeDesktop, vault: vault, packs: registry.all).run()
    }

    /// A profile of a passkey provider plugged in as a key is refused by the sheet's one rule, in the step's cell.
    func testAPluggedInPasskeyProviderIsRefusedAsAKey() throws {
        let cells = try run(scenario(accounts: #"{"browser": {"authenticators": ["other"]}, "other": {"pack": "bitwarden"}}"#,
                                     steps: #"{"do": "create", "attachment": "cross-platform"}"#))
        XCTAssertEqual(cells[0].outcome, "error")
        XCTAssertTrue(cells[0].summary.contains("'other' is plugged in as a security key, but its pack 'bitwarden' is a passkey provider"), cells[0].summary)
    }

    /// A second factor registered on a key: BE=0 and packed with x5c, and the key's counter grows with each sign-in
    /// while the manager's passkey keeps 0.
    func testAKeysCounterGrowsAndItsAttestationIsPacked() throws {
        let accounts = #"{"browser": {"authenticators": ["key1"]}, "key1": {"pack": "security-key", "authenticator": {"protocol": "ctap2_1", "hasUserVerification": true, "isUserVerified": true}}}"#
        let cells = try run(scenario(accounts: accounts, steps: #"""
            {"do": "create", "as": "k", "attachment": "cross-platform", "residentKey": "discouraged", "attestation": "direct"},
            {"do": "get", "allow": ["k"]}, {"do": "get", "allow": ["k"]},
            {"do": "create", "as": "p"}, {"do": "get", "allow": ["p"]}
            """#))
        XCTAssertEqual(cells.map(\.provider), ["key1", "key1", "key1", nil, nil])
        XCTAssertTrue(cells[0].authenticator?.contains("BE=0 BS=0") == true && cells[0].authenticator?.contains("fmt packed with x5c") == true,
                      cells[0].authenticator ?? "none")
        XCTAssertEqual(cells[1].authenticator, "cross-platform · BE=0 BS=0 · counter 1")
        XCTAssertEqual(cells[2].authenticator, "cross-platform · BE=0 BS=0 · counter 2")
        XCTAssertNil(cells[4].authenticator, "the manager answered")
    }

    /// A phone reached from a desktop answers with its own provider, cross-platform over hybrid; a `user` step on
    /// the device queues its sheet's cancel, taken at once.
    func testAPhoneAnswersADesktopOverHybridAndTheDevicesSheetTakesItsCancel() throws {
        let text = scenario(accounts: #"{"desk": {}, "phone": {"pack": "gpm"}}"#,
                            devices: #"{"laptop": {"platform": "chrome-desktop", "providers": ["desk"]}, "pixel": {"platform": "android", "providers": ["phone"]}}"#,
                            steps: #"""
            {"do": "create", "on": "laptop", "as": "pk1", "attachment": "cross-platform", "use": "pixel"},
            {"do": "user", "on": "laptop", "decisions": ["cancel"]},
            {"do": "create", "on": "laptop", "attachment": "cross-platform"}
            """#)
        let cells = try run(text)
        XCTAssertEqual(cells[0].provider, "phone")
        XCTAssertTrue(cells[0].authenticator?.hasPrefix("cross-platform · transports hybrid") == true, cells[0].authenticator ?? "none")
        XCTAssertEqual(cells[0].vault, "+pk1@phone")
        XCTAssertEqual(cells[2].reason, "userCancelled")
        XCTAssertFalse(cells[2].summary.contains("settling"), "a cancel rejects at once")
    }
}
