import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Apple's `reportUnusedPasswordCredential(domain:userName:)` (seed 003), pack by pack (`passwords.reportUnused`).
final class UnusedPasswordTests: XCTestCase {
    let report = UnusedPasswordReport(domain: "shop.example.com", userName: "alice@example.com")

    func testAppleHidesTheReportedPasswordSoItIsNoLongerFilled() throws {
        for platform: Platform in [.safari, .ios, .macos] {
            let scenario = try ProviderScenario(pack: "apple", platform: platform)
            try scenario.savePassword()
            try scenario.savePassword("bob@example.com")
            try scenario.engine().reportUnusedPassword(report)
            let failure = scenario.failure { try scenario.autofillAndSignIn() }
            XCTAssertEqual(failure?.reason, .noMatchingPassword, "\(platform)")
            // The password stays in the vault, marked; the other account's is still filled.
            let stored = try scenario.vault.scoped(to: "user").passwords(origin: scenario.origin)
            XCTAssertNotNil(stored.first { $0.username == "alice@example.com" }?.retiredAt)
            XCTAssertNil(stored.first { $0.username == "bob@example.com" }?.retiredAt)
            XCTAssertEqual(try scenario.engine().autofill(origin: scenario.origin).record.username, "bob@example.com")
            let event = try XCTUnwrap(scenario.events("password").last { $0.detail["report"] == .string("unused") })
            XCTAssertEqual(event.outcome, "retired")
        }
    }

    func testARetiredPasswordDoesNotMakeAnAutomaticUpgradeEligible() throws {
        let scenario = try ProviderScenario(pack: "apple", platform: .ios)
        try scenario.savePassword()
        try scenario.autofillAndSignIn()
        try scenario.engine().reportUnusedPassword(report)
        // Filled a minute ago, which would count, but the provider no longer offers it.
        scenario.advance(60)
        XCTAssertEqual(scenario.failure { try scenario.conditionalCreate() }?.reason, .noMatchingPassword)
        XCTAssertEqual(try scenario.passkeys(), [])
    }

    func testSavingTheRetiredPasswordAgainOffersItAgain() throws {
        let scenario = try ProviderScenario(pack: "apple", platform: .ios)
        try scenario.savePassword()
        try scenario.engine().reportUnusedPassword(report)
        try scenario.savePassword(password: "new")
        XCTAssertEqual(try scenario.engine().autofill(origin: scenario.origin).password, "new")
    }

    func testTheDomainIsMatchedCaseInsensitivelyAndOnlyThatHostsPasswordIsRetired() throws {
        let scenario = try ProviderScenario(pack: "apple", platform: .ios)
        try scenario.savePassword()
        try scenario.engine().reportUnusedPassword(UnusedPasswordReport(domain: "example.com", userName: "alice@example.com"))
        XCTAssertNoThrow(try scenario.autofillAndSignIn(), "a password of shop.example.com is not one of example.com")
        XCTAssertEqual(try scenario.events("password").last?.outcome, "noop")
        try scenario.engine().reportUnusedPassword(UnusedPasswordReport(domain: "SHOP.Example.com", userName: "alice@example.com"))
        XCTAssertEqual(scenario.failure { try scenario.autofillAndSignIn() }?.reason, .noMatchingPassword)
    }

    func testPacksWithoutTheCallFailWithNotSupportedAndKeepThePassword() throws {
        for (pack, platform) in [("gpm", Platform.chromeDesktop), ("gpm", .android), ("bitwarden", .chromeDesktop),
                                 ("1password", .chromeDesktop), ("keepassxc", .firefox), ("generic-third-party", .android)] {
            let scenario = try ProviderScenario(pack: pack, platform: platform)
            try scenario.savePassword()
            let failure = scenario.failure { try scenario.engine().reportUnusedPassword(self.report) }
            XCTAssertEqual(failure?.error.name, .notSupportedError, "\(pack) on \(platform)")
            XCTAssertEqual(failure?.reason, .platformUnsupported)
            XCTAssertNoThrow(try scenario.autofillAndSignIn(), "\(pack) on \(platform)")
        }
    }

    func testAThirdPartyProviderOnIOSReceivesTheReport() throws {
        let scenario = try ProviderScenario(pack: "generic-third-party", platform: .ios)
        try scenario.savePassword()
        try scenario.engine().reportUnusedPassword(report)
        XCTAssertEqual(scenario.failure { try scenario.autofillAndSignIn() }?.reason, .noMatchingPassword)
    }

    func testABadDomainOrEmptyUserNameIsATypeErrorAndChangesNothing() throws {
        let scenario = try ProviderScenario(pack: "apple", platform: .ios)
        try scenario.savePassword()
        for bad in [UnusedPasswordReport(domain: "https://shop.example.com", userName: "alice@example.com"),
                    UnusedPasswordReport(domain: "", userName: "alice@example.com"),
                    UnusedPasswordReport(domain: "shop.example.com:443", userName: "alice@example.com"),
                    UnusedPasswordReport(domain: "shop.example.com", userName: "")] {
            XCTAssertEqual(scenario.failure { try scenario.engine().reportUnusedPassword(bad) }?.error.name, .typeError, "\(bad)")
        }
        XCTAssertNoThrow(try scenario.autofillAndSignIn())
    }
}
