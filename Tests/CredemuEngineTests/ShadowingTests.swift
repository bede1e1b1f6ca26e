import CredemuEngine
import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest

/// `passkeys.priorOfSameUser` (issue 24.1): what a second registration for the same RP ID and user.id does to the
/// first. GPM shadows it (Chromium's passkey_sync_bridge.cc and passkey_model_utils FilterShadowedCredentials), a
/// security key overwrites it (CTAP 2.1), Apple and the extensions keep both.
final class ShadowingTests: XCTestCase {
    let user = "alice@example.com"
    var userID: String { Base64URL.encode(Array(user.utf8)) }

    func testEachPackSaysWhatBecomesOfTheOlderPasskey() throws {
        let expected: [(String, PriorOfSameUser)] = [
            ("gpm", .shadowed), ("gpm-pre-m144", .shadowed), ("security-key", .replaced), ("apple", .kept), ("1password", .kept),
            ("bitwarden", .kept), ("keepassxc", .kept), ("generic-third-party", .kept), ("webauthn-spec", .replaced)]
        for (pack, prior) in expected {
            XCTAssertEqual(try ProviderScenario(pack: pack).engine().knobs.priorOfSameUser, prior, pack)
        }
        XCTAssertEqual(try ProviderScenario(pack: "gpm", platform: .chromeAndroid).engine().knobs.priorOfSameUser, .shadowed)
    }

    /// GPM: after a re-registration the old ID is listed (shadowed by the new one) but no longer signs in, is not in
    /// the dropdown, and is unknown to signals.
    func testGPMShadowsTheOlderPasskeyOfTheSameUser() throws {
        for held in [false, true] {
            let gpm = try ProviderScenario(pack: "gpm", held: held)
            let old = try gpm.modalCreate(user: user)
            let new = try gpm.modalCreate(user: user)
            let listed = try gpm.passkeys()
            XCTAssertEqual(listed.count, 2, "both stay in the vault")
            XCTAssertEqual(listed.first { $0.credentialID == old.credentialID }?.shadowedBy, new.credentialID, "held: \(held)")
            XCTAssertNil(listed.first { $0.credentialID == new.credentialID }?.shadowedBy)
            let create = try XCTUnwrap(gpm.events("create").last)
            XCTAssertEqual(create.detail["shadowed"], .array([.string(Base64URL.encode(old.credentialID))]))
            XCTAssertTrue(create.detail["priorOfSameUser"]?.stringValue?.contains("passkeys.priorOfSameUser = shadowed (chromium") == true)

            // The old ID signs in no more; the dropdown and a get without an allow list use the new one.
            XCTAssertEqual(gpm.failure { try gpm.signIn(allow: [old.credentialID]) }?.error.name.rawValue, "NotAllowedError")
            XCTAssertEqual(try gpm.signIn(allow: [old.credentialID, new.credentialID]).credentialID, new.credentialID)
            XCTAssertEqual(try gpm.signIn().credentialID, new.credentialID)
            let offer = try gpm.engine().autofillOffer(try RequestOptions(json: requestOptionsJSON()), caller: try Caller(origin: gpm.origin))
            let offered: [[UInt8]] = offer.passkeys.map { $0.credentialID }
            XCTAssertEqual(offered, [new.credentialID])

            // Signals: the old ID is not found, an accepted list without it hides nothing of it, details rename only the new.
            try gpm.signal(.unknownCredential(rpId: gpm.rpID, credentialId: Base64URL.encode(old.credentialID)))
            XCTAssertEqual(try gpm.events("signal").last?.outcome, "noop")
            try gpm.signal(.allAcceptedCredentials(rpId: gpm.rpID, userId: userID, allAcceptedCredentialIds: [Base64URL.encode(new.credentialID)]))
            XCTAssertEqual(try gpm.events("signal").last?.outcome, "noop", "the shadowed one is not hidden")
            try gpm.signal(.currentUserDetails(rpId: gpm.rpID, userId: userID, name: "alice@new.example", displayName: "Alice N"))
            let names = try gpm.passkeys().map { ($0.credentialID, $0.userName, $0.hidden) }
            XCTAssertEqual(names.first { $0.0 == old.credentialID }.map { "\($0.1) \($0.2)" }, "\(user) false")
            XCTAssertEqual(names.first { $0.0 == new.credentialID }.map { "\($0.1) \($0.2)" }, "alice@new.example false")
        }
    }

