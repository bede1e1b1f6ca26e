import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

final class VaultRecordTests: XCTestCase {
    func makePasskey(_ vault: Vault, id: UInt8, rp: String = "example.com", user: String = "alice") throws -> PasskeyRecord {
        let key = try SigningKeys.generate(.es256)
        let record = PasskeyRecord(credentialID: Array(repeating: id, count: 16), rpID: rp, userHandle: Array(user.utf8),
                                   userName: user, displayName: user.capitalized, algorithm: .es256, publicKey: key.publicKey,
                                   createdAt: Date(vaultMillis: 1_800_000_000_000 + Int64(id)))
        try vault.insertPasskey(record, privateKey: key.pkcs8)
        return record
    }

    func testPasskeysRoundTripWithSettingsAndHiddenState() throws {
        let (vault, _) = try makeTestVault()
        let record = try makePasskey(vault, id: 1)
        XCTAssertEqual(try vault.passkey(id: record.credentialID), record)
        try vault.setHidden(credentialID: record.credentialID, hidden: true, at: Date(vaultMillis: 5))
        XCTAssertEqual(try vault.passkeys(rpID: "example.com"), [])
        XCTAssertEqual(try vault.passkeys(rpID: "example.com", includeHidden: true).first?.hiddenAt, Date(vaultMillis: 5))
        try vault.setHidden(credentialID: record.credentialID, hidden: false, at: Date())
        XCTAssertEqual(try vault.passkeys(rpID: "example.com").count, 1)
    }

    func testDuplicateCredentialIDIsRefusedAndTheFirstKept() throws {
        let (vault, _) = try makeTestVault()
        let record = try makePasskey(vault, id: 1)
        XCTAssertThrowsError(try makePasskey(vault, id: 1, user: "mallory")) { XCTAssertEqual(($0 as? VaultError)?.code, .duplicate) }
        XCTAssertEqual(try vault.allPasskeys(), [record])
    }

    func testPasswordTimesAreRecorded() throws {
        let (vault, _) = try makeTestVault()
        let saved = try vault.savePassword(origin: "https://example.com", username: "alice", password: "pw", at: Date(vaultMillis: 1000))
        try vault.markPasswordFilled(id: saved.id, at: Date(vaultMillis: 2000))
        try vault.markPasswordUsed(id: saved.id, at: Date(vaultMillis: 3000))
        let record = try vault.passwords(origin: "https://example.com")[0]
        XCTAssertEqual(record.createdAt, Date(vaultMillis: 1000))
        XCTAssertEqual(record.lastFilledAt, Date(vaultMillis: 2000))
        XCTAssertEqual(record.lastUsedAt, Date(vaultMillis: 3000))
        XCTAssertThrowsError(try vault.markPasswordUsed(id: 999, at: Date())) { XCTAssertEqual(($0 as? VaultError)?.code, .notFound) }
    }

    func testRemovingAPasskeyDeletesItsKeyToo() throws {
        let (vault, _) = try makeTestVault()
        let record = try makePasskey(vault, id: 3)
        XCTAssertTrue(try vault.removePasskey(credentialID: record.credentialID))
        XCTAssertFalse(try vault.removePasskey(credentialID: record.credentialID))
        XCTAssertThrowsError(try vault.privateKey(for: record.credentialID)) { XCTAssertEqual(($0 as? VaultError)?.code, .notFound) }
    }

    func testDecisionsQueueInOrderOnSharedAndExclusiveVaults() throws {
        for exclusive in [false, true] {
            let directory = TemporaryDirectory()
            let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)), exclusive: exclusive)
            defer { vault.close() }
            let other = vault.scoped(to: "other")
            XCTAssertNil(try vault.popDecision())
            XCTAssertNil(try vault.popDecision())
            try vault.pushDecision("cancel")
            try vault.pushDecision("timeout")
            XCTAssertNil(try other.popDecision(), "queues are per profile")
            try other.pushDecision("accept")
            XCTAssertEqual(try vault.popDecision(), "cancel")
            XCTAssertEqual(try vault.popDecision(), "timeout")
            XCTAssertNil(try vault.popDecision())
            XCTAssertEqual(try other.popDecision(), "accept")
            try vault.pushDecision("cancel")
            XCTAssertEqual(try vault.popDecision(), "cancel", "a decision pushed after an empty queue was seen is taken")
        }
    }
}
