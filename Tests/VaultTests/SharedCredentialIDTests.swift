import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// One credential ID in two profiles (migration 14, issue 36.2): a move that keeps the source's copy leaves the same
/// passkey with two provider accounts of one vault, each row its own, each changed only through its profile.
final class SharedCredentialIDTests: XCTestCase {
    let signing = try! SigningKeys.generate(.es256)
    let id = Array("the-shared-credential-id".utf8)

    func record(_ id: [UInt8], createdAt millis: Int64 = 1_800_000_000_000, eligible: Bool = true, handle: [UInt8] = [1]) -> PasskeyRecord {
        PasskeyRecord(credentialID: id, rpID: "example.com", userHandle: handle, userName: "alice", displayName: "Alice",
                      algorithm: .es256, publicKey: signing.publicKey,
                      settings: PasskeySettings(backupEligible: eligible, backupState: eligible, counter: eligible ? .zero : .increment,
                                                aaguid: Array(repeating: eligible ? 1 : 2, count: 16), attestation: .none, discoverable: true),
                      createdAt: Date(vaultMillis: millis))
    }

    func testTwoProfilesHoldOneCredentialIDEachWithItsOwnRowAndOneProfileRefusesItTwice() throws {
        for held in [false, true] {
            let (vault, _) = try makeTestVault(held: held)
            defer { vault.close() }
            let gpm = vault.scoped(to: "gpm"), apple = vault.scoped(to: "apple")
            try gpm.insertPasskey(record(id, eligible: true), privateKey: signing.pkcs8)
            try apple.insertPasskey(record(id, eligible: false), privateKey: signing.pkcs8)
            XCTAssertThrowsError(try apple.insertPasskey(record(id, eligible: true), privateKey: signing.pkcs8), "held: \(held)") {
                XCTAssertEqual(($0 as? VaultError)?.code, .duplicate)
            }
            for round in 0..<2 {
                XCTAssertEqual(try gpm.passkey(id: id)?.settings.backupEligible, true, "held: \(held), round \(round)")
                XCTAssertEqual(try apple.passkey(id: id)?.settings.counter, .increment, "held: \(held), round \(round)")
                XCTAssertEqual(try apple.privateKey(for: id), signing.pkcs8)
                try vault.flushEvents()  // the second round reads them moved out of the staged table
                try vault.locked { () throws(VaultError) in try Vault.moveStaged(vault.connection) }
            }
            // A counter, a hiding and a removal change the profile's own copy only.
            try apple.recordAssertion(credentialID: id, signCount: 7, at: Date(vaultMillis: 1_800_000_001_000))
            try gpm.recordAssertion(credentialID: id, signCount: 0, at: Date(vaultMillis: 1_800_000_002_000), deferred: true)
            XCTAssertEqual(try apple.passkey(id: id).map { [Int($0.signCount), Int($0.lastUsedAt!.vaultMillis)] }, [7, 1_800_000_001_000])
            XCTAssertEqual(try gpm.passkey(id: id).map { [Int($0.signCount), Int($0.lastUsedAt!.vaultMillis)] }, [0, 1_800_000_002_000])
            try vault.flushEvents()
            XCTAssertEqual(try apple.passkey(id: id)?.lastUsedAt?.vaultMillis, 1_800_000_001_000, "the other's pending use is not this one's")
            try gpm.setHidden(credentialID: id, hidden: true, at: Date())
            XCTAssertEqual(try apple.offeredPasskeys(rpID: "example.com", limit: 5).map(\.credentialID), [id])
            XCTAssertEqual(try gpm.offeredPasskeys(rpID: "example.com", limit: 5), [])
            XCTAssertTrue(try gpm.removePasskey(credentialID: id))
            XCTAssertNil(try gpm.passkey(id: id))
            XCTAssertEqual(try apple.passkey(id: id)?.signCount, 7, "held: \(held)")
        }
    }