    /// The automatic upgrade shadows as a modal create does, and another user's passkey is never shadowed.
    func testAnUpgradeShadowsAndOtherUsersAreLeftAlone() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let bob = try gpm.modalCreate(user: "bob@example.com")
        let old = try gpm.modalCreate(user: user)
        try gpm.savePassword(user)
        try gpm.autofillAndSignIn(user)
        let upgraded = try gpm.conditionalCreate(user: user)
        let byID = Dictionary(uniqueKeysWithValues: try gpm.passkeys().map { ($0.credentialID, $0) })
        XCTAssertEqual(byID[old.credentialID]?.shadowedBy, upgraded.credentialID)
        XCTAssertNil(byID[bob.credentialID]?.shadowedBy)
        XCTAssertEqual(try gpm.signIn(allow: [bob.credentialID]).credentialID, bob.credentialID)
    }

    /// Deleting the shadowing passkey restores the one it shadowed; with three, the middle one passes its shadow on.
    func testDeletingTheNewPasskeyRestoresTheOld() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let first = try gpm.modalCreate(user: user)
        let second = try gpm.modalCreate(user: user)
        let third = try gpm.modalCreate(user: user)
        let vault = gpm.vault.scoped(to: gpm.profile.name)
        XCTAssertEqual(try vault.passkey(id: second.credentialID, includeShadowed: true)?.shadowedBy, third.credentialID)
        XCTAssertEqual(try vault.passkey(id: first.credentialID, includeShadowed: true)?.shadowedBy, second.credentialID)
        // The middle one goes: the first is shadowed by the newest now.
        XCTAssertTrue(try vault.removePasskey(credentialID: second.credentialID))
        XCTAssertEqual(try vault.passkey(id: first.credentialID, includeShadowed: true)?.shadowedBy, third.credentialID)
        XCTAssertEqual(gpm.failure { try gpm.signIn(allow: [first.credentialID]) }?.error.name.rawValue, "NotAllowedError")
        // The newest goes: the first is back.
        XCTAssertTrue(try vault.removePasskey(credentialID: third.credentialID))
        XCTAssertNil(try vault.passkey(id: first.credentialID)?.shadowedBy)
        XCTAssertEqual(try gpm.signIn(allow: [first.credentialID]).credentialID, first.credentialID)
        XCTAssertEqual(try gpm.signIn().credentialID, first.credentialID)
    }

    /// A security key overwrites its resident credential for the same RP ID and user handle (CTAP 2.1).
    func testASecurityKeyReplacesTheOlderCredential() throws {
        let key = try ProviderScenario(pack: "security-key")
        let old = try key.modalCreate(user: user)
        let new = try key.modalCreate(user: user)
        XCTAssertEqual(try key.passkeys().map(\.credentialID), [new.credentialID])
        XCTAssertEqual(try key.events("create").last?.detail["replaced"], .array([.string(Base64URL.encode(old.credentialID))]))
        XCTAssertEqual(key.failure { try key.signIn(allow: [old.credentialID]) }?.error.name.rawValue, "NotAllowedError")
        XCTAssertEqual(try key.signIn(allow: [new.credentialID]).credentialID, new.credentialID)
    }

    /// Apple and the extensions keep both: both sign in, both are offered.
    func testAppleAndTheExtensionsKeepBoth() throws {
        for pack in ["apple", "1password", "bitwarden", "keepassxc"] {
            let provider = try ProviderScenario(pack: pack)
            let old = try provider.modalCreate(user: user)
            let new = try provider.modalCreate(user: user)
            XCTAssertEqual(try provider.passkeys().map(\.shadowedBy), [nil, nil], pack)
            XCTAssertEqual(try provider.signIn(allow: [old.credentialID]).credentialID, old.credentialID, pack)
            XCTAssertEqual(try provider.signIn(allow: [new.credentialID]).credentialID, new.credentialID, pack)
            XCTAssertNil(try provider.events("create").last?.detail["shadowed"], pack)
        }
    }

    /// An excluded credential still matches a shadowed passkey, as it matches a hidden one.
    func testAShadowedPasskeyStillExcludes() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let old = try gpm.modalCreate(user: user)
        _ = try gpm.modalCreate(user: user)
        XCTAssertEqual(gpm.failure { try gpm.modalCreate(user: user, exclude: [old.credentialID]) }?.error.name.rawValue, "InvalidStateError")
    }
}

