import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// A held vault's `AccountFilter`: the account count it answers without SQL is the count SQL gives, whatever
/// wrote the passkeys.
final class AccountFilterTests: XCTestCase {
    let key = Array(repeating: UInt8(7), count: 32)
    let signing = try! SigningKeys.generate(.es256)

    func record(_ n: Int, handle: String? = nil, name: String? = nil, rpID: String = "example.com") -> PasskeyRecord {
        PasskeyRecord(credentialID: SecureRandom.bytes(16), rpID: rpID, userHandle: Array((handle ?? "user-\(n)").utf8),
                      userName: name ?? "user\(n)@example.com", displayName: "User \(n)", algorithm: .es256,
                      publicKey: signing.publicKey, createdAt: Date(vaultMillis: 1_800_000_000_000 + Int64(n)))
    }

    /// The counts a create's finding asks for, on the held vault and on the same file opened shared (no filter).
    func assertCountsAgree(_ path: String, _ held: Vault, accounts: [(String, String, String)], file: StaticString = #filePath, line: UInt = #line) throws {
        let counts = try accounts.map { (rp, handle, name) in
            try held.countAccountPasskeys(rpID: rp, userHandle: Array(handle.utf8), userName: name, excluding: [])
        }
        try held.flushEvents()
        held.close()
        let shared = try Vault.open(path: path, key: .raw(key))
        defer { shared.close() }
        XCTAssertNil(shared.connection.accounts, "a shared vault has no filter", file: file, line: line)
        let expected = try accounts.map { (rp, handle, name) in
            try shared.countAccountPasskeys(rpID: rp, userHandle: Array(handle.utf8), userName: name, excluding: [])
        }
        XCTAssertEqual(counts, expected, file: file, line: line)
    }

