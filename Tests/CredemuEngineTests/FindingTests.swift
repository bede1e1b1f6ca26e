import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// One test per RP integration finding: a request that triggers it, and a correct one that does not.
final class FindingTests: XCTestCase {
    func codes(_ scenario: ProviderScenario) throws -> [String] {
        try Finding.list(scenario.vault.scoped(to: "user")).map(\.code)
    }

    func userID(_ user: String = "alice@example.com") -> String { Base64URL.encode(Array(user.utf8)) }

    func testUpgradeForAnotherAccountThanTheOneAutofilled() throws {
        let s = try ProviderScenario(pack: "gpm")
        try s.savePassword("alice@example.com")
        try s.savePassword("bob@example.com")
        try s.autofillAndSignIn("alice@example.com")
        _ = s.failure { try s.conditionalCreate(user: "bob@example.com") }
        XCTAssertEqual(try codes(s), ["accountMismatch"])
        let good = try ProviderScenario(pack: "gpm")
        try good.savePassword()
        try good.autofillAndSignIn()
        _ = try good.conditionalCreate()
        XCTAssertEqual(try codes(good), [])
    }

    func testMissingExclusionIDsWhileTheVaultHoldsTheAccountsPasskey() throws {
        let s = try ProviderScenario(pack: "gpm")
        let first = try s.modalCreate()
        _ = s.failure { try s.modalCreate() }
        XCTAssertEqual(try codes(s), ["missingExclusionIds"])
        let good = try ProviderScenario(pack: "gpm")
        let id = try good.modalCreate().credentialID
        _ = good.failure { try good.modalCreate(exclude: [id]) }
        XCTAssertEqual(try codes(good), [])
        _ = first
    }

    func testSecondAutomaticAttemptWithoutANewSignIn() throws {
        let s = try ProviderScenario(pack: "gpm") { $0.automaticPasskeyUpgrades = false }
        try s.savePassword()
        try s.autofillAndSignIn()
        _ = s.failure { try s.conditionalCreate() }
        _ = s.failure { try s.conditionalCreate() }
        XCTAssertEqual(try codes(s), ["repeatedAutomaticAttempt"])
        let good = try ProviderScenario(pack: "gpm") { $0.automaticPasskeyUpgrades = false }
        try good.savePassword()
        try good.autofillAndSignIn()
        _ = good.failure { try good.conditionalCreate() }
        try good.autofillAndSignIn()
        _ = good.failure { try good.conditionalCreate() }
        XCTAssertEqual(try codes(good), [])
    }

    func testRequiredUserVerificationOnAConditionalCreate() throws {
        let s = try ProviderScenario(pack: "gpm")
        try s.savePassword()
        try s.autofillAndSignIn()
        _ = s.failure { try s.conditionalCreate(userVerification: "required") }
        XCTAssertEqual(try codes(s), ["conditionalCreateRequiresUV"])
        let good = try ProviderScenario(pack: "gpm")
        try good.savePassword()
        try good.autofillAndSignIn()
        _ = good.failure { try good.conditionalCreate(userVerification: "preferred") }
        XCTAssertEqual(try codes(good), [])
    }

    func testEmptyOrPartialAcceptedListForPasskeysTheRPUsed() throws {
        let s = try ProviderScenario(pack: "gpm")
        let a = try s.modalCreate(userID: Array("alice@example.com".utf8))
        _ = try s.signIn(allow: [a.credentialID])
        try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: userID(), allAcceptedCredentialIds: []))
        XCTAssertEqual(try codes(s), ["emptyAcceptedList"])
        let good = try ProviderScenario(pack: "gpm")
        let b = try good.modalCreate(userID: Array("alice@example.com".utf8))
        _ = try good.signIn(allow: [b.credentialID])
        try good.signal(.allAcceptedCredentials(rpId: good.rpID, userId: userID(), allAcceptedCredentialIds: [Base64URL.encode(b.credentialID)]))
        XCTAssertEqual(try codes(good), [])
    }

    func testUnknownCredentialLaterListedAsAccepted() throws {
        let s = try ProviderScenario(pack: "gpm")
        let a = try s.modalCreate(userID: Array("alice@example.com".utf8))
        let id = Base64URL.encode(a.credentialID)
        try s.signal(.unknownCredential(rpId: s.rpID, credentialId: id))
        try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: userID(), allAcceptedCredentialIds: [id]))
        XCTAssertEqual(try codes(s), ["unknownThenAccepted"])
        let good = try ProviderScenario(pack: "gpm")
        let b = try good.modalCreate(userID: Array("alice@example.com".utf8))
        try good.signal(.allAcceptedCredentials(rpId: good.rpID, userId: userID(), allAcceptedCredentialIds: [Base64URL.encode(b.credentialID)]))
        XCTAssertEqual(try codes(good), [])
    }

    func testSignalsPastThePlatformRateLimit() throws {
        let s = try ProviderScenario(pack: "gpm", platform: .android)
        _ = try s.modalCreate(userID: Array("alice@example.com".utf8))
        for _ in 0..<11 {
            _ = s.failure { try s.signal(.currentUserDetails(rpId: s.rpID, userId: self.userID(), name: "alice@example.com", displayName: "Alice")) }
        }
        XCTAssertEqual(try codes(s), ["signalRateLimitExceeded"])
        let good = try ProviderScenario(pack: "gpm", platform: .android)
        _ = try good.modalCreate(userID: Array("alice@example.com".utf8))
        for _ in 0..<10 {
            try good.signal(.currentUserDetails(rpId: good.rpID, userId: userID(), name: "alice@example.com", displayName: "Alice"))
        }
        XCTAssertEqual(try codes(good), [])
    }

    func testDisplayNameSentWhereThePlatformKeepsOnlyTheName() throws {
        let s = try ProviderScenario(pack: "apple")
        _ = try s.modalCreate(userID: Array("alice@example.com".utf8))
        try s.signal(.currentUserDetails(rpId: s.rpID, userId: userID(), name: "alice2", displayName: "Alice Two"))
        XCTAssertEqual(try codes(s), ["displayNameNotSupported"])
        let good = try ProviderScenario(pack: "apple")
        _ = try good.modalCreate(userID: Array("alice@example.com".utf8))
        try good.signal(.currentUserDetails(rpId: good.rpID, userId: userID(), name: "alice2", displayName: "Alice"))
        XCTAssertEqual(try codes(good), [])
    }

    /// A passkey (a discoverable credential) asked of a cross-platform authenticator leaves out the platform's manager;
    /// a security key asked for as a second factor (residentKey discouraged) is no finding.
    func testACrossPlatformPasskeyLeavesOutThePlatformsManager() throws {
        func create(_ s: ProviderScenario, residentKey: String) -> CeremonyError? {
            var document = try! JSONValue.parse(creationOptionsJSON(rpID: s.rpID, userName: "alice@example.com"))
            document = .object((document.objectValue ?? []).map { key, value in
                key == "authenticatorSelection" ? (key, .object([("authenticatorAttachment", "cross-platform"), ("residentKey", .string(residentKey))])) : (key, value)
            })
            return s.failure { try s.engine().create(try CreationOptions(document: document), caller: try Caller(origin: s.origin)) }
        }
        let s = try ProviderScenario(pack: "gpm")
        XCTAssertEqual(create(s, residentKey: "required")?.reason, .attachmentNotOffered, "GPM is not offered")
        XCTAssertEqual(try codes(s), ["crossPlatformPasskey"])
        let good = try ProviderScenario(pack: "gpm")
        _ = create(good, residentKey: "discouraged")
        XCTAssertEqual(try codes(good), [])
    }
}
