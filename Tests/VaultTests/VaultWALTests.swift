import CSQLite
import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// The WAL as the vault writes it: frames gathered per commit (the "credemu" VFS) and checkpoints run by
/// `WALWriteback` instead of SQLite's auto-checkpoint.
final class VaultWALTests: XCTestCase {
    let key = Array(repeating: UInt8(7), count: 32)

    func insertPasskeys(_ vault: Vault, count: Int, from first: Int = 0) throws {
        let signing = try SigningKeys.generate(.es256)
        for n in first..<first + count {
            let record = PasskeyRecord(credentialID: SecureRandom.bytes(16), rpID: "example.com", userHandle: Array("user-\(n)".utf8),
                                       userName: "user\(n)@example.com", displayName: "User \(n)", algorithm: .es256,
                                       publicKey: signing.publicKey, createdAt: Date(vaultMillis: 1_800_000_000_000 + Int64(n)))
            try vault.insertPasskey(record, privateKey: signing.pkcs8)
        }
    }

    func testTheVaultsConnectionIsOnTheCredemuVFS() throws {
        // Should the VFS fail to register, SQLite would quietly open the default one and every test here still pass.
        let directory = TemporaryDirectory()
        let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { vault.close() }
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        XCTAssertEqual(sqlite3_file_control(vault.db.handle, "main", SQLITE_FCNTL_VFS_POINTER, &vfs), SQLITE_OK)
        XCTAssertEqual(vfs?.pointee.zName.map { String(cString: $0) }, "credemu")
    }

    func testACommitLargerThanOneWriteCallLandsWhole() throws {
        // 800 passkeys and 3000 events in single transactions: far more WAL than one buffered write may hold.
        let directory = TemporaryDirectory()
        let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        try vault.transaction { () throws(VaultError) in
            do { try insertPasskeys(vault, count: 800) } catch { throw VaultError(.storage, "\(error)") }
        }
        for n in 0..<3000 {
            try vault.appendEvent(kind: "test", outcome: "ok", reason: "none", detail: .object([("n", .number(Double(n)))]),
                                  at: Date(vaultMillis: Int64(n)))
        }
        try vault.flushEvents()
        vault.close()

        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { reopened.close() }
        XCTAssertEqual(try reopened.allPasskeys().count, 800)
        XCTAssertEqual(try reopened.events(kind: "test").count, 3000)
    }

    func testARolledBackTransactionLeavesNothingAndTheNextCommitLands() throws {
        let directory = TemporaryDirectory()
        let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        XCTAssertThrowsError(try vault.transaction { () throws(VaultError) in
            do { try insertPasskeys(vault, count: 600) } catch { throw VaultError(.storage, "\(error)") }
            throw VaultError(.storage, "abandoned on purpose")
        })
        try insertPasskeys(vault, count: 1, from: 1000)
        vault.close()

        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { reopened.close() }
        XCTAssertEqual(try reopened.allPasskeys().map(\.userName), ["user1000@example.com"])
    }

    func testACommitIsReadableByAnotherConnectionBeforeTheFirstCloses() throws {
        // The second connection reads the frames from the file: a commit held back in a buffer would not be there.
        let directory = TemporaryDirectory()
        let writer = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { writer.close() }
        try insertPasskeys(writer, count: 40)
        let reader = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { reader.close() }
        XCTAssertEqual(try reader.allPasskeys().count, 40)
        try insertPasskeys(writer, count: 1, from: 40)
        XCTAssertEqual(try reader.passkeys(rpID: "example.com").count, 41)
        XCTAssertEqual(try reader.privateKey(for: try writer.allPasskeys()[0].credentialID).count > 0, true)
    }

    func testCheckpointsKeepTheWALBounded() throws {
        // A held vault appends each registration to its staging log, then moves them into `passkeys` in batches of
        // 4,096 (some 800 frames each into a young vault): 48,000 of them would grow the WAL past 40 MB if nothing
        // checkpointed it. A batch's move is one commit, which may carry the WAL past the checkpoint's threshold
        // before it runs.
        let directory = TemporaryDirectory()
        let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(key), exclusive: true)
        for round in 0..<4 {
            try insertPasskeys(vault, count: 12_000, from: round * 12_000)
            let walSize = (try FileManager.default.attributesOfItem(atPath: directory.file("vault.db-wal"))[.size] as? Int) ?? 0
            // Slack for the batch move that carries the WAL past the threshold (a slow build, ThreadSanitizer's,
            // moves by count rather than by time).
            XCTAssertLessThan(walSize, Int(WALWriteback.checkpointFrames + 2000) * (4096 + 24))
        }
        // The last batches may still be moving on their own thread (`Vault.startMove`): a read of passkeys waits for
        // them and moves the rest, and the commit that carries the WAL past the threshold checkpoints it.
        XCTAssertEqual(try vault.allPasskeys().count, 48_000)
        let databaseSize = (try FileManager.default.attributesOfItem(atPath: directory.file("vault.db"))[.size] as? Int) ?? 0
        XCTAssertGreaterThan(databaseSize, 500_000, "a checkpoint copied passkeys into the database file")
        vault.close()
        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { reopened.close() }
        XCTAssertEqual(try reopened.allPasskeys().count, 48_000)
    }

    /// The vault's files as a crash right now would leave them: copied while the vault is open, then recovered
    /// by SQLite from the copy (which checks every WAL frame's checksum).
    func crashCopy(of directory: TemporaryDirectory) throws -> Vault {
        let copy = TemporaryDirectory()
        for name in ["vault.db", "vault.db-wal"] {
            try FileManager.default.copyItem(atPath: directory.file(name), toPath: copy.file(name))
        }
        retained.append(copy)
        return try Vault.open(path: copy.file("vault.db"), key: .raw(key))
    }
    var retained: [TemporaryDirectory] = []

    func testEveryCommitIsOnDiskWhenItReturnsEvenAfterChecksumRewrites() throws {
        // A tiny page cache makes a large transaction spill pages to the WAL and write some of them again, so
        // SQLite rewrites frame checksums in place before the commit: the case where a commit frame's header
        // is written without its page.
        let directory = TemporaryDirectory()
        let vault = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { vault.close() }
        try vault.db.execute("PRAGMA cache_size=8")
        try insertPasskeys(vault, count: 3)
        var expected = try crashCopy(of: directory)
        XCTAssertEqual(try expected.allPasskeys().count, 3, "a small commit is on disk when it returns")
        expected.close()

        try vault.transaction { () throws(VaultError) in
            do { try insertPasskeys(vault, count: 400, from: 3) } catch { throw VaultError(.storage, "\(error)") }
            for record in try vault.allPasskeys().prefix(200) {
                try vault.setHidden(credentialID: record.credentialID, hidden: true, at: Date(vaultMillis: 9))
            }
        }
        expected = try crashCopy(of: directory)
        defer { expected.close() }
        XCTAssertEqual(try expected.allPasskeys().count, 403)
        XCTAssertEqual(try expected.passkeys(rpID: "example.com").count, 203, "the rewritten pages came through too")
    }
}