    func testAPasskeysExtensionStateAndShadowsFollowItsOwnProfileOnly() throws {
        let (vault, _) = try makeTestVault()
        defer { vault.close() }
        let gpm = vault.scoped(to: "gpm"), apple = vault.scoped(to: "apple")
        let newer = Array("newer-credential-id".utf8)
        for (scoped, blob) in [(gpm, [UInt8](repeating: 1, count: 8)), (apple, [UInt8](repeating: 2, count: 8))] {
            try scoped.insertPasskey(record(id), privateKey: signing.pkcs8)
            try scoped.setLargeBlob(blob, for: id)
            try scoped.setCredentialExtensions(id, credProtect: scoped === gpm ? 3 : 2, credBlob: blob)
            // The newer passkey of the same account shadows the older one, in each profile.
            try scoped.insertPasskey(record(newer, createdAt: 1_800_000_009_000), privateKey: signing.pkcs8, prior: .shadowed)
        }
        XCTAssertEqual(try gpm.largeBlob(for: id), [UInt8](repeating: 1, count: 8))
        XCTAssertEqual(try apple.largeBlob(for: id), [UInt8](repeating: 2, count: 8))
        XCTAssertEqual(try apple.credentialExtensions(id).credProtect, 2)
        XCTAssertNil(try gpm.passkey(id: id), "shadowed in gpm")
        // Deleting gpm's shadowing passkey restores gpm's older one only; deleting gpm's older one takes its own state.
        XCTAssertTrue(try gpm.removePasskey(credentialID: newer))
        XCTAssertNotNil(try gpm.passkey(id: id))
        XCTAssertNil(try apple.passkey(id: id), "still shadowed in apple")
        XCTAssertTrue(try gpm.removePasskey(credentialID: id))
        XCTAssertNil(try gpm.largeBlob(for: id))
        XCTAssertEqual(try gpm.credentialExtensions(id).credProtect, 1)
        XCTAssertEqual(try apple.largeBlob(for: id), [UInt8](repeating: 2, count: 8))
        XCTAssertEqual(try apple.credentialExtensions(id).credBlob, [UInt8](repeating: 2, count: 8))
        XCTAssertEqual(try apple.passkey(id: id, includeShadowed: true)?.shadowedBy, newer)
    }

    /// The statements that find a passkey's state by its key, and the triggers' deletes, each a walk of the key.
    func testLookupsByKeyUseTheWholeKey() throws {
        let (vault, _) = try makeTestVault()
        defer { vault.close() }
        let expected = [
            ("SELECT blob FROM large_blobs WHERE credential_id = ? AND profile = ?", "SEARCH large_blobs USING PRIMARY KEY (credential_id=? AND profile=?)"),
            ("DELETE FROM large_blobs WHERE credential_id = ? AND profile = ?", "SEARCH large_blobs USING PRIMARY KEY (credential_id=? AND profile=?)"),
            ("DELETE FROM credential_extensions WHERE credential_id = ? AND profile = ?",
             "SEARCH credential_extensions USING PRIMARY KEY (credential_id=? AND profile=?)"),
            (Vault.credentialExtensionsSQL, "SEARCH credential_extensions USING PRIMARY KEY (credential_id=? AND profile=?)"),
            (Vault.offeredProtectedSQL, "SEARCH credential_extensions USING PRIMARY KEY (credential_id=? AND profile=?)"),
            (Vault.removePasskeySQL, "SEARCH passkeys USING INDEX sqlite_autoindex_passkeys_1 (credential_id=? AND profile=?)"),
        ]
        for (sql, line) in expected {
            XCTAssertTrue(try QueryPlanTests.plan(vault, sql).contains(line), sql)
        }
    }
}