/// `signals.currentUserDetailsRespectsUserEdit` (issue 24.2): GPM's `UpdatePasskey` keeps the names a user edited.
final class UserEditTests: XCTestCase {
    let user = "alice@example.com"
    var userID: String { Base64URL.encode(Array(user.utf8)) }

    func testAnEditedNameSurvivesGPMsDetailsSignalAndSpendsNoToken() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        XCTAssertTrue(gpm.engine().knobs.detailsRespectUserEdit)
        let made = try gpm.modalCreate(user: user)
        let vault = gpm.vault.scoped(to: gpm.profile.name)
        let edited = try vault.editUser(credentialID: made.credentialID, name: "work alice", displayName: "Alice at work")
        XCTAssertTrue(edited.editedByUser)
        // Ten details signals: none renames, none spends one of Chrome's ten tokens, so a later unknown signal still acts.
        for i in 0..<10 {
            try gpm.signal(.currentUserDetails(rpId: gpm.rpID, userId: userID, name: "alice\(i)@example.com", displayName: "Alice \(i)"))
            XCTAssertEqual(try gpm.events("signal").last?.outcome, "noop")
        }
        let kept = try XCTUnwrap(vault.passkey(id: made.credentialID))
        XCTAssertEqual([kept.userName, kept.displayName], ["work alice", "Alice at work"])
        XCTAssertTrue(try gpm.events("signal").last?.detail["userEdits"]?.stringValue?.contains("= true (chromium") == true)
        let other = try gpm.modalCreate(user: "bob@example.com")
        try gpm.signal(.unknownCredential(rpId: gpm.rpID, credentialId: Base64URL.encode(other.credentialID)))
        XCTAssertEqual(try gpm.events("signal").last?.outcome, "applied", "the quota was not spent on the edited passkey")
    }

    func testOtherPacksRenameAnEditedPasskey() throws {
        for (pack, name) in [("apple", "alice1@example.com"), ("webauthn-spec", "alice1@example.com")] {
            let provider = try ProviderScenario(pack: pack)
            XCTAssertFalse(provider.engine().knobs.detailsRespectUserEdit, pack)
            let made = try provider.modalCreate(user: user)
            let vault = provider.vault.scoped(to: provider.profile.name)
            _ = try vault.editUser(credentialID: made.credentialID, name: "work alice", displayName: "Alice at work")
            try provider.signal(.currentUserDetails(rpId: provider.rpID, userId: userID, name: name, displayName: "Alice 1"))
            XCTAssertEqual(try vault.passkey(id: made.credentialID)?.userName, name, pack)
        }
    }

    /// GPM renames an unedited passkey as before, beside an edited one of the same user.
    func testOnlyTheEditedPasskeyIsSpared() throws {
        let gpm = try ProviderScenario(pack: "gpm") { _ in }
        let first = try gpm.modalCreate(user: user)
        let vault = gpm.vault.scoped(to: gpm.profile.name)
        // The same user on a second GPM account is a second profile; within one account the second create shadows, so
        // the edit is on the one that signals see.
        _ = try vault.editUser(credentialID: first.credentialID, name: "mine", displayName: "Mine")
        try gpm.signal(.currentUserDetails(rpId: gpm.rpID, userId: userID, name: "x@example.com", displayName: "X"))
        XCTAssertEqual(try vault.passkey(id: first.credentialID)?.userName, "mine")
        let second = try gpm.modalCreate(user: user)
        try gpm.signal(.currentUserDetails(rpId: gpm.rpID, userId: userID, name: "x@example.com", displayName: "X"))
        XCTAssertEqual(try vault.passkey(id: second.credentialID)?.userName, "x@example.com")
        XCTAssertEqual(try vault.passkey(id: first.credentialID, includeShadowed: true)?.userName, "mine")
    }
}
