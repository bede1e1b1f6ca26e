import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// `authenticatorSelection.authenticatorAttachment` as each pack decides (`authenticator.attachment`,
/// `authenticator.otherAttachment`).
final class AttachmentTests: XCTestCase {
    func create(_ scenario: ProviderScenario, attachment: String?) throws -> RegistrationResponse {
        var options = try scenario.creationOptions(conditional: false)
        options.authenticatorAttachment = attachment
        return try scenario.engine().create(options, caller: try Caller(origin: scenario.origin))
    }

    func testACrossPlatformCreateIsNotOfferedToAPlatformProvider() throws {
        for pack in ["gpm", "apple", "webauthn-spec"] {
            let scenario = try ProviderScenario(pack: pack)
            let failure = scenario.failure { try self.create(scenario, attachment: "cross-platform") }
            XCTAssertEqual(failure?.error.name, .notAllowedError, pack)
            XCTAssertEqual(failure?.reason, .attachmentNotOffered, pack)
            XCTAssertEqual(try scenario.passkeys().count, 0, "\(pack): nothing was created")
            XCTAssertEqual(try create(scenario, attachment: "platform").authenticatorAttachment, "platform", pack)
            XCTAssertEqual(try create(scenario, attachment: "something-new").authenticatorAttachment, "platform",
                           "\(pack): an unknown value is ignored, as WebIDL's DOMString-typed member is")
        }
    }

    func testAnExtensionProviderAnswersEitherAttachment() throws {
        for pack in ["bitwarden", "1password", "keepassxc", "generic-third-party"] {
            let scenario = try ProviderScenario(pack: pack)
            let response = try create(scenario, attachment: "cross-platform")
            XCTAssertEqual(response.authenticatorAttachment, "platform", "\(pack) answers, and reports its own attachment")
        }
    }

    func testTheAttachmentKnobsAreCitedWithTheirSources() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        _ = scenario.failure { try self.create(scenario, attachment: "cross-platform") }
        let event = try XCTUnwrap(try scenario.events("create").last)
        XCTAssertEqual(event.reason, "attachmentNotOffered")
        XCTAssertTrue(event.detail["attachment"]?.stringValue?.contains("make_credential_request_handler.cc") ?? false, "\(event.detail)")
    }
}
