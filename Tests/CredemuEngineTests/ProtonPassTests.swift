import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Proton Pass as its open sources say: the extension's page script (WebClients `webauthn.ts`) forwards only
/// `publicKey`, its Rust core (proton-pass-common `passkey_handling.rs`, `generate.rs`) runs passkey-rs over an empty
/// store and answers UP and UV true; the Android app has no events service, the iOS extension declares neither
/// conditional registration nor credential updates.
final class ProtonPassTests: XCTestCase {
    func flags(_ response: RegistrationResponse) throws -> AuthenticatorData.Flags {
        try AuthenticatorData(bytes: response.authenticatorData).flags
    }

    func testAConditionalCreateBecomesTheExtensionsModalSavePrompt() throws {
        let proton = try ProviderScenario(pack: "proton-pass")
        // No password saved, none used: an automatic upgrade would be ineligible; the extension never sees the mediation.
        let created = try proton.conditionalCreate()
        let event = try XCTUnwrap(proton.events("create").last)
        XCTAssertEqual(event.outcome, "success", "a modal create, not an upgrade")
        XCTAssertTrue(try flags(created).contains(.userPresent), "the save prompt is a user gesture: UP=1")
        XCTAssertEqual(try proton.passkeys().count, 1)
    }

    func testARegistrationListingTheAccountsPasskeyInExcludeCredentialsMakesASecondOne() throws {
        let proton = try ProviderScenario(pack: "proton-pass")
        let first = try proton.modalCreate()
        let second = try proton.modalCreate(exclude: [first.credentialID])
        XCTAssertNotEqual(first.credentialID, second.credentialID)
        XCTAssertEqual(try proton.passkeys().count, 2, "passkey-rs matched the list against an empty store")
        let detail = try XCTUnwrap(proton.events("create").last?.detail["exclusion"]?.stringValue)
        XCTAssertTrue(detail.contains("exclusion.excludeCredentials = ignored (protonpass/proton-pass-common"), detail)
        // The upgrade path reads the same list through the same one rule.
        XCTAssertNoThrow(try proton.conditionalCreate(exclude: [first.credentialID, second.credentialID]))
        XCTAssertEqual(try proton.passkeys().count, 3)
        // A provider that checks the list still refuses.
        let gpm = try ProviderScenario(pack: "gpm")
        let gpmFirst = try gpm.modalCreate()
        XCTAssertEqual(gpm.failure { try gpm.modalCreate(exclude: [gpmFirst.credentialID]) }?.reason, .excludedCredential)
    }

    func testEveryResponseCarriesUPAndUVEvenWhenTheRPDiscouragesVerification() throws {
        for platform: Platform in [.chromeDesktop, .android, .ios] {
            let proton = try ProviderScenario(pack: "proton-pass", platform: platform)
            let options = try proton.creationOptions(userVerification: "discouraged", conditional: false)
            let created = try proton.engine().create(options, caller: try Caller(origin: proton.origin))
            XCTAssertEqual(try flags(created).intersection([.userPresent, .userVerified]), [.userPresent, .userVerified], "\(platform)")
        }
    }

    func testSignalsNeverReachProtonPassOnAnyPlatform() throws {
        for platform: Platform in [.chromeDesktop, .android, .ios] {
            let proton = try ProviderScenario(pack: "proton-pass", platform: platform)
            let created = try proton.modalCreate()
            try proton.signal(.unknownCredential(rpId: proton.rpID, credentialId: Base64URL.encode(created.credentialID)))
            try proton.signal(.allAcceptedCredentials(rpId: proton.rpID, userId: Base64URL.encode(Array("alice@example.com".utf8)), allAcceptedCredentialIds: []))
            XCTAssertEqual(try proton.passkeys(includeHidden: false).map(\.credentialID), [created.credentialID], "\(platform)")
            XCTAssertEqual(try proton.events("signal").map(\.outcome), ["ignored", "ignored"], "\(platform)")
        }
    }

    func testTheAppsOnAndroidAndIOSMakeNoAutomaticUpgradeWhileTheExtensionSavesOne() throws {
        for platform: Platform in [.android, .ios] {
            let proton = try ProviderScenario(pack: "proton-pass", platform: platform) { $0.osVersion = platform == .ios ? "26.0" : "15" }
            try proton.savePassword()
            try proton.autofillAndSignIn()
            XCTAssertEqual(proton.failure { try proton.conditionalCreate() }?.reason, .conditionalCreateUnsupported, "\(platform)")
            XCTAssertEqual(try proton.passkeys(), [], "\(platform)")
        }
    }

    func testTheExtensionOverridesConditionalMediationButNotTheSignalMethods() throws {
        let knobs = try ProviderScenario(pack: "proton-pass").engine().knobs
        XCTAssertTrue(knobs.conditionalMediation)
        XCTAssertTrue(knobs.signalMethods, "the browser's signal methods stay on the page")
        XCTAssertEqual(knobs.integration, .extension)
        XCTAssertEqual(AAGUID.format(knobs.aaguid), "50726f74-6f6e-5061-7373-50726f746f6e")
    }
}
