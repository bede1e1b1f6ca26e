import CSQLite
import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// A held vault's account counts kept in memory (`AccountCounts`) and its registrations that shadow in their own
/// commit (`Vault+Staging`): a page that registers one user over and over costs each create the same, and every
/// count and shadow is the one the file says.
final class AccountCountTests: XCTestCase {
    let key = Array(repeating: UInt8(7), count: 32)
    let signing = try! SigningKeys.generate(.es256)
    var n = 0

    func record(handle: String, name: String, rpID: String = "example.com") -> PasskeyRecord {
        n += 1
        return PasskeyRecord(credentialID: SecureRandom.bytes(16), rpID: rpID, userHandle: Array(handle.utf8), userName: name,
                             displayName: "D", algorithm: .es256, publicKey: signing.publicKey,
                             createdAt: Date(vaultMillis: 1_800_000_000_000 + Int64(n)))
    }

    func held() throws -> (Vault, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        return (try Vault.open(path: directory.file("vault.db"), key: .raw(key), exclusive: true), directory)
    }

    /// The count the finding means, read from the files with SQLite's own API and the staging log's reader (the
    /// vault's `query` would move staged rows and empty the counts): visible passkeys of the profile on the RP with
    /// the handle or the name, not among `excluding`.
    func fileCount(_ vault: Vault, profile: String = "default", rpID: String = "example.com", handle: String, name: String,
                   excluding: [[UInt8]] = []) -> Int {
        vault.connection.enter()
        defer { vault.connection.leave() }
        let hex = { (b: [UInt8]) in b.map { String(format: "%02X", $0) }.joined() }
        let list = excluding.map { "'\(hex($0))'" }.joined(separator: ",")
        let sql = """
            SELECT count(*), (SELECT value FROM meta WHERE key = 'staged_through') FROM passkeys WHERE profile = '\(profile)' \
            AND rp_id = '\(rpID)' AND hidden = 0 AND (user_handle = X'\(hex(Array(handle.utf8)))' OR user_name = '\(name)') \
            AND hex(credential_id) NOT IN (\(list))
            """
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(vault.db.handle, sql, -1, &statement, nil) == SQLITE_OK else { return -1 }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return -1 }
        let moved = Int(sqlite3_column_int64(statement, 0)), mark = sqlite3_column_int64(statement, 1)
        guard let records = try? Vault.loggedRecords(vault.connection, after: mark) else { return -1 }
        // A record's values are `Vault.stagedColumns`': credential ID 0, RP ID 1, user handle 2, user name 3, hidden 14, profile 21.
        let staged = records.filter { r in
            guard case .blob(let id) = r.values[0], case .text(let rp) = r.values[1], case .blob(let h) = r.values[2],
                  case .text(let n) = r.values[3], case .int(let hidden) = r.values[14], case .text(let p) = r.values[21] else { return false }
            return p == profile && rp == rpID && hidden == 0 && (h == Array(handle.utf8) || n == name) && !excluding.contains(id)
        }
        return moved + staged.count
    }

    func rows(_ vault: Vault, _ table: String) -> Int { rawRowCount(vault, table) }

    func count(_ vault: Vault, handle: String, name: String, excluding: [[UInt8]] = []) throws -> Int {
        try vault.countAccountPasskeys(rpID: "example.com", userHandle: Array(handle.utf8), userName: name, excluding: excluding)
    }

    /// The statements `body` runs on the vault.
    func statements(_ vault: Vault, _ body: () throws -> Void) rethrows -> [String] {
        var seen: [String] = []
        vault.db.observer = { seen.append($0) }
        defer { vault.db.observer = nil }
        try body()
        return seen
    }

    func testRegisteringOneUserNameOverAndOverCountsItsPasskeysOnceNotOnEveryCreate() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        for i in 0..<40 {
            // The shim's bench: a new user handle each time, one user name.
            let handle = "h\(i)"
            let ran = try statements(vault) {
                XCTAssertEqual(try count(vault, handle: handle, name: "bench"), i)
            }
            if i > 1 { XCTAssertEqual(ran, [], "create \(i): the count is kept, not walked again") }
            try vault.insertPasskey(record(handle: handle, name: "bench"), privateKey: signing.pkcs8)
        }
        XCTAssertEqual(fileCount(vault, handle: "x", name: "bench"), 40)
    }

    /// A count the filter cannot answer (a user name known on another RP, or a false "maybe") reads SQL and the staged
    /// mirror: it moves no staged row, which would commit five b-trees for a count.
    func testACountTheFilterCannotAnswerMovesNoStagedRow() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        try vault.insertPasskey(record(handle: "alice", name: "alice@x", rpID: "a.example"), privateKey: signing.pkcs8)
        try vault.insertPasskey(record(handle: "bob", name: "alice@x"), privateKey: signing.pkcs8)
        try vault.insertPasskey(record(handle: "alice", name: "carol@x"), privateKey: signing.pkcs8)
        XCTAssertEqual(try count(vault, handle: "alice", name: "alice@x"), 2)
        XCTAssertEqual(try count(vault, handle: "dave", name: "alice@x"), 1)
        XCTAssertEqual(stagedInFile(vault), 3, "nothing moved")
        XCTAssertEqual(fileCount(vault, handle: "alice", name: "alice@x"), 2)
    }

    func testAKeptCountIsTheFilesThroughHidesDeletesRenamesReplacesAndRollbacks() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        var mine: [PasskeyRecord] = []
        func check(_ what: String, line: UInt = #line) throws {
            for (handle, name) in [("alice", "alice@x"), ("other", "alice@x"), ("alice", "other"), ("bob", "bob@x"), ("bob", "alice@x")] {
                XCTAssertEqual(try count(vault, handle: handle, name: name), fileCount(vault, handle: handle, name: name),
                               "\(what): \(handle) \(name)", line: line)
                let listed = Array(mine.prefix(2).map(\.credentialID))
                XCTAssertEqual(try count(vault, handle: handle, name: name, excluding: listed + listed),
                               fileCount(vault, handle: handle, name: name, excluding: listed), "\(what), excluding: \(handle) \(name)", line: line)
            }
        }
        for (handle, name) in [("alice", "alice@x"), ("alice", "alice@x"), ("carol", "alice@x"), ("bob", "bob@x")] {
            let r = record(handle: handle, name: name)
            mine.append(r)
            try vault.insertPasskey(r, privateKey: signing.pkcs8)
        }
        try check("staged")
        _ = try vault.allPasskeys()
        try check("moved")
        try vault.insertPasskey(record(handle: "alice", name: "alice@x"), privateKey: signing.pkcs8, prior: .shadowed)
        try check("shadowing (a shadowed passkey still counts)")
        try vault.setHidden(credentialID: mine[0].credentialID, hidden: true, at: Date())
        try check("hidden")
        _ = try vault.hidePasskeys(rpID: "example.com", userHandle: Array("carol".utf8), notIn: [], at: Date())
        try check("hidden by a signal")
        _ = try vault.restorePasskeys(rpID: "example.com", userHandle: Array("carol".utf8), in: [mine[2].credentialID])
        try check("restored")
        _ = try vault.renameUser(rpID: "example.com", userHandle: Array("bob".utf8), name: "alice@x", displayName: nil)
        try check("renamed")
        try vault.updateUser(credentialID: mine[2].credentialID, name: "other", displayName: "O")
        try check("updated")
        _ = try vault.editUser(credentialID: mine[1].credentialID, name: "bob@x", displayName: "B")
        try check("edited")
        try vault.removePasskey(credentialID: mine[3].credentialID)
        try check("removed")
        try vault.insertPasskey(record(handle: "alice", name: "alice@x"), privateKey: signing.pkcs8, prior: .replaced)
        try check("replaced")
        XCTAssertThrowsError(try vault.transaction { () throws(VaultError) in
            try vault.insertPasskey(record(handle: "alice", name: "alice@x"), privateKey: signing.pkcs8)
            do { try check("inside a transaction") } catch { XCTFail("\(error)") }
            throw VaultError(.storage, "abandoned on purpose")
        })
        try check("rolled back")
        try vault.locked { () throws(VaultError) in try vault.db.execute("UPDATE passkeys SET hidden = 1") }
        try check("raw SQL")
    }

    func testAHeldVaultShadowsAStagedPasskeyWithTheNewOnesRecordWithoutMovingAnything() throws {
        let (vault, directory) = try held()
        let first = record(handle: "alice", name: "alice@x"), second = record(handle: "alice", name: "alice@x")
        XCTAssertEqual(try vault.insertPasskey(first, privateKey: signing.pkcs8, prior: .shadowed), [])
        let ran = try statements(vault) {
            XCTAssertEqual(try vault.insertPasskey(second, privateKey: signing.pkcs8, prior: .shadowed),
                           [ChangedPasskey(credentialID: first.credentialID, createdMillis: first.createdAt.vaultMillis)])
        }
        XCTAssertFalse(ran.contains(Vault.moveStagedSQL), "nothing moved: \(ran)")
        // The account's moved passkeys (none yet) shadowed by one statement; the staged one in the log's record.
        XCTAssertEqual(ran.filter { $0 == Vault.shadowPriorSQL }.count, 1, "\(ran)")
        XCTAssertFalse(ran.contains("COMMIT"), "no transaction: \(ran)")
        XCTAssertEqual(stagedInFile(vault), 2)
        XCTAssertNil(try vault.passkey(id: first.credentialID), "shadowed")
        XCTAssertEqual(try vault.passkey(id: first.credentialID, includeShadowed: true)?.shadowedBy, second.credentialID)
        XCTAssertEqual(try vault.countDiscoverablePasskeys(limit: 10), 1)
        // A third shadows the second only: the first keeps its own shadow.
        let third = record(handle: "alice", name: "alice@x")
        XCTAssertEqual(try vault.insertPasskey(third, privateKey: signing.pkcs8, prior: .shadowed).map(\.credentialID), [second.credentialID])
        vault.close()
        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(key))
        defer { reopened.close() }
        let stored = Dictionary(uniqueKeysWithValues: try reopened.allPasskeys().map { ($0.credentialID, $0.shadowedBy) })
        XCTAssertEqual(stored[first.credentialID], second.credentialID)
        XCTAssertEqual(stored[second.credentialID], third.credentialID)
        XCTAssertEqual(stored[third.credentialID], .some(nil))
        XCTAssertEqual(try reopened.offeredPasskeys(rpID: "example.com", limit: 10).map(\.credentialID), [third.credentialID])
    }

    func testAStagedRegistrationShadowsAMovedPasskeyAlreadyReadByID() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let first = record(handle: "alice", name: "alice@x"), second = record(handle: "alice", name: "alice@x")
        try vault.insertPasskey(first, privateKey: signing.pkcs8)
        _ = try vault.allPasskeys()  // moved
        XCTAssertEqual(try vault.passkey(id: first.credentialID), first)  // and now read from memory
        XCTAssertEqual(try vault.insertPasskey(second, privateKey: signing.pkcs8, prior: .shadowed).map(\.credentialID), [first.credentialID])
        XCTAssertNil(try vault.passkey(id: first.credentialID), "the record read before is not used once shadowed")
        XCTAssertEqual(try vault.passkeys(rpID: "example.com").first { $0.credentialID == first.credentialID }?.shadowedBy, second.credentialID)
    }

    /// A create that replaces (a security key's overwrite) moves the staged rows only when there is something to
    /// replace: the account filter's "maybe" alone (here an account whose only passkey is not discoverable) moves none.
    func testAReplacingCreateMovesStagedRowsOnlyWhenItReplacesOne() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        var server = record(handle: "alice", name: "alice@x")
        server.settings.discoverable = false
        try vault.insertPasskey(server, privateKey: signing.pkcs8)
        let first = record(handle: "alice", name: "alice@x")
        XCTAssertEqual(try vault.insertPasskey(first, privateKey: signing.pkcs8, prior: .replaced), [])
        XCTAssertEqual(stagedInFile(vault), 2, "nothing to replace, nothing moved")
        let second = record(handle: "alice", name: "alice@x")
        XCTAssertEqual(try vault.insertPasskey(second, privateKey: signing.pkcs8, prior: .replaced).map(\.credentialID), [first.credentialID])
        XCTAssertNil(try vault.passkey(id: first.credentialID, includeShadowed: true))
        XCTAssertEqual(Set(try vault.allPasskeys().map(\.credentialID)), [server.credentialID, second.credentialID])
    }

    /// One user registered over and over under a replacing pack (the reference pack): the older passkey, moved long
    /// ago, is deleted without moving the other accounts' staged registrations (each such create moved the whole
    /// staged batch first, so re-registering users ran at a fifth of the speed), and a lookup by its ID finds nothing.
    func testAReplacingCreateWhosePriorIsMovedLeavesOtherStagedRowsStaged() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let first = record(handle: "alice", name: "alice@x")
        try vault.insertPasskey(first, privateKey: signing.pkcs8, prior: .replaced)
        XCTAssertEqual(try vault.passkey(id: first.credentialID), first)  // read (and kept in the record cache)...
        _ = try vault.allPasskeys()  // ...and moved
        for n in 0..<3 { try vault.insertPasskey(record(handle: "u\(n)", name: "u\(n)@x"), privateKey: signing.pkcs8, prior: .replaced) }
        XCTAssertEqual(stagedInFile(vault), 3)
        let second = record(handle: "alice", name: "alice@x")
        XCTAssertEqual(try vault.insertPasskey(second, privateKey: signing.pkcs8, prior: .replaced).map(\.credentialID), [first.credentialID])
        XCTAssertEqual(stagedInFile(vault), 4, "the other accounts' registrations stay staged")
        XCTAssertNil(try vault.passkey(id: first.credentialID, includeShadowed: true))
        XCTAssertEqual(try vault.passkey(id: second.credentialID), second)
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: first.rpID, userHandle: first.userHandle, userName: first.userName, excluding: []), 1)
        XCTAssertEqual(try vault.allPasskeys().count, 4)
    }

    func testARegistrationThatFailsShadowsNothing() throws {
        let (vault, _) = try held()
        defer { vault.close() }
        let first = record(handle: "alice", name: "alice@x"), second = record(handle: "alice", name: "alice@x")
        try vault.insertPasskey(first, privateKey: signing.pkcs8)
        try vault.insertPasskey(second, privateKey: signing.pkcs8)
        _ = try vault.allPasskeys()  // both moved
        // The attacker's create reuses the second's credential ID under the same account.
        var again = record(handle: "alice", name: "alice@x")
        again.credentialID = second.credentialID
        XCTAssertThrowsError(try vault.insertPasskey(again, privateKey: signing.pkcs8, prior: .shadowed)) {
            XCTAssertEqual(($0 as? VaultError)?.code, .duplicate)
        }
        XCTAssertEqual(try vault.passkey(id: first.credentialID), first)
        XCTAssertEqual(try vault.passkey(id: second.credentialID), second)
        XCTAssertEqual(stagedInFile(vault), 0)
    }
}
