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

    func testTextsAreStoredWholeEmptyWithANulNonASCIIAndLong() throws {
        // Texts are bound from their UTF-8 in place: an empty one must bind as "" (NULL breaks display_name's NOT NULL),
        // and one with a NUL, non-ASCII or past a small string's 15 bytes must come back byte for byte.
        let (vault, _) = try makeTestVault()
        let key = try SigningKeys.generate(.es256)
        let names = ["", "a\u{0}b", "Zoë 🔑", String(repeating: "long-name-", count: 40)]
        for (i, name) in names.enumerated() {
            let record = PasskeyRecord(credentialID: Array(repeating: UInt8(i + 1), count: 16), rpID: "example.com", userHandle: Array("u\(i)".utf8),
                                       userName: name, displayName: name, algorithm: .es256, publicKey: key.publicKey,
                                       createdAt: Date(vaultMillis: 1_800_000_000_000 + Int64(i)))
            try vault.insertPasskey(record, privateKey: key.pkcs8)
        }
        let stored = try vault.allPasskeys()
        XCTAssertEqual(Set(stored.map(\.userName)), Set(names))
        XCTAssertEqual(Set(stored.map(\.displayName)), Set(names))
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

/// What extensions keep per credential (migration 3): sealed, scoped to the profile, gone with the passkey.
final class VaultExtensionStateTests: XCTestCase {
    func record(_ byte: UInt8) throws -> (PasskeyRecord, [UInt8]) {
        let key = try SigningKeys.generate(.es256)
        return (PasskeyRecord(credentialID: Array(repeating: byte, count: 16), rpID: "example.com", userHandle: [byte], userName: "u\(byte)",
                              displayName: "U", algorithm: .es256, publicKey: key.publicKey, createdAt: Date(vaultMillis: 1000)), key.pkcs8)
    }

    func testALargeBlobIsSealedScopedToItsProfileAndDeletedWithItsPasskey() throws {
        let (vault, _) = try makeTestVault()
        let (passkey, pkcs8) = try record(1)
        try vault.insertPasskey(passkey, privateKey: pkcs8, prfSecret: Array(repeating: 2, count: 32))
        XCTAssertNil(try vault.largeBlob(for: passkey.credentialID))
        try vault.setLargeBlob([1, 2, 3], for: passkey.credentialID)
        try vault.setLargeBlob([4, 5], for: passkey.credentialID)
        XCTAssertEqual(try vault.largeBlob(for: passkey.credentialID), [4, 5], "a write replaces the blob")
        XCTAssertEqual(try vault.prfSecret(for: passkey.credentialID), Array(repeating: 2, count: 32))
        XCTAssertThrowsError(try vault.scoped(to: "other").setLargeBlob([9], for: passkey.credentialID)) {
            XCTAssertEqual(($0 as? VaultError)?.code, .notFound, "another profile cannot write it")
        }
        XCTAssertNil(try vault.scoped(to: "other").largeBlob(for: passkey.credentialID))
        XCTAssertThrowsError(try vault.setLargeBlob(Array(repeating: 0, count: Vault.largeBlobLimit + 1), for: passkey.credentialID)) {
            XCTAssertEqual(($0 as? VaultError)?.code, .invalidInput)
        }
        // Sealed under the row's name: the bytes on disk are not the blob, and a blob moved to another row does not open.
        var raw: [UInt8] = []
        try vault.locked { () throws(VaultError) in try vault.db.query("SELECT blob FROM large_blobs") { raw = $0.blob(0) } }
        XCTAssertNotEqual(raw, [4, 5])
        XCTAssertGreaterThan(raw.count, 2)
        let (other, otherKey) = try record(2)
        try vault.insertPasskey(other, privateKey: otherKey)
        try vault.locked { () throws(VaultError) in
            try vault.db.query("INSERT INTO large_blobs (credential_id, profile, blob) VALUES (?, ?, ?)", [.blob(other.credentialID), .text(vault.profile), .blob(raw)])
        }
        XCTAssertThrowsError(try vault.largeBlob(for: other.credentialID)) { XCTAssertEqual(($0 as? VaultError)?.code, .corrupt) }
        try vault.removePasskey(credentialID: passkey.credentialID)
        var left = -1
        try vault.locked { () throws(VaultError) in
            try vault.db.query("SELECT count(*) FROM large_blobs WHERE credential_id = ?", [.blob(passkey.credentialID)]) { left = Int($0.int(0)) }
        }
        XCTAssertEqual(left, 0, "the blob went with its passkey")
    }

    func testAPasswordRemembersTheManagerThatHoldsIt() throws {
        let (vault, _) = try makeTestVault()
        try vault.savePassword(origin: "https://a.example", username: "alice", password: "pw", at: Date(vaultMillis: 1), savedIn: "bitwarden")
        XCTAssertEqual(try vault.passwords(origin: "https://a.example").map(\.savedIn), ["bitwarden"])
        try vault.savePassword(origin: "https://a.example", username: "alice", password: "pw2", at: Date(vaultMillis: 2))
        XCTAssertEqual(try vault.passwords(origin: "https://a.example").map(\.savedIn), [nil], "the last save decides which store holds it")
        XCTAssertThrowsError(try vault.savePassword(origin: "https://a.example", username: "b", password: "p", at: Date(), savedIn: "no spaces")) {
            XCTAssertEqual(($0 as? VaultError)?.code, .invalidInput)
        }
    }
}
