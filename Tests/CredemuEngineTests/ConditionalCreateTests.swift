import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Automatic passkey upgrades, pack by pack (seeds 000 and 001; providers.md §2.1, §3.1, §4).
final class ConditionalCreateTests: XCTestCase {
    /// Packs whose provider creates silently, with the platforms to run them on.
    let silentPacks: [(String, Platform)] = [("gpm", .chromeDesktop), ("gpm", .chromeAndroid), ("gpm", .android), ("apple", .safari),
                                             ("apple", .ios), ("apple", .macos), ("generic-third-party", .ios), ("generic-third-party", .android)]

    func upgraded(_ scenario: ProviderScenario, after seconds: TimeInterval) throws -> CeremonyError? {
        try scenario.savePassword()
        scenario.advance(3600)
        try scenario.autofillAndSignIn()
        scenario.advance(seconds)
        return scenario.failure { try scenario.conditionalCreate() }
    }

    func testConditionalCreateSucceedsOneMinuteAfterAutofillWithUPAndUVUnset() throws {
        for (pack, platform) in silentPacks {
            let scenario = try ProviderScenario(pack: pack, platform: platform)
            XCTAssertNil(try upgraded(scenario, after: 60), "\(pack) on \(platform)")
            let passkey = try XCTUnwrap(scenario.passkeys().first, "\(pack) on \(platform)")
            XCTAssertEqual(passkey.userName, "alice@example.com")
            let event = try XCTUnwrap(scenario.events("create").last)
            XCTAssertEqual(event.outcome, "success")
            XCTAssertEqual(event.detail["silent"], .bool(true))
            XCTAssertEqual(event.detail["notification"], .string(scenario.engine().knobs.notification))
        }
    }

    func testConditionalCreateIsSilentNoOpAfterSixMinutes() throws {
        for (pack, platform) in silentPacks {
            let scenario = try ProviderScenario(pack: pack, platform: platform)
            let failure = try XCTUnwrap(try upgraded(scenario, after: 6 * 60), "\(pack) on \(platform)")
            XCTAssertEqual(failure.reason, .noRecentlyUsedPassword, "\(pack) on \(platform)")
            XCTAssertEqual(failure.error.name, .notAllowedError)
            XCTAssertTrue(failure.silent)
            XCTAssertEqual(try scenario.passkeys(), [], "\(pack) on \(platform)")
            XCTAssertEqual(try scenario.events("create").last?.outcome, "noop")
        }
    }

