import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// A zero-counter assertion's last-use time waits in memory for the event log's next batch; every read sees it.
final class DeferredUseTests: XCTestCase {
    func insert(_ vault: Vault, id: UInt8, created: Int64, discoverable: Bool = true) throws -> PasskeyRecord {
        let key = try SigningKeys.generate(.es256)
        var settings = PasskeySettings()
        settings.discoverable = discoverable
        let record = PasskeyRecord(credentialID: Array(repeating: id, count: 16), rpID: "example.com", userHandle: [id],
                                   userName: "u\(id)", displayName: "U", algorithm: .es256, publicKey: key.publicKey,
                                   settings: settings, createdAt: Date(vaultMillis: created))
        try vault.insertPasskey(record, privateKey: key.pkcs8)
        return record
    }

    func testADeferredUseIsSeenAtOnceByALookupAndWrittenByTheNextBatch() throws {
        let directory = TemporaryDirectory()
        let (vault, _) = try makeTestVault(in: directory)
        let record = try insert(vault, id: 1, created: 1_000)
        try vault.recordAssertion(credentialID: record.credentialID, signCount: 0, at: Date(vaultMillis: 5_000), deferred: true)
        XCTAssertEqual(vault.events.pendingUses.count, 1, "waiting in memory")
        XCTAssertEqual(try vault.passkey(id: record.credentialID)?.lastUsedAt, Date(vaultMillis: 5_000))
        XCTAssertEqual(try vault.allPasskeys().first?.lastUsedAt, Date(vaultMillis: 5_000))
        // The background batch writes it: wait for the buffer to empty (the delay is 20 ms).
        let deadline = Date().addingTimeInterval(5)
        while try vault.locked({ () throws(VaultError) in !vault.events.pendingUses.isEmpty }), Date() < deadline { usleep(5_000) }
        XCTAssertTrue(vault.events.pendingUses.isEmpty, "the batch wrote it")
        vault.close()
        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)))
        XCTAssertEqual(try reopened.passkey(id: record.credentialID)?.lastUsedAt, Date(vaultMillis: 5_000))
    }

    func testClosingWritesPendingUses() throws {
        let directory = TemporaryDirectory()
        let (vault, _) = try makeTestVault(in: directory)
        let record = try insert(vault, id: 2, created: 1_000)
        try vault.recordAssertion(credentialID: record.credentialID, signCount: 0, at: Date(vaultMillis: 7_000), deferred: true)
        vault.close()
        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)))
        XCTAssertEqual(try reopened.passkey(id: record.credentialID)?.lastUsedAt, Date(vaultMillis: 7_000))
    }

    /// The dropdown and a get without an allow list read in last-use order, in SQL: pending uses go first.
    func testTheOfferOrderIncludesPendingUses() throws {
        let (vault, _) = try makeTestVault()
        let older = try insert(vault, id: 3, created: 1_000)
        let newer = try insert(vault, id: 4, created: 2_000)
        XCTAssertEqual(try vault.offeredPasskeys(rpID: "example.com", limit: 2).map(\.credentialID), [newer.credentialID, older.credentialID])
        try vault.recordAssertion(credentialID: older.credentialID, signCount: 0, at: Date(vaultMillis: 3_000), deferred: true)
        XCTAssertEqual(try vault.offeredPasskeys(rpID: "example.com", limit: 2).map(\.credentialID), [older.credentialID, newer.credentialID])
        XCTAssertTrue(vault.events.pendingUses.isEmpty)
    }

    /// "Used but not listed" (a signal finding) counts in SQL: a pending first use counts.
    func testCountingUsedPasskeysIncludesPendingUses() throws {
        let (vault, _) = try makeTestVault()
        let record = try insert(vault, id: 5, created: 1_000)
        try vault.recordAssertion(credentialID: record.credentialID, signCount: 0, at: Date(vaultMillis: 3_000), deferred: true)
        XCTAssertEqual(try vault.countUsedPasskeys(rpID: "example.com", userHandle: [5], notIn: []), 1)
    }

    func testAnUndeferredAssertionIsWrittenAtOnceAndARemovalDropsAPendingUse() throws {
        let (vault, _) = try makeTestVault()
        let counted = try insert(vault, id: 6, created: 1_000)
        try vault.recordAssertion(credentialID: counted.credentialID, signCount: 4, at: Date(vaultMillis: 3_000))
        XCTAssertTrue(vault.events.pendingUses.isEmpty)
        XCTAssertEqual(try vault.passkey(id: counted.credentialID)?.signCount, 4)
        let removed = try insert(vault, id: 7, created: 1_000)
        try vault.recordAssertion(credentialID: removed.credentialID, signCount: 0, at: Date(vaultMillis: 3_000), deferred: true)
        XCTAssertTrue(try vault.removePasskey(credentialID: removed.credentialID))
        XCTAssertTrue(vault.events.pendingUses.isEmpty)
        try vault.flushEvents()
        XCTAssertNil(try vault.passkey(id: removed.credentialID))
    }

    /// A batch of last uses writes each time into the record the held vault kept of that passkey (`PasskeyRecordCache`)
    /// instead of emptying the cache: an assertion loop reads no SQL for a passkey it read once, batch after batch.
    func testABatchOfLastUsesKeepsTheRecordsReadByIDWithTheirNewTimes() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)), exclusive: true)
        let used = try insert(vault, id: 8, created: 1_000)
        let other = try insert(vault, id: 9, created: 1_000)
        XCTAssertEqual(try vault.allPasskeys().count, 2, "moved into passkeys")
        XCTAssertNil(try vault.passkey(id: used.credentialID)?.lastUsedAt)   // read by ID, and kept
        XCTAssertNil(try vault.passkey(id: other.credentialID)?.lastUsedAt)
        try vault.recordAssertion(credentialID: used.credentialID, signCount: 0, at: Date(vaultMillis: 5_000), deferred: true)
        try vault.flushEvents()
        XCTAssertTrue(vault.events.pendingUses.isEmpty, "written")
        let statements = LockedBox<[String]>([])
        try vault.locked { () throws(VaultError) in vault.db.observer = { sql in if sql.contains("passkeys") { statements.update { $0.append(sql) } } } }
        XCTAssertEqual(try vault.passkey(id: used.credentialID)?.lastUsedAt, Date(vaultMillis: 5_000))
        XCTAssertNil(try vault.passkey(id: other.credentialID)?.lastUsedAt)
        try vault.locked { () throws(VaultError) in vault.db.observer = nil }
        XCTAssertEqual(statements.get(), [], "both read from the records kept")
        vault.close()
        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)))
        XCTAssertEqual(try reopened.passkey(id: used.credentialID)?.lastUsedAt, Date(vaultMillis: 5_000), "in the file too")
        XCTAssertNil(try reopened.passkey(id: other.credentialID)?.lastUsedAt)
    }

    /// A batch of uses moves the staged registrations only for a use of one of them: an assertion loop after a burst
    /// of registrations does not move the burst at its first batch; a use of a passkey still staged is written all
    /// the same.
    func testABatchOfUsesMovesStagedRegistrationsOnlyForAUseOfOne() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)), exclusive: true)
        let used = try insert(vault, id: 10, created: 1_000)
        XCTAssertEqual(try vault.allPasskeys().count, 1, "moved into passkeys")
        let staged = try insert(vault, id: 11, created: 1_000)
        // Moves this thread runs (the staged batch's delayed move runs on another).
        let me = pthread_self()
        let moves = LockedBox(0)
        try vault.locked { () throws(VaultError) in
            vault.db.observer = { sql in if sql == Vault.moveStagedSQL, pthread_equal(pthread_self(), me) != 0 { moves.update { $0 += 1 } } }
        }
        try vault.recordAssertion(credentialID: used.credentialID, signCount: 0, at: Date(vaultMillis: 5_000), deferred: true)
        try vault.flushEvents()
        XCTAssertEqual(moves.get(), 0, "a use of a moved passkey moves nothing")
        try vault.recordAssertion(credentialID: staged.credentialID, signCount: 0, at: Date(vaultMillis: 6_000), deferred: true)
        try vault.flushEvents()
        try vault.locked { () throws(VaultError) in vault.db.observer = nil }
        vault.close()
        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)))
        XCTAssertEqual(try reopened.passkey(id: used.credentialID)?.lastUsedAt, Date(vaultMillis: 5_000))
        XCTAssertEqual(try reopened.passkey(id: staged.credentialID)?.lastUsedAt, Date(vaultMillis: 6_000), "moved for its use, then written")
    }
}
