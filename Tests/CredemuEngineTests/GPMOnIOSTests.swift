import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Google Password Manager on iOS: Chrome for iOS's AuthenticationServices credential provider extension (the gpm
/// pack's `ios` platform, sources-2026-12b.md A5).
final class GPMOnIOSTests: XCTestCase {
    func scenario() throws -> ProviderScenario { try ProviderScenario(pack: "gpm", platform: .ios) }
    let alice = Base64URL.encode(Array("alice@example.com".utf8))

    func testItIsAnOSProviderTheUserEnablesFromIOS17() throws {
        let s = try scenario()
        XCTAssertEqual(s.engine().knobs.integration, .osProvider)
        XCTAssertEqual(s.engine().clientCapabilities(), .object([]), "native apps have no getClientCapabilities")
        let routing = DeviceRouting(device: Device(name: "phone", platform: .ios, providers: ["user"]),
                                    accounts: [.init(name: "user", integration: .osProvider, offersInAutofill: true)])
        XCTAssertEqual(routing.createTarget()?.account.name, "user")
    }

    func testAnUnknownCredentialIsHiddenNotDeleted() throws {
        let s = try scenario()
        let created = try s.modalCreate()
        try s.signal(.unknownCredential(rpId: s.rpID, credentialId: Base64URL.encode(created.credentialID)))
        XCTAssertEqual(try s.passkeys().map(\.hidden), [true])
        XCTAssertEqual(s.failure { try s.signIn() }?.reason, .noCredential)
    }

    func testTheAcceptedListHidesTheUnlistedAndRestoresAListedHiddenOne() throws {
        let s = try scenario()
        let created = try s.modalCreate()
        try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: alice, allAcceptedCredentialIds: []))
        XCTAssertEqual(try s.passkeys().map(\.hidden), [true])
        try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: alice, allAcceptedCredentialIds: [Base64URL.encode(created.credentialID)]))
        XCTAssertEqual(try s.passkeys().map(\.hidden), [false])
    }

    func testDetailsRenameTheNameOnly() throws {
        let s = try scenario()
        _ = try s.modalCreate()
        try s.signal(.currentUserDetails(rpId: s.rpID, userId: alice, name: "alice@new.example", displayName: "Alice New"))
        let passkey = try XCTUnwrap(s.passkeys().first)
        XCTAssertEqual(passkey.userName, "alice@new.example")
        XCTAssertNotEqual(passkey.displayName, "Alice New", "reportPublicKeyCredentialUpdate carries newName only")
    }

    func testAConditionalRegistrationIsSilentUnlessExcludedOrTheUserOptedOut() throws {
        let s = try scenario()
        try s.savePassword()
        try s.autofillAndSignIn()
        let upgraded = try s.conditionalCreate()
        XCTAssertEqual(try s.events("create").last?.detail["silent"], .bool(true))
        // A second registration excluding the first: ineligible, no passkey, nothing shown.
        try s.autofillAndSignIn()
        let excluded = s.failure { try s.conditionalCreate(exclude: [upgraded.credentialID]) }
        XCTAssertEqual(excluded?.reason, .excludedCredential)
        XCTAssertEqual(excluded?.silent, true)
        XCTAssertEqual(try s.passkeys().count, 1)

        let optedOut = try scenario()
        optedOut.update { $0.automaticPasskeyUpgrades = false }
        try optedOut.savePassword()
        try optedOut.autofillAndSignIn()
        XCTAssertEqual(optedOut.failure { try optedOut.conditionalCreate() }?.reason, .optOut)

        let signedOut = try scenario()
        signedOut.update { $0.syncEnabled = false }
        try signedOut.savePassword()
        try signedOut.autofillAndSignIn()
        XCTAssertEqual(signedOut.failure { try signedOut.conditionalCreate() }?.reason, .passwordStoreUnavailable, "password sync must be on")

        let ios17 = try ProviderScenario(pack: "gpm", platform: .ios) { $0.osVersion = "17.5" }
        try ios17.savePassword()
        try ios17.autofillAndSignIn()
        XCTAssertEqual(ios17.failure { try ios17.conditionalCreate() }?.reason, .platformUnsupported, "conditional registration from iOS 18")
    }

    func testNoImmediateMediationOnIOS() throws {
        let s = try scenario()
        var options = try RequestOptions(json: requestOptionsJSON(rpID: s.rpID))
        options.mediation = "immediate"
        XCTAssertEqual(s.failure { try s.engine().get(options, caller: try Caller(origin: s.origin)) }?.error.name, .typeError)
    }
}
