import CSQLite
import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// A held vault's registrations: appended to its staging log, moved into `passkeys` in batches (`Vault+Staging`),
/// never missed by any read meanwhile, and never lost or moved twice by a crash.
final class StagedRegistrationTests: XCTestCase {
    let key = Array(repeating: UInt8(7), count: 32)
    let signing = try! SigningKeys.generate(.es256)

    func record(_ n: Int, user: Int? = nil, rpID: String = "example.com") -> PasskeyRecord {
        let u = user ?? n
        return PasskeyRecord(credentialID: SecureRandom.bytes(16), rpID: rpID, userHandle: Array("user-\(u)".utf8),
                             userName: "user\(u)@example.com", displayName: "User \(u)", algorithm: .es256,
                             publicKey: signing.publicKey, createdAt: Date(vaultMillis: 1_800_000_000_000 + Int64(n)))
    }

    func rows(_ vault: Vault, _ table: String) -> Int { rawRowCount(vault, table) }

    func held() throws -> (Vault, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        return (try Vault.open(path: directory.file("vault.db"), key: .raw(key), exclusive: true), directory)
    }

    func testAHeldVaultAppendsARegistrationToItsStagingLogAndMovesItWithTheNextBatch() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let r = record(1)
        try vault.insertPasskey(r, privateKey: signing.pkcs8)
        XCTAssertEqual(stagedInFile(vault), 1)
        XCTAssertEqual(rows(vault, "passkeys"), 0)
        // What a ceremony reads by ID or counts by account sees it where it is.
        XCTAssertEqual(try vault.passkey(id: r.credentialID), r)
        XCTAssertEqual(try vault.privateKey(for: r.credentialID), signing.pkcs8)
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: "example.com", userHandle: r.userHandle, userName: "other", excluding: []), 1)
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: "example.com", userHandle: [9], userName: r.userName, excluding: []), 1)
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: "example.com", userHandle: r.userHandle, userName: r.userName,
                                                     excluding: [r.credentialID]), 0)
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: "other.example", userHandle: r.userHandle, userName: r.userName, excluding: []), 0)
        XCTAssertEqual(try vault.scoped(to: "other").countAccountPasskeys(rpID: "example.com", userHandle: r.userHandle,
                                                                         userName: r.userName, excluding: []), 0)
        XCTAssertNil(try vault.scoped(to: "other").passkey(id: r.credentialID), "another profile's passkey")
        let deadline = Date().addingTimeInterval(5)
        while stagedInFile(vault) > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(stagedInFile(vault), 0, "moved by the batch")
        XCTAssertEqual(rows(vault, "passkeys"), 1)
        XCTAssertTrue(try vault.locked { () throws(VaultError) in vault.connection.staged.isEmpty })
        XCTAssertEqual(try vault.passkey(id: r.credentialID), r)
    }

    func testAStagedRegistrationIsInTheFileWhenTheCallReturns() throws {
        let (vault, directory) = try held()
        defer { vault.close() }
        let r = record(1)
        try vault.insertPasskey(r, privateKey: signing.pkcs8)
        // The files as a crash right now would leave them, recovered by SQLite; opening moves the row.
        let copy = TemporaryDirectory()
        for name in ["vault.db", "vault.db-wal", "vault.db-staged"] { try FileManager.default.copyItem(atPath: directory.file(name), toPath: copy.file(name)) }
        let recovered = try Vault.open(path: copy.file("vault.db"), key: .raw(key))
        defer { recovered.close() }
        XCTAssertEqual(stagedInFile(recovered), 0)
        XCTAssertEqual(rows(recovered, "passkeys"), 1)
        XCTAssertEqual(try recovered.allPasskeys(), [r])
        XCTAssertEqual(try recovered.privateKey(for: r.credentialID), signing.pkcs8)
    }

    /// The vault's files as a crash right now would leave them, in a directory of their own.
    func crashCopy(_ directory: TemporaryDirectory, log: [UInt8]? = nil) throws -> TemporaryDirectory {
        let copy = TemporaryDirectory()
        for name in ["vault.db", "vault.db-wal"] { try FileManager.default.copyItem(atPath: directory.file(name), toPath: copy.file(name)) }
        if let log {
            try Data(log).write(to: URL(fileURLWithPath: copy.file("vault.db-staged")))
        } else if FileManager.default.fileExists(atPath: directory.file("vault.db-staged")) {
            try FileManager.default.copyItem(atPath: directory.file("vault.db-staged"), toPath: copy.file("vault.db-staged"))
        }
        return copy
    }

    func logBytes(_ directory: TemporaryDirectory) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("vault.db-staged"))))
    }

    func testARecordCutShortByACrashIsDroppedAndTheWholeOnesBeforeItMove() throws {
        let (vault, directory) = try held()
        defer { vault.close() }
        let a = record(1), b = record(2)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        let first = try logBytes(directory)
        try vault.insertPasskey(b, privateKey: signing.pkcs8)
        let both = try logBytes(directory)
        // A third record whose write stopped part way (never acknowledged): its first 40 bytes.
        let cut = try crashCopy(directory, log: both + first.prefix(40))
        let recovered = try Vault.open(path: cut.file("vault.db"), key: .raw(key))
        XCTAssertEqual(Set(try recovered.allPasskeys().map(\.credentialID)), [a.credentialID, b.credentialID])
        recovered.close()
        // The second record's bytes damaged: its checksum fails, and reading stops there.
        var damaged = both
        damaged[first.count + 30] ^= 0xFF
        let bad = try crashCopy(directory, log: damaged)
        let partial = try Vault.open(path: bad.file("vault.db"), key: .raw(key))
        defer { partial.close() }
        XCTAssertEqual(try partial.allPasskeys().map(\.credentialID), [a.credentialID])
        XCTAssertEqual(try partial.privateKey(for: a.credentialID), signing.pkcs8)
    }

    func testAMoveCommittedBeforeTheLogWasEmptiedMovesNothingTwiceAndBringsNothingBack() throws {
        let (vault, directory) = try held()
        defer { vault.close() }
        let a = record(1), b = record(2)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        try vault.insertPasskey(b, privateKey: signing.pkcs8)
        let log = try logBytes(directory)
        XCTAssertEqual(try vault.allPasskeys().count, 2)  // moved, the mark committed, the log emptied
        XCTAssertEqual(try logBytes(directory).count, 0)
        XCTAssertTrue(try vault.removePasskey(credentialID: b.credentialID))
        // A crash between the move's commit and the log's emptying: the records are still in the file.
        let copy = try crashCopy(directory, log: log)
        let recovered = try Vault.open(path: copy.file("vault.db"), key: .raw(key))
        defer { recovered.close() }
        XCTAssertEqual(try recovered.allPasskeys(), [a], "a moved once, b deleted stays deleted")
    }

    func testAShadowingRegistrationLeftInTheLogShadowsTheAccountsOlderPasskeysWhenMoved() throws {
        let (vault, directory) = try held()
        defer { vault.close() }
        let a = record(1, user: 1), b = record(2, user: 1), c = record(3, user: 1)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        _ = try vault.allPasskeys()  // a moved
        XCTAssertEqual(try vault.insertPasskey(b, privateKey: signing.pkcs8, prior: .shadowed).map(\.credentialID), [a.credentialID])
        XCTAssertEqual(try vault.insertPasskey(c, privateKey: signing.pkcs8, prior: .shadowed).map(\.credentialID), [b.credentialID])
        XCTAssertEqual(stagedInFile(vault), 2)
        func check(_ v: Vault) throws {
            let byID = Dictionary(uniqueKeysWithValues: try v.allPasskeys().map { ($0.credentialID, $0.shadowedBy) })
            XCTAssertEqual(byID[a.credentialID], .some(b.credentialID))
            XCTAssertEqual(byID[b.credentialID], .some(c.credentialID))
            XCTAssertEqual(byID[c.credentialID], .some(nil))
        }
        let copy = try crashCopy(directory)
        // And as if the crash came between b's record and its UPDATE of a: the move shadows a again.
        let db = try SQLiteDatabase(path: copy.file("vault.db"), create: false)
        try db.execute("UPDATE passkeys SET shadowed_by = NULL")
        db.close()
        let recovered = try Vault.open(path: copy.file("vault.db"), key: .raw(key))
        defer { recovered.close() }
        try check(recovered)
        try check(vault)
    }

    func testASharedOpenMovesALeftoverLogAndTheNextHolderEmptiesIt() throws {
        let (vault, directory) = try held()
        defer { vault.close() }
        let a = record(1)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        let copy = try crashCopy(directory)
        let shared = try Vault.open(path: copy.file("vault.db"), key: .raw(key))
        XCTAssertEqual(try shared.allPasskeys(), [a])
        shared.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy.file("vault.db-staged")), "a shared open leaves the file")
        let again = try Vault.open(path: copy.file("vault.db"), key: .raw(key))
        XCTAssertEqual(try again.allPasskeys(), [a], "moved once")
        again.close()
        let holder = try Vault.open(path: copy.file("vault.db"), key: .raw(key), exclusive: true)
        XCTAssertEqual(try logBytes(copy).count, 0, "the holder's own log, empty")
        XCTAssertEqual(try holder.allPasskeys(), [a])
        holder.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy.file("vault.db-staged")), "gone with the holder")
    }

    func testWhatAnOlderBuildLeftInTheStagedTableIsMovedAtOpen() throws {
        let directory = TemporaryDirectory()
        let a = record(1)
        let shared = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        try shared.insertPasskey(a, privateKey: signing.pkcs8)
        shared.close()
        // The row as a build before the staging log left it: committed into `staged_passkeys`, never moved.
        let db = try SQLiteDatabase(path: directory.file("vault.db"), create: false)
        try db.execute("INSERT INTO staged_passkeys (\(Vault.stagedColumns)) SELECT \(Vault.stagedColumns) FROM passkeys; DELETE FROM passkeys;")
        db.close()
        let (vault, _) = (try Vault.open(path: directory.file("vault.db"), key: .raw(key), exclusive: true), directory)
        defer { vault.close() }
        XCTAssertEqual(rows(vault, "staged_passkeys"), 0)
        XCTAssertEqual(try vault.allPasskeys(), [a])
        XCTAssertEqual(try vault.privateKey(for: a.credentialID), signing.pkcs8)
    }

    func testOpeningAVaultWithNothingStagedTakesNoWriteLock() throws {
        // Every open reads the move's mark; only a log with records after it begins a transaction. A CLI read of a
        // vault another process is writing must not wait for the writer.
        let directory = TemporaryDirectory()
        let made = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        try made.insertPasskey(record(1), privateKey: signing.pkcs8)
        made.close()
        let writer = try SQLiteDatabase(path: directory.file("vault.db"), create: false)
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO meta (key, value) VALUES ('other', x'00');")
        defer {
            try? writer.execute("ROLLBACK")
            writer.close()
        }
        let started = Date()
        let reader = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { reader.close() }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "waited for the writer")
        XCTAssertEqual(try reader.allPasskeys().count, 1)
    }

    func testAWholeRecordOfAnotherShapeFailsTheOpenByNameAndMovesNothing() throws {
        // A crash cannot write it (its checksum holds): the file was written by something else.
        let directory = TemporaryDirectory()
        let made = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        try made.insertPasskey(record(1), privateKey: signing.pkcs8)
        made.close()
        let log = try StagingLog(vaultPath: directory.file("vault.db"))
        try log.append(seq: 1, shadows: false, values: [.int(1), .text("two"), .blob([3])])
        log.close()
        let before = fileBytes(directory.file("vault.db"))
        XCTAssertThrowsError(try Vault.open(path: directory.file("vault.db"), key: .raw(key))) {
            XCTAssertEqual(($0 as? VaultError)?.code, .corrupt, "\($0)")
        }
        XCTAssertEqual(fileBytes(directory.file("vault.db")), before)
    }

    func testEveryOtherStatementOnPasskeysMovesTheStagedOnesFirst() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let a = record(1), b = record(2, user: 1)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        try vault.insertPasskey(b, privateKey: signing.pkcs8, prfSecret: Array(repeating: 4, count: 32))
        XCTAssertEqual(try vault.passkeys(rpID: "example.com").map(\.credentialID), [a.credentialID, b.credentialID])
        XCTAssertEqual(stagedInFile(vault), 0)
        try vault.insertPasskey(record(3), privateKey: signing.pkcs8)
        XCTAssertEqual(try vault.offeredPasskeys(rpID: "example.com", limit: 1).map(\.userName), ["user3@example.com"])
        let c = record(4)
        try vault.insertPasskey(c, privateKey: signing.pkcs8)
        try vault.setHidden(credentialID: c.credentialID, hidden: true, at: Date(vaultMillis: 5))
        XCTAssertEqual(try vault.passkey(id: c.credentialID)?.hidden, true)
        let d = record(5)
        try vault.insertPasskey(d, privateKey: signing.pkcs8)
        XCTAssertEqual(try vault.prfSecret(for: b.credentialID), Array(repeating: 4, count: 32))
        let e = record(6)
        try vault.insertPasskey(e, privateKey: signing.pkcs8)
        try vault.setLargeBlob([1, 2, 3], for: e.credentialID)
        XCTAssertEqual(try vault.largeBlob(for: e.credentialID), [1, 2, 3])
        let f = record(7)
        try vault.insertPasskey(f, privateKey: signing.pkcs8)
        XCTAssertTrue(try vault.removePasskey(credentialID: f.credentialID))
        XCTAssertNil(try vault.passkey(id: f.credentialID))
        // An incrementing counter's assertion is committed by its UPDATE on `passkeys`.
        let g = record(8)
        try vault.insertPasskey(g, privateKey: signing.pkcs8)
        try vault.recordAssertion(credentialID: g.credentialID, signCount: 1, at: Date(vaultMillis: 9))
        XCTAssertEqual(try vault.passkey(id: g.credentialID)?.signCount, 1)
        // A deferred last use of a staged passkey is seen at once and lands after the move.
        let h = record(9)
        try vault.insertPasskey(h, privateKey: signing.pkcs8)
        try vault.recordAssertion(credentialID: h.credentialID, signCount: 0, at: Date(vaultMillis: 77), deferred: true)
        XCTAssertEqual(try vault.passkey(id: h.credentialID)?.lastUsedAt, Date(vaultMillis: 77))
        try vault.flushUses()
        XCTAssertEqual(stagedInFile(vault), 0)
        XCTAssertEqual(try vault.passkeys(rpID: "example.com", includeHidden: true).first { $0.credentialID == h.credentialID }?.lastUsedAt,
                       Date(vaultMillis: 77))
    }

    func testADuplicateCredentialIDIsRefusedWhetherStagedOrMoved() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let a = record(1)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        XCTAssertThrowsError(try vault.insertPasskey(a, privateKey: signing.pkcs8)) { XCTAssertEqual(($0 as? VaultError)?.code, .duplicate) }
        _ = try vault.allPasskeys()
        XCTAssertThrowsError(try vault.insertPasskey(a, privateKey: signing.pkcs8)) { XCTAssertEqual(($0 as? VaultError)?.code, .duplicate) }
        XCTAssertEqual(stagedInFile(vault), 0)
        XCTAssertEqual(try vault.allPasskeys(), [a])
    }

    func testARollbackThatUndidAMoveMovesTheRowsAgain() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let a = record(1)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        XCTAssertThrowsError(try vault.transaction { () throws(VaultError) in
            XCTAssertEqual(try vault.passkeys(rpID: "example.com").count, 1)  // moves them, inside the transaction
            throw VaultError(.storage, "abandoned on purpose")
        })
        XCTAssertEqual(stagedInFile(vault), 0)
        XCTAssertEqual(rows(vault, "passkeys"), 1)
        XCTAssertEqual(try vault.passkey(id: a.credentialID), a)
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: "example.com", userHandle: a.userHandle, userName: a.userName, excluding: []), 1)
    }

    func testAMoveRunsWithTheBulkPageCacheAndGivesItBack() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        func cacheSize() throws -> Int64 {
            var size: Int64 = 0
            try vault.locked { () throws(VaultError) in try vault.db.query("PRAGMA cache_size") { row in size = row.int(0) } }
            return size
        }
        // The observer runs on whichever thread moves, the delayed move's included, holding the vault's lock: what it
        // records, and the connection's cache size, are read under that lock too.
        var duringMoves: [Int] = []
        vault.db.observer = { sql in if sql == Vault.setStagedMarkSQL { duringMoves.append(vault.db.cacheKiB) } }
        func moves() throws -> ([Int], Int) { try vault.locked { () throws(VaultError) in (duringMoves, vault.db.cacheKiB) } }
        for n in 0..<3 { try vault.insertPasskey(record(n), privateKey: signing.pkcs8) }
        XCTAssertEqual(try vault.passkeys(rpID: "example.com").count, 3)  // a statement that moves them first
        XCTAssertEqual(try moves().0, [Vault.bulkCacheKiB])
        XCTAssertEqual(try cacheSize(), -2000)
        // An import's moves (past the staged limit) run inside the import's own bulk cache, given back once, at its end.
        // (The 5 left staged may already have moved with the delayed move, in a bulk cache of its own, on a slow build.)
        try vault.locked { () throws(VaultError) in duringMoves = [] }
        try vault.insertPasskeys((0..<(Vault.stagedLimit + 5)).map { (record(100 + $0), signing.pkcs8) })
        let (moved, kib) = try moves()
        XCTAssertEqual(moved.first, Vault.bulkCacheKiB)
        XCTAssertTrue(moved.count <= 2 && moved.allSatisfy { $0 == Vault.bulkCacheKiB }, "\(moved)")
        XCTAssertEqual(kib, 2000)
        XCTAssertEqual(try cacheSize(), -2000)
    }

    func testAtMostTheLimitWaitsAndASharedVaultNeverStages() throws {
        let (vault, _) = try held()
        for n in 0..<(Vault.stagedLimit + 10) { try vault.insertPasskey(record(n), privateKey: signing.pkcs8) }
        XCTAssertLessThan(try vault.locked { () throws(VaultError) in vault.connection.staged.count }, Vault.stagedLimit)
        XCTAssertLessThan(stagedInFile(vault), Vault.stagedLimit)
        vault.close()
        let (shared, _) = try makeTestVault()
        defer { shared.close() }
        try shared.insertPasskey(record(1), privateKey: signing.pkcs8)
        XCTAssertEqual(stagedInFile(shared), 0)
        XCTAssertEqual(rows(shared, "passkeys"), 1)
    }

    func testAPasskeyReadByIDIsReadAfreshAfterAnyChange() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let a = record(1)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        _ = try vault.allPasskeys()  // moved
        XCTAssertEqual(try vault.passkey(id: a.credentialID), a)
        XCTAssertEqual(try vault.passkey(id: a.credentialID), a, "from memory now")
        XCTAssertNil(try vault.scoped(to: "other").passkey(id: a.credentialID))
        try vault.setHidden(credentialID: a.credentialID, hidden: true, at: Date(vaultMillis: 5))
        XCTAssertEqual(try vault.passkey(id: a.credentialID)?.hidden, true)
        try vault.updateUser(credentialID: a.credentialID, name: "renamed", displayName: "Renamed")
        XCTAssertEqual(try vault.passkey(id: a.credentialID)?.userName, "renamed")
        try vault.recordAssertion(credentialID: a.credentialID, signCount: 3, at: Date(vaultMillis: 6))
        XCTAssertEqual(try vault.passkey(id: a.credentialID)?.signCount, 3)
        try vault.recordAssertion(credentialID: a.credentialID, signCount: 0, at: Date(vaultMillis: 8), deferred: true)
        XCTAssertEqual(try vault.passkey(id: a.credentialID)?.lastUsedAt, Date(vaultMillis: 8))
        // A change read inside a transaction that rolls back is not kept.
        XCTAssertThrowsError(try vault.transaction { () throws(VaultError) in
            try vault.setHidden(credentialID: a.credentialID, hidden: false, at: Date(vaultMillis: 7))
            XCTAssertEqual(try vault.passkey(id: a.credentialID)?.hidden, false)
            throw VaultError(.storage, "abandoned on purpose")
        })
        XCTAssertEqual(try vault.passkey(id: a.credentialID)?.hidden, true)
        XCTAssertTrue(try vault.removePasskey(credentialID: a.credentialID))
        XCTAssertNil(try vault.passkey(id: a.credentialID))
    }

    func testClosingMovesTheStagedRows() throws {
        let (vault, directory) = try held()
        try vault.insertPasskey(record(1), privateKey: signing.pkcs8)
        vault.close()
        let db = try SQLiteDatabase(path: directory.file("vault.db"), create: false)
        defer { db.close() }
        var counts: [Int64] = []
        try db.query("SELECT (SELECT count(*) FROM staged_passkeys), (SELECT count(*) FROM passkeys)") { counts = [$0.int(0), $0.int(1)] }
        XCTAssertEqual(counts, [0, 1])
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("vault.db-staged")), "every record moved: the log goes")
    }
}

/// Staged registrations in the vault's files: the log's records after the move's mark, read as the next open would.
func stagedInFile(_ vault: Vault) -> Int {
    vault.connection.enter()
    defer { vault.connection.leave() }
    var statement: OpaquePointer?
    var mark: Int64 = 0
    if sqlite3_prepare_v2(vault.db.handle, Vault.stagedMarkSQL, -1, &statement, nil) == SQLITE_OK {
        if sqlite3_step(statement) == SQLITE_ROW { mark = sqlite3_column_int64(statement, 0) }
        sqlite3_finalize(statement)
    }
    return (try? Vault.loggedRecords(vault.connection, after: mark).count) ?? -1
}

/// Rows in a table, read with SQLite's own API: the vault's `query` would move staged rows first.
func rawRowCount(_ vault: Vault, _ table: String) -> Int {
    vault.connection.enter()
    defer { vault.connection.leave() }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(vault.db.handle, "SELECT count(*) FROM \(table)", -1, &statement, nil) == SQLITE_OK else { return -1 }
    defer { sqlite3_finalize(statement) }
    guard sqlite3_step(statement) == SQLITE_ROW else { return -1 }
    return Int(sqlite3_column_int64(statement, 0))
}