    func testAnAccountWithoutPasskeysCountsZeroAndOneWithThemIsCountedBySQL() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("vault.db")
        let vault = try Vault.open(path: path, key: .raw(key), exclusive: true)
        XCTAssertNotNil(vault.connection.accounts)
        try vault.insertPasskey(record(1), privateKey: signing.pkcs8)
        try vault.insertPasskey(record(2, rpID: "other.example"), privateKey: signing.pkcs8)
        try vault.scoped(to: "work").insertPasskey(record(3), privateKey: signing.pkcs8)
        XCTAssertTrue(vault.mayHoldAccount(rpID: "example.com", userHandle: Array("user-1".utf8), userName: "nobody"))
        XCTAssertTrue(vault.mayHoldAccount(rpID: "example.com", userHandle: [9], userName: "user1@example.com"))
        XCTAssertFalse(vault.mayHoldAccount(rpID: "example.com", userHandle: Array("user-9".utf8), userName: "user9@example.com"))
        XCTAssertNotNil(vault.connection.accounts, "inserts keep the filter")
        try assertCountsAgree(path, vault, accounts: [
            ("example.com", "user-1", "user1@example.com"), ("example.com", "user-1", "x"), ("example.com", "x", "user1@example.com"),
            ("example.com", "user-2", "user2@example.com"), ("other.example", "user-2", "y"), ("example.com", "user-3", "user3@example.com"),
            ("example.com", "user-9", "user9@example.com"),
        ])
    }

    func testTheFilterIsBuiltFromTheFileWhenHeldAgain() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("vault.db")
        let shared = try Vault.open(path: path, key: .raw(key))
        for n in 0..<50 { try shared.insertPasskey(record(n), privateKey: signing.pkcs8) }
        shared.close()
        let held = try Vault.open(path: path, key: .raw(key), exclusive: true)
        for n in 0..<50 { XCTAssertTrue(held.mayHoldAccount(rpID: "example.com", userHandle: Array("user-\(n)".utf8), userName: "-")) }
        try assertCountsAgree(path, held, accounts: (0..<60).map { ("example.com", "user-\($0)", "user\($0)@example.com") })
    }

    func testRenamesAddTheNewNameAndHidingKeepsTheCountRight() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("vault.db")
        let vault = try Vault.open(path: path, key: .raw(key), exclusive: true)
        let a = record(1), b = record(2)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        try vault.insertPasskey(b, privateKey: signing.pkcs8)
        _ = try vault.renameUser(rpID: "example.com", userHandle: a.userHandle, name: "renamed@example.com", displayName: nil)
        try vault.updateUser(credentialID: b.credentialID, name: "updated@example.com", displayName: "B")
        try vault.setHidden(credentialID: b.credentialID, hidden: true, at: Date())
        XCTAssertNotNil(vault.connection.accounts, "renames and hiding keep the filter")
        try assertCountsAgree(path, vault, accounts: [
            ("example.com", "x", "renamed@example.com"), ("example.com", "y", "updated@example.com"),
            ("example.com", "user-2", "user2@example.com"), ("example.com", "x", "user1@example.com"),
        ])
    }

    func testAWriteTheFilterCannotFollowDropsItAndTheCountFallsBackToSQL() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("vault.db")
        let vault = try Vault.open(path: path, key: .raw(key), exclusive: true)
        let a = record(1)
        try vault.insertPasskey(a, privateKey: signing.pkcs8)
        try vault.flushEvents()
        try vault.locked { () throws(VaultError) in
            try vault.db.query("UPDATE passkeys SET user_name = 'raw@example.com' WHERE credential_id = ?", [.blob(a.credentialID)])
        }
        XCTAssertNil(vault.connection.accounts)
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: "example.com", userHandle: [9], userName: "raw@example.com", excluding: []), 1)
        try assertCountsAgree(path, vault, accounts: [("example.com", "x", "raw@example.com")])
    }

    /// A credential ID no passkey has is answered without SQL; every one the vault holds, stored before the file was
    /// held, staged since or imported in bulk, is still found, in its own profile only.
    func testACredentialIDTheVaultNeverHeldIsNotLookedUp() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("vault.db")
        let before = record(1)
        let shared = try Vault.open(path: path, key: .raw(key))
        try shared.insertPasskey(before, privateKey: signing.pkcs8)
        shared.close()
        let vault = try Vault.open(path: path, key: .raw(key), exclusive: true)
        defer { vault.close() }
        let staged = record(2)
        try vault.insertPasskey(staged, privateKey: signing.pkcs8)
        let bulk = record(3)
        try vault.insertPasskeys([(bulk, signing.pkcs8)])
        for r in [before, staged, bulk] {
            XCTAssertTrue(vault.mayHoldCredential(r.credentialID))
            XCTAssertEqual(try vault.passkey(id: r.credentialID)?.credentialID, r.credentialID)
            XCTAssertNil(try vault.scoped(to: "other").passkey(id: r.credentialID), "another profile's is not this one's")
        }
        var unheld = 0
        for _ in 0..<1000 where !vault.mayHoldCredential(SecureRandom.bytes(16)) { unheld += 1 }
        XCTAssertGreaterThan(unheld, 980, "random IDs are answered by the filter, almost never by SQL")
        XCTAssertNil(try vault.passkey(id: SecureRandom.bytes(16)))
    }

    /// A vault that grows far past the size its filter was built for (a million passkeys after an empty open) keeps
    /// answering "no" for keys it never held: the filter grows by layers instead of filling up.
    func testTheFilterGrowsWithTheVault() {
        let filter = AccountFilter(expected: 0)
        var held: [[UInt8]] = []
        for n in 0..<600_000 {
            var id = [UInt8](repeating: 0, count: 16)
            withUnsafeBytes(of: UInt64(n)) { id.replaceSubrange(0..<8, with: $0) }
            filter.addCredential(id)
            if n % 1000 == 0 { held.append(id) }
        }
        XCTAssertTrue(held.allSatisfy(filter.mayHoldCredential), "never a false no")
        let misses = (0..<2000).filter { _ in !filter.mayHoldCredential(SecureRandom.bytes(16)) }.count
        XCTAssertGreaterThan(misses, 1900, "about 1% a layer, not a saturated filter")
    }
}