    func testRegistrationFlagsFollowThePackWithUPAndUVZero() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        try scenario.savePassword()
        try scenario.autofillAndSignIn()
        let response = try scenario.conditionalCreate()
        let authData = try AuthenticatorData(bytes: response.authenticatorData)
        XCTAssertFalse(authData.flags.contains(.userPresent))
        XCTAssertFalse(authData.flags.contains(.userVerified))
        XCTAssertTrue(authData.flags.contains(.backupEligible))
        XCTAssertEqual(authData.attestedCredentialData?.aaguid, AAGUID.parse("ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"))
        XCTAssertNoThrow(try RPCheck.registration(response, challenge: Array(repeating: 1, count: 32), origin: scenario.origin,
                                                  rpID: scenario.rpID, requireUserPresence: false))
        XCTAssertThrowsError(try RPCheck.registration(response, challenge: Array(repeating: 1, count: 32), origin: scenario.origin,
                                                      rpID: scenario.rpID), "an RP that insists on UP rejects every automatic upgrade")
        // The new passkey signs in afterwards, with UP set as any assertion.
        let assertion = try scenario.signIn(allow: [response.credentialID])
        XCTAssertTrue(try AuthenticatorData(bytes: assertion.authenticatorData).flags.contains(.userPresent))
    }

    func testManualEntryIsANoOp() throws {
        // The password was saved long ago and typed by hand: the provider filled nothing.
        for (pack, platform) in silentPacks {
            let scenario = try ProviderScenario(pack: pack, platform: platform)
            try scenario.savePassword()
            scenario.advance(86_400)
            XCTAssertEqual(scenario.failure { try scenario.conditionalCreate() }?.reason, .noRecentlyUsedPassword, "\(pack) on \(platform)")
        }
    }

    func testGPMCountsAFreshlySavedPasswordButAppleDoesNot() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        try gpm.savePassword()
        XCTAssertNil(gpm.failure { try gpm.conditionalCreate() }, "GPM counts date_created")
        let apple = try ProviderScenario(pack: "apple")
        try apple.savePassword()
        XCTAssertEqual(apple.failure { try apple.conditionalCreate() }?.reason, .noRecentlyUsedPassword)
    }

    func testMismatchedAccountIsNoMatchingPassword() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        try scenario.savePassword("bob@example.com")
        try scenario.autofillAndSignIn("bob@example.com")
        XCTAssertEqual(scenario.failure { try scenario.conditionalCreate(user: "alice@example.com") }?.reason, .noMatchingPassword)
    }

    func testOptOutIsANoOpOnEveryDeviceOfTheAccount() throws {
        for (pack, platforms) in [("gpm", [Platform.chromeDesktop, .chromeAndroid, .android]), ("apple", [.safari, .ios, .macos])] {
            let scenario = try ProviderScenario(pack: pack) { $0.automaticPasskeyUpgrades = false }
            try scenario.savePassword()
            try scenario.autofillAndSignIn()
            for platform in platforms {
                let failure = scenario.failure { try scenario.conditionalCreate(on: platform) }
                XCTAssertEqual(failure?.reason, .optOut, "\(pack) on \(platform)")
                XCTAssertEqual(failure?.silent, true)
            }
            XCTAssertEqual(try scenario.passkeys(), [])
            scenario.update { $0.automaticPasskeyUpgrades = true }
            XCTAssertNil(scenario.failure { try scenario.conditionalCreate() }, "opting back in lets the next upgrade through")
        }
    }

    func testExistingPasskeyStopsAppleButNotGPM() throws {
        let apple = try ProviderScenario(pack: "apple")
        _ = try apple.modalCreate()
        try apple.savePassword()
        try apple.autofillAndSignIn()
        XCTAssertEqual(apple.failure { try apple.conditionalCreate() }?.reason, .passkeyExists)

        let gpm = try ProviderScenario(pack: "gpm")
        _ = try gpm.modalCreate()
        try gpm.savePassword()
        try gpm.autofillAndSignIn()
        XCTAssertNil(gpm.failure { try gpm.conditionalCreate() }, "GPM's upgrade controller does not look for an existing passkey")
        XCTAssertEqual(try gpm.passkeys().count, 2)
    }

    /// Chrome desktop: `EnclaveAuthenticator::MakeCredential` finds the excluded GPM passkey and the request completes
    /// CREDENTIAL_EXCLUDED, InvalidStateError, with no UI (sources-2026-12.md); any GPM passkey of the RP ID counts.
    func testAnExcludedGPMPasskeyFailsTheDesktopUpgradeWithInvalidStateErrorAndNoUI() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        let existing = try scenario.modalCreate(user: "bob@example.com")
        try scenario.savePassword()
        try scenario.autofillAndSignIn()
        try scenario.engine().queue(.cancel)
        let failure = scenario.failure { try scenario.conditionalCreate(exclude: [existing.credentialID]) }
        XCTAssertEqual(failure?.reason, .excludedCredential)
        XCTAssertEqual(failure?.error.name, .invalidStateError)
        XCTAssertEqual(failure?.silent, false, "an error the page sees, not a silent no-op")
        XCTAssertEqual(try scenario.vault.scoped(to: "user").pendingDecisions().count, 1, "no sheet asked the user anything")
        XCTAssertEqual(try scenario.passkeys().count, 1)
        XCTAssertTrue(try scenario.events("create").last?.detail["message"]?.stringValue?.contains("already registered") == true)
    }

    /// Chrome on Android: every conditional-create failure is NOT_ALLOWED_ERROR (IdentityCredentialsHelper).
    func testAnExcludedPasskeyIsASilentNoOpOnChromeAndroid() throws {
        let scenario = try ProviderScenario(pack: "gpm", platform: .chromeAndroid)
        let existing = try scenario.modalCreate()
        try scenario.savePassword()
        try scenario.autofillAndSignIn()
        let failure = scenario.failure { try scenario.conditionalCreate(exclude: [existing.credentialID]) }
        XCTAssertEqual(failure?.reason, .excludedCredential)
        XCTAssertEqual(failure?.error.name, .notAllowedError)
        XCTAssertEqual(failure?.silent, true)
    }

    /// GPM desktop upgrades need a signed-in profile that syncs passwords (`kPasswordStoreError` otherwise).
    func testGPMDesktopNeedsASignedInSyncingProfile() throws {
        for (signedIn, sync) in [(false, true), (true, false)] {
            let scenario = try ProviderScenario(pack: "gpm") { $0.browserSignedIn = signedIn; $0.syncEnabled = sync }
            let failure = try XCTUnwrap(try upgraded(scenario, after: 60))
            XCTAssertEqual(failure.reason, .passwordStoreUnavailable)
            XCTAssertTrue(failure.silent)
            XCTAssertTrue(failure.error.message.contains(signedIn ? "not syncing" : "not signed in"), failure.error.message)
        }
        let android = try ProviderScenario(pack: "gpm", platform: .chromeAndroid) { $0.browserSignedIn = false }
        XCTAssertNil(try upgraded(android, after: 60), "no Chrome sync gate through Play services")
    }

    /// Only passwords stored in GPM count: one another manager holds does not make the account eligible.
    func testAPasswordSavedInAnotherManagerDoesNotQualifyWhereThePackCountsItsOwnStore() throws {
        for (pack, upgrades) in [("gpm", false), ("apple", false), ("webauthn-spec", true)] {
            let scenario = try ProviderScenario(pack: pack)
            try scenario.savePassword(savedIn: "bitwarden")
            scenario.advance(3600)
            try scenario.autofillAndSignIn()
            scenario.advance(60)
            let failure = scenario.failure { try scenario.conditionalCreate() }
            XCTAssertEqual(failure == nil, upgrades, "\(pack): \(String(describing: failure))")
            if !upgrades {
                XCTAssertEqual(failure?.reason, .noMatchingPassword, pack)
                XCTAssertTrue(failure?.error.message.contains("saved in bitwarden") == true, "\(String(describing: failure))")
            }
        }
    }

    /// `conditionalCreate.passwordMatch`: Chrome's controller counts every password its store's `GetLogins` returns,
    /// public-suffix matches included, so one used on login.example.com qualifies an upgrade on shop.example.com;
    /// the other packs count the caller's own realm only. Another port, scheme or site never qualifies.
    func testAPublicSuffixMatchedPasswordQualifiesWhereThePackSaysExactOrPSL() throws {
        let packs: [(String, Platform?, PolicyKnobs.PasswordMatch)] = [
            ("gpm", .chromeDesktop, .exactOrPSL), ("gpm", .chromeAndroid, .exactOrPSL), ("gpm", .android, .exactOrPSL),
            ("gpm-pre-m144", nil, .exactOrPSL), ("apple", .safari, .exact), ("apple", .ios, .exact), ("apple", .macos, .exact),
            ("generic-third-party", .ios, .exact), ("generic-third-party", .android, .exact), ("webauthn-spec", nil, .exact)]
        for (pack, platform, match) in packs {
            for (realm, qualifies) in [("https://login.example.com", match == .exactOrPSL), ("https://example.com", match == .exactOrPSL),
                                       ("https://login.example.com:8443", false), ("https://example.net", false)] {
                let scenario = try ProviderScenario(pack: pack, platform: platform)
                XCTAssertEqual(scenario.engine().knobs.passwordMatch, match, pack)
                try scenario.engine().savePassword(origin: realm, username: "alice@example.com", password: "pw")
                scenario.advance(3600)
                _ = try scenario.engine().autofill(origin: realm, username: "alice@example.com", submit: true)
                scenario.advance(60)
                let failure = scenario.failure { try scenario.conditionalCreate() }
                XCTAssertEqual(failure == nil, qualifies, "\(pack) on \(String(describing: platform)), password at \(realm): \(String(describing: failure))")
                if !qualifies {
                    XCTAssertEqual(failure?.reason, .noMatchingPassword, "\(pack) \(realm)")
                    XCTAssertTrue(failure?.error.message.contains("conditionalCreate.passwordMatch = \(match.rawValue)") == true, "\(String(describing: failure))")
                }
            }
        }
    }

    /// A public-suffix match still needs the username and the recent use, as the controller's loop does.
    func testAPublicSuffixMatchStillNeedsTheUsernameAndARecentUse() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        try scenario.engine().savePassword(origin: "https://login.example.com", username: "bob@example.com", password: "pw")
        try scenario.engine().savePassword(origin: "https://www.example.com", username: "alice@example.com", password: "pw")
        scenario.advance(3600)
        XCTAssertEqual(scenario.failure { try scenario.conditionalCreate() }?.reason, .noRecentlyUsedPassword)
        _ = try scenario.engine().autofill(origin: "https://login.example.com", username: "bob@example.com", submit: true)
        XCTAssertEqual(scenario.failure { try scenario.conditionalCreate() }?.reason, .noRecentlyUsedPassword, "bob's use is not alice's")
        _ = try scenario.engine().autofill(origin: "https://www.example.com", username: "alice@example.com", submit: true)
        XCTAssertNil(scenario.failure { try scenario.conditionalCreate() })
    }

    /// Safari's system check "Is this a non-private browsing tab?" (seed 001); Chrome's is not known.
    func testSafariDoesNotUpgradeInAPrivateTab() throws {
        let apple = try ProviderScenario(pack: "apple") { $0.privateBrowsing = true }
        let failure = try XCTUnwrap(try upgraded(apple, after: 60))
        XCTAssertEqual(failure.reason, .privateBrowsing)
        XCTAssertTrue(failure.silent)
        XCTAssertEqual(try apple.passkeys(), [])
        XCTAssertNoThrow(try apple.modalCreate(), "a modal create works in a private tab")
        let gpm = try ProviderScenario(pack: "gpm") { $0.privateBrowsing = true }
        XCTAssertNil(try upgraded(gpm, after: 60))
    }

    /// Firefox's `create()` never reads `mediation` (CredentialsContainer.cpp): a modal create, as an extension's.
    func testFirefoxMakesAConditionalCreateModal() throws {
        for pack in ["webauthn-spec", "bitwarden", "generic-third-party"] {
            let scenario = try ProviderScenario(pack: pack, platform: .firefox)
            let response = try scenario.conditionalCreate()
            XCTAssertTrue(try AuthenticatorData(bytes: response.authenticatorData).flags.contains(.userPresent), pack)
        }
    }

    func testModalProvidersIgnoreMediationAndShowTheirSheet() throws {
        for pack in ["bitwarden", "keepassxc"] {
            let scenario = try ProviderScenario(pack: pack)
            let response = try scenario.conditionalCreate()  // no password at all: a modal create does not care
            XCTAssertTrue(try AuthenticatorData(bytes: response.authenticatorData).flags.contains(.userPresent), pack)
            XCTAssertTrue(try scenario.events("create").last?.detail["note"]?.stringValue?.contains("mediation ignored") == true)
        }
    }

    func testUnsupportedProviderAnswersASilentNoOp() throws {
        let scenario = try ProviderScenario(pack: "1password")
        try scenario.savePassword()
        try scenario.autofillAndSignIn()
        let failure = scenario.failure { try scenario.conditionalCreate() }
        XCTAssertEqual(failure?.reason, .conditionalCreateUnsupported)
        XCTAssertEqual(failure?.silent, true)
    }

    func testCrossOriginIframeIsNotAllowedAndRequiredUVIsAConstraintError() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        try scenario.savePassword()
        try scenario.autofillAndSignIn()
        let framed = try Caller(origin: scenario.origin, topOrigin: "https://news.example.org")
        let options = try scenario.creationOptions(conditional: true)
        let failure = scenario.failure { try scenario.engine().create(options, caller: framed) }
        XCTAssertEqual(failure?.error.name, .notAllowedError)
        XCTAssertEqual(failure?.reason, .crossOriginIframe)
        XCTAssertEqual(failure?.silent, false)
        let uv = scenario.failure { try scenario.conditionalCreate(userVerification: "required") }
        XCTAssertEqual(uv?.error.name, .constraintError)
    }

    func testDevicePasscodeAndPlayServicesGateThePlatforms() throws {
        let apple = try ProviderScenario(pack: "apple", platform: .ios) { $0.passcodeSet = false }
        try apple.savePassword()
        try apple.autofillAndSignIn()
        XCTAssertEqual(apple.failure { try apple.conditionalCreate() }?.reason, .noDevicePasscode)

        let oldIOS = try ProviderScenario(pack: "apple", platform: .ios) { $0.osVersion = "17.5" }
        try oldIOS.savePassword()
        try oldIOS.autofillAndSignIn()
        XCTAssertEqual(oldIOS.failure { try oldIOS.conditionalCreate() }?.reason, .platformUnsupported)

        let oldGMS = try ProviderScenario(pack: "gpm", platform: .android) { $0.playServicesVersion = "24.40" }
        try oldGMS.savePassword()
        try oldGMS.autofillAndSignIn()
        XCTAssertEqual(oldGMS.failure { try oldGMS.conditionalCreate() }?.reason, .platformUnsupported)
        oldGMS.update { $0.playServicesVersion = "25.13.1" }
        XCTAssertNil(oldGMS.failure { try oldGMS.conditionalCreate() })
    }
}
