import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// A create's event records the flags its authenticator data carried, modal and automatic alike (issue 25: the
/// console read "?" for UV of every modal registration).
final class CreateEventFlagsTests: XCTestCase {
    func flags(_ event: EventRecord) -> [String: Bool] {
        var out: [String: Bool] = [:]
        for (key, value) in event.detail["authenticatorFlags"]?.objectValue ?? [] { out[key] = value.boolValue }
        return out
    }

    func testAModalCreateRecordsTheFlagsItSent() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        let response = try scenario.modalCreate()
        let sent = AuthenticatorData.Flags(rawValue: response.authenticatorData[32])
        let event = try XCTUnwrap(scenario.events("create").last)
        XCTAssertEqual(flags(event), ["UP": true, "UV": sent.contains(.userVerified), "BE": true, "BS": true])
        XCTAssertTrue(sent.contains(.userVerified), "GPM reports UV in a modal create")
    }

    func testAnAutomaticUpgradeRecordsUPAndUVUnset() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        try scenario.savePassword()
        try scenario.autofillAndSignIn()
        _ = try scenario.conditionalCreate()
        let event = try XCTUnwrap(scenario.events("create").last)
        XCTAssertEqual(flags(event), ["UP": false, "UV": false, "BE": true, "BS": true])
    }
}