/// Migration 14 on a vault credemu wrote at schema 13: every row of the rebuilt tables as it was, then the same
/// credential ID in a second profile.
final class PasskeyKeyMigrationTests: XCTestCase {
    func testASchema13VaultMigratesWithEveryPasskeyBlobAndShadowAndThenTakesAnIDInASecondProfile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v13.db")
        let key = try XCTUnwrap(try Vault.create(path: path, source: .raw(Array(repeating: 4, count: 32)), schema: 13))
        let box = SecretBox(key: key)
        let signing = try SigningKeys.generate(.es256)
        let older = Array("older-credential".utf8), newer = Array("newer-credential".utf8), other = Array("other-profile-credential".utf8)
        let tables = ["passkeys", "large_blobs", "credential_extensions"]
        var before: [String: Set<String>] = [:]
        do {
            let db = try SQLiteDatabase(path: path, create: false)
            defer { db.close() }
            try db.execute(Vault.connectionPragmas)
            try db.transaction { () throws(VaultError) in
                for (id, profile, shadow, created) in [(older, "gpm", newer, 1), (newer, "gpm", nil, 2), (other, "apple", nil, 3)] as [([UInt8], String, [UInt8]?, Int64)] {
                    try db.query("""
                        INSERT INTO passkeys (credential_id, profile, rp_id, user_handle, user_name, display_name, algorithm, private_key,
                            public_key, sign_count, counter, backup_eligible, backup_state, aaguid, discoverable, attestation, created_at,
                            last_used_at, prf_secret, shadowed_by, edited_by_user)
                        VALUES (?, ?, 'example.com', X'01', 'alice', 'Alice', -7, ?, ?, 0, 'zero', 1, 1, zeroblob(16), 1, 'batch', ?, ?, ?, ?, 1)
                        """, [.blob(id), .text(profile), .blob(box.seal(signing.pkcs8, context: Vault.keyContext(id))),
                              .blob(signing.publicKey.encoded), .int(1_800_000_000_000 + created), .int(1_800_000_100_000 + created),
                              .blob(box.seal(Array(repeating: 5, count: 32), context: Vault.prfContext(id))), shadow.map(SQLValue.blob) ?? .null])
                }
                try db.query("INSERT INTO large_blobs (credential_id, profile, blob) VALUES (?, 'gpm', ?)",
                             [.blob(older), .blob(box.seal([9, 9], context: Vault.largeBlobContext(older)))])
                try db.query("INSERT INTO credential_extensions (credential_id, profile, cred_protect, cred_blob) VALUES (?, 'apple', 3, NULL)",
                             [.blob(other)])
            }
            for table in tables { before[table] = try Self.rows(db, table) }
        }
        let vault = try Vault.open(path: path, key: .raw(Array(repeating: 4, count: 32)))
        defer { vault.close() }
        try vault.locked { () throws(VaultError) in
            var version: Int64 = 0
            try vault.db.query("PRAGMA user_version") { version = $0.int(0) }
            XCTAssertEqual(version, Int64(Vault.schemaVersion))
            for table in tables { XCTAssertEqual(try Self.rows(vault.db, table), before[table], table) }
        }
        let gpm = vault.scoped(to: "gpm"), apple = vault.scoped(to: "apple")
        XCTAssertEqual(try gpm.largeBlob(for: older), [9, 9])
        XCTAssertEqual(try gpm.prfSecret(for: newer), Array(repeating: 5, count: 32))
        XCTAssertEqual(try apple.credentialExtensions(other).credProtect, 3)
        XCTAssertEqual(try gpm.passkey(id: older, includeShadowed: true)?.shadowedBy, newer)
        // The same ID, now in the other profile; the shadow still passes on within gpm.
        let copy = try XCTUnwrap(try gpm.passkey(id: newer))
        try apple.insertPasskey(copy, privateKey: signing.pkcs8)
        XCTAssertTrue(try gpm.removePasskey(credentialID: newer))
        XCTAssertEqual(try gpm.passkey(id: older)?.shadowedBy, nil, "restored when its shadow went")
        XCTAssertEqual(try apple.passkey(id: newer)?.credentialID, newer)
        XCTAssertEqual(try gpm.largeBlob(for: older), [9, 9])
    }

    /// Every row of `table`, each column quoted, in the order of the old table's columns.
    static func rows(_ db: SQLiteDatabase, _ table: String) throws(VaultError) -> Set<String> {
        var columns: [String] = []
        try db.query("SELECT name FROM pragma_table_info(?) ORDER BY name", [.text(table)]) { row in columns.append(row.text(0)) }
        return try ConcurrentUpgradeTests.rows(db, table, columns)
    }
}
