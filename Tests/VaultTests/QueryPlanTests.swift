import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// The cost-independent-of-size rule (issue 11): every statement a ceremony, signal or finding runs is answered
/// from an index, which SQLite's own `EXPLAIN QUERY PLAN` shows on the exact SQL the vault runs.
final class QueryPlanTests: XCTestCase {
    /// The tables a plan must never scan.
    static let tables = ["passkeys", "events", "event_marks", "passwords", "user_decisions", "signal_quota", "profiles", "meta", "large_blobs",
                         "staged_passkeys", "attestation_root", "attestation_batches", "credential_extensions", "immediate_requests"]

    /// The plan's lines (the `detail` column) for a statement, parameters unbound.
    static func plan(_ vault: Vault, _ sql: String) throws -> [String] {
        try vault.locked { () throws(VaultError) in
            var lines: [String] = []
            try vault.db.query("EXPLAIN QUERY PLAN " + sql) { row in lines.append(row.text(3)) }
            return lines
        }
    }

    /// What is wrong with a plan: a table scanned (all of it, or all of one of its indexes), or a sort in memory.
    static func problems(_ lines: [String]) -> [String] {
        lines.filter { line in
            tables.contains { line == "SCAN \($0)" || line.hasPrefix("SCAN \($0) ") } || line.contains("TEMP B-TREE")
        }
    }

    func testEveryCeremonySignalAndFindingStatementIsAnsweredFromAnIndex() throws {
        let (vault, _) = try makeTestVault()
        XCTAssertGreaterThan(Vault.pathStatements.count, 30)
        for (name, sql) in Vault.pathStatements.sorted(by: { $0.key < $1.key }) {
            let lines = try Self.plan(vault, sql)
            XCTAssertEqual(Self.problems(lines), [], "\(name): \(sql)\n\(lines.joined(separator: "\n"))")
            // Every read of a table goes through a key or an index.
            for line in lines where line.hasPrefix("SEARCH ") {
                let table = line.split(separator: " ")[1]
                XCTAssertTrue(Self.tables.contains(String(table)), "\(name): \(line)")
            }
        }
    }

    /// The indexes each statement is meant to use: a plan that is legal but walks the wrong index (a user's
    /// passkeys by RP alone, say) would cost more than it should.
    func testTheHotStatementsUseTheirIndexes() throws {
        let (vault, _) = try makeTestVault()
        let expected: [(String, String)] = [
            ("offered", "SEARCH passkeys USING INDEX passkeys_offered (profile=? AND rp_id=?)"),
            ("offeredProtected", "SEARCH passkeys USING INDEX passkeys_offered (profile=? AND rp_id=?)"),
            ("passkeyByID", "SEARCH passkeys USING INDEX sqlite_autoindex_passkeys_1 (credential_id=? AND profile=?)"),
            ("recordAssertion", "SEARCH passkeys USING INDEX sqlite_autoindex_passkeys_1 (credential_id=? AND profile=?)"),
            ("firstUserPasskey", "SEARCH passkeys USING INDEX passkeys_by_rp (profile=? AND rp_id=? AND user_handle=?)"),
            ("hideUnlisted", "SEARCH passkeys USING INDEX passkeys_unshadowed_by_user (profile=? AND rp_id=? AND user_handle=?)"),
            ("restoreListed", "SEARCH passkeys USING INDEX passkeys_unshadowed_by_user (profile=? AND rp_id=? AND user_handle=?)"),
            ("deleteUnlisted", "SEARCH passkeys USING INDEX passkeys_unshadowed_by_user (profile=? AND rp_id=? AND user_handle=?)"),
            ("renameUser", "SEARCH passkeys USING INDEX passkeys_unshadowed_by_user (profile=? AND rp_id=? AND user_handle=?)"),
            ("shadowPrior", "SEARCH passkeys USING INDEX passkeys_unshadowed_by_user (profile=? AND rp_id=? AND user_handle=?)"),
            ("replacePrior", "SEARCH passkeys USING INDEX passkeys_by_rp (profile=? AND rp_id=? AND user_handle=?)"),
            ("priorDiscoverable", "SEARCH passkeys USING INDEX passkeys_by_rp (profile=? AND rp_id=? AND user_handle=?)"),
            ("shadowPassesOn", "SEARCH passkeys USING INDEX passkeys_shadowed (profile=? AND shadowed_by=?)"),
            ("editUser", "SEARCH passkeys USING INDEX sqlite_autoindex_passkeys_1 (credential_id=? AND profile=?)"),
            ("countDiscoverable", "SEARCH passkeys USING COVERING INDEX passkeys_offered (profile=?)"),
            ("countUsedUnlisted", "SEARCH passkeys USING INDEX passkeys_unshadowed_by_user (profile=? AND rp_id=? AND user_handle=?)"),
            ("otherDisplayName", "SEARCH passkeys USING INDEX passkeys_unshadowed_by_user (profile=? AND rp_id=? AND user_handle=?)"),
            ("accountByName", "SEARCH passkeys USING INDEX passkeys_by_user_name (profile=? AND rp_id=? AND user_name=?)"),
            ("mark", "SEARCH event_marks USING PRIMARY KEY (profile=? AND mark=? AND key=? AND key2=?)"),
            ("markedKeys", "SEARCH event_marks USING PRIMARY KEY (profile=? AND mark=? AND key=? AND key2=?)"),
            ("nextDecision", "SEARCH user_decisions USING INDEX user_decisions_by_profile (profile=?)"),
            ("rotateEvents", "SEARCH events USING INTEGER PRIMARY KEY (rowid<?)"),
            ("stagedDuplicate", "SEARCH passkeys USING COVERING INDEX sqlite_autoindex_passkeys_1 (credential_id=? AND profile=?)"),
            ("stagedMark", "SEARCH meta USING INDEX sqlite_autoindex_meta_1 (key=?)"),
            ("moveLegacyStaged", "SEARCH staged_passkeys USING INTEGER PRIMARY KEY (rowid<?)"),
            ("lastEventOfKind", "SEARCH events USING COVERING INDEX events_by_kind (profile=? AND kind=?)"),
            ("eventsOfKind", "SEARCH events USING INDEX events_by_kind (profile=? AND kind=? AND id>?)"),
            ("passwordsByOrigin", "SEARCH passwords USING INDEX sqlite_autoindex_passwords_1 (profile=? AND origin=?)"),
            ("passwordsBySite", "SEARCH passwords USING INDEX passwords_by_site (profile=? AND site=?)"),
            ("quota", "SEARCH signal_quota USING INDEX sqlite_autoindex_signal_quota_1 (profile=? AND key=?)"),
            ("immediateRequests", "SEARCH immediate_requests USING PRIMARY KEY (browser=? AND site=?)"),
            ("evictImmediateRequests", "SEARCH immediate_requests USING COVERING INDEX immediate_requests_by_expiry (browser=?)"),
            ("pruneImmediateRequests", "SEARCH immediate_requests USING COVERING INDEX immediate_requests_by_expiry (browser=? AND expires_at<?)"),
            ("attestationRoot", "SEARCH attestation_root USING INTEGER PRIMARY KEY (rowid=?)"),
            ("attestationBatch", "SEARCH attestation_batches USING PRIMARY KEY (aaguid=?)"),
        ]
        for (name, line) in expected {
            let sql = try XCTUnwrap(Vault.pathStatements[name], name)
            // A covering index is the same index, read without the table.
            let lines = try Self.plan(vault, sql).map { $0.replacingOccurrences(of: "COVERING INDEX", with: "INDEX") }
            XCTAssertTrue(lines.contains(line.replacingOccurrences(of: "COVERING INDEX", with: "INDEX")), "\(name): \(lines)")
        }
        // The account count's parts (`AccountCounts`), each on its own index.
        for (name, index) in [("countHandle", "passkeys_by_rp"), ("countName", "passkeys_by_user_name"), ("countHandleAndName", "passkeys_by")] {
            let count = try Self.plan(vault, try XCTUnwrap(Vault.pathStatements[name]))
            XCTAssertTrue(count.contains { $0.hasPrefix("SEARCH passkeys USING INDEX \(index)") }, "\(name): \(count)")
        }
        // The latest and oldest event IDs are one step down the rowid tree each.
        XCTAssertEqual(try Self.plan(vault, try XCTUnwrap(Vault.pathStatements["lastEventID"])), ["SEARCH events"])
        XCTAssertEqual(try Self.plan(vault, try XCTUnwrap(Vault.pathStatements["firstEventID"])), ["SEARCH events"])
    }

    /// The plans do not change once the tables hold rows and SQLite has statistics about them.
    func testPlansHoldOnAFilledAnalyzedVault() throws {
        let (vault, _) = try makeTestVault()
        let key = try SigningKeys.generate(.es256)
        try vault.transaction { () throws(VaultError) in
            for i in 0..<2000 {
                let record = PasskeyRecord(credentialID: Array("credential-\(i)-padding".utf8), rpID: i % 4 == 0 ? "other.example" : "example.com",
                                           userHandle: Array("user-\(i % 500)".utf8), userName: "u\(i % 500)", displayName: "U",
                                           algorithm: .es256, publicKey: key.publicKey, hidden: i % 7 == 0,
                                           createdAt: Date(vaultMillis: Int64(i) * 1000),
                                           lastUsedAt: i % 3 == 0 ? Date(vaultMillis: Int64(i) * 1500) : nil)
                try vault.insertPasskey(record, privateKey: key.pkcs8)
            }
        }
        for i in 0..<3000 {
            try vault.appendEvent(kind: ["get", "signal", "autofill", "create"][i % 4], outcome: "success", reason: "success",
                                  detail: .object([("origin", .string("https://o\(i % 30).example")), ("signal", "unknown"),
                                                   ("credentialId", .string("id\(i)")), ("mediation", "conditional"), ("userName", "u")]),
                                  at: Date(vaultMillis: Int64(i)))
        }
        try vault.flushEvents()
        try vault.locked { () throws(VaultError) in try vault.db.execute("ANALYZE") }
        for (name, sql) in Vault.pathStatements {
            let lines = try Self.plan(vault, sql)
            XCTAssertEqual(Self.problems(lines), [], "\(name) after ANALYZE: \(lines)")
        }
    }
}

/// Migrations 2 (indexes and event marks), 3 (extension state, a password's store), 4 (a retired password), 5 (devices),
/// 6 (staged registrations), 7 (the attestation CA, batch attestation), 8 (a key's credProtect levels and credBlobs), 9 (a password's site),
/// 10 (shadowing), 11 (a user's edit), 12 (an account's unshadowed passkeys) and 13 (immediate mediation's request counts)
/// on a vault made before them.
final class VaultMigrationTests: XCTestCase {
    /// Turns a current vault file back into schema version 1, exactly as migration 1 leaves one.
    static func downgradeToVersion1(_ path: String) throws {
        let db = try SQLiteDatabase(path: path, create: false)
        defer { db.close() }
        try db.execute("""
            DROP TABLE immediate_requests;
            DROP INDEX passkeys_unshadowed_by_user;
            ALTER TABLE passkeys DROP COLUMN edited_by_user;
            ALTER TABLE staged_passkeys DROP COLUMN edited_by_user;
            DROP TRIGGER passkey_shadow_passes_on;
            DROP INDEX passkeys_shadowed;
            DROP INDEX passkeys_offered;
            ALTER TABLE passkeys DROP COLUMN shadowed_by;
            ALTER TABLE staged_passkeys DROP COLUMN shadowed_by;
            DROP INDEX passwords_by_site;
            ALTER TABLE passwords DROP COLUMN site;
            DROP TRIGGER credential_extensions_follow_passkey;
            DROP TABLE credential_extensions;
            DROP TABLE attestation_root;
            DROP TABLE attestation_batches;
            DROP TABLE devices;
            DROP TABLE staged_passkeys;
            DROP TRIGGER large_blob_follows_passkey;
            DROP TABLE large_blobs;
            ALTER TABLE passkeys DROP COLUMN prf_secret;
            ALTER TABLE passwords DROP COLUMN saved_in;
            ALTER TABLE passwords DROP COLUMN retired_at;
            DROP TABLE event_marks;
            DROP INDEX events_by_kind;
            DROP INDEX user_decisions_by_profile;
            CREATE TABLE passkeys_1 AS SELECT * FROM passkeys;
            DROP TABLE passkeys;
            \(passkeysTableOfVersion1);
            CREATE INDEX passkeys_by_rp ON passkeys (profile, rp_id, user_handle);
            CREATE INDEX passkeys_by_user_name ON passkeys (profile, rp_id, user_name);
            INSERT INTO passkeys SELECT * FROM passkeys_1;
            DROP TABLE passkeys_1;
            PRAGMA user_version = 1;
            """)
    }

    /// Migration 1's `CREATE TABLE passkeys`, as it wrote it (keyed by credential ID alone, `attestation` without
    /// 'batch'): migration 14 rebuilt the table, so the downgrade rebuilds it as it was.
    static var passkeysTableOfVersion1: String {
        let v1 = VaultMigrations.all[0]
        let start = v1.range(of: "CREATE TABLE passkeys (")!
        return String(v1[start.lowerBound..<v1.range(of: "\n)", range: start.upperBound..<v1.endIndex)!.upperBound])
    }

    static func schema(_ db: SQLiteDatabase) throws -> [String] {
        var out: [String] = []
        try db.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name") { row in
            out.append([row.text(0), row.text(1), row.text(2), row.text(3)].joined(separator: "|"))
        }
        return out
    }

    func testTheDowngradeGivesExactlyVersion1() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v.db")
        try Vault.open(path: path, key: .raw(Array(repeating: 3, count: 32))).close()
        try Self.downgradeToVersion1(path)
        let fresh = try SQLiteDatabase(path: directory.file("fresh.db"), create: true)
        defer { fresh.close() }
        try fresh.execute(VaultMigrations.all[0])
        let old = try SQLiteDatabase(path: path, create: false)
        defer { old.close() }
        XCTAssertEqual(try Self.schema(old), try Self.schema(fresh))
    }

    /// The log an older vault holds, with what the engine writes and what it never should (a detail that is not
    /// JSON, a key that is not a string), and several profiles.
    static func oldLog() -> [(String, String, String, String)] {
        var rows: [(String, String, String, String)] = []
        func add(_ profile: String, _ kind: String, _ outcome: String, _ detail: JSONValue) { rows.append((profile, kind, outcome, detail.serialized())) }
        for round in 0..<3 {
            for profile in ["default", "other"] {
                add(profile, "autofill", "filledAndSubmitted", .object([("origin", "https://shop.example.com"), ("username", .string("alice\(round)"))]))
                add(profile, "autofill", "error", .object([("origin", "https://bank.example.net"), ("username", .null)]))
                add(profile, "autofill", "filled", .object([("origin", 42), ("username", "x")]))
                add(profile, "password", "used", .object([("origin", "https://shop.example.com"), ("username", "alice")]))
                add(profile, "password", "saved", .object([("origin", "https://saved.example.com"), ("username", "alice")]))
                add(profile, "create", "noop", .object([("origin", "https://shop.example.com"), ("userName", .string("u\(round % 2)")),
                                                        ("mediation", "conditional")]))
                add(profile, "create", "success", .object([("origin", "https://shop.example.com"), ("userName", "modal"), ("mediation", "modal")]))
                add(profile, "signal", "applied", .object([("signal", "unknown"), ("credentialId", .string("cred\(round)"))]))
                add(profile, "signal", "noop", .object([("signal", "accepted"), ("credentialId", "not-unknown")]))
                add(profile, "get", "success", .object([("origin", "https://shop.example.com"), ("credentialId", "cred0")]))
            }
        }
        rows.append(("default", "autofill", "filled", "{not json"))
        return rows
    }

    func testAnOlderVaultOpensMigratesAndGetsTheMarksItsLogImplies() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v.db")
        let key: VaultKeySource = .raw(Array(repeating: 3, count: 32))
        let v = try Vault.open(path: path, key: key)
        let stored = try SigningKeys.generate(.es256)
        let record = PasskeyRecord(credentialID: Array(repeating: 9, count: 16), rpID: "example.com", userHandle: [1], userName: "alice",
                                   displayName: "Alice", algorithm: .es256, publicKey: stored.publicKey, createdAt: Date(vaultMillis: 1000))
        try v.insertPasskey(record, privateKey: stored.pkcs8)
        try v.savePassword(origin: "https://shop.example.com", username: "alice", password: "pw", at: Date(vaultMillis: 2000))
        v.close()
        try Self.downgradeToVersion1(path)
        // The version-1 log, written as version 1 wrote it (no marks).
        do {
            let db = try SQLiteDatabase(path: path, create: false)
            defer { db.close() }
            for (i, row) in Self.oldLog().enumerated() {
                try db.query("INSERT INTO events (profile, at, kind, outcome, reason, detail) VALUES (?, ?, ?, ?, 'success', ?)",
                             [.text(row.0), .int(Int64(i)), .text(row.1), .text(row.2), .text(row.3)])
            }
        }
        let vault = try Vault.open(path: path, key: key)
        defer { vault.close() }
        var version: Int64 = 0
        try vault.locked { () throws(VaultError) in try vault.db.query("PRAGMA user_version") { version = $0.int(0) } }
        XCTAssertEqual(version, Int64(Vault.schemaVersion))
        XCTAssertEqual(try vault.passkey(id: record.credentialID), record, "the passkeys came through")
        XCTAssertEqual(try vault.offeredPasskeys(rpID: "example.com", limit: 10), [record])
        // Migration 3: a passkey made before it has no PRF secret until its first evaluation, a password no other store.
        XCTAssertNil(try vault.prfSecret(for: record.credentialID))
        let secret = Array(repeating: UInt8(5), count: 32)
        XCTAssertEqual(try vault.ensurePRFSecret(secret, for: record.credentialID), secret)
        XCTAssertEqual(try vault.ensurePRFSecret(Array(repeating: 6, count: 32), for: record.credentialID), secret, "the first secret stays")
        XCTAssertEqual(try vault.allPasswords().map(\.savedIn), [nil])
        // Migrations 10 and 11: a passkey made before them is neither shadowed nor edited, and the shadow's trigger works.
        XCTAssertEqual(try vault.passkey(id: record.credentialID).map { [$0.shadowedBy == nil, $0.editedByUser] }, [true, false])
        let newer = PasskeyRecord(credentialID: Array(repeating: 8, count: 16), rpID: "example.com", userHandle: [1], userName: "alice",
                                  displayName: "Alice", algorithm: .es256, publicKey: stored.publicKey, createdAt: Date(vaultMillis: 3000))
        XCTAssertEqual(try vault.insertPasskey(newer, privateKey: stored.pkcs8, prior: .shadowed).map(\.credentialID), [record.credentialID])
        XCTAssertNil(try vault.passkey(id: record.credentialID), "shadowed")
        XCTAssertEqual(try vault.offeredPasskeys(rpID: "example.com", limit: 10).map(\.credentialID), [newer.credentialID])
        XCTAssertTrue(try vault.removePasskey(credentialID: newer.credentialID))
        XCTAssertEqual(try vault.passkey(id: record.credentialID), record, "restored")
        XCTAssertTrue(try vault.editUser(credentialID: record.credentialID, name: "a", displayName: "A").editedByUser)
        // Migration 9: the password saved before it has its site, so a public-suffix match finds it.
        XCTAssertEqual(try vault.passwords(sameSiteAs: "https://example.com").map(\.origin), ["https://shop.example.com"])

        // The marks migration 2 derived are what `EventMark.marks` gives, event by event, the latest winning.
        var expected: [String: (Int64, String?)] = [:]
        for (i, row) in Self.oldLog().enumerated() {
            guard let detail = try? JSONValue.parse(row.3) else { continue }
            for m in EventMark.marks(kind: row.1, outcome: row.2, detail: detail) {
                expected[[row.0, m.mark.rawValue, m.key, m.key2].joined(separator: "|")] = (Int64(i + 1), m.value)
            }
        }
        var migrated: [String: (Int64, String?)] = [:]
        try vault.locked { () throws(VaultError) in
            try vault.db.query("SELECT profile, mark, key, key2, event_id, value FROM event_marks") { row in
                migrated[[row.text(0), row.text(1), row.text(2), row.text(3)].joined(separator: "|")] = (row.int(4), row.isNull(5) ? nil : row.text(5))
            }
        }
        XCTAssertEqual(migrated.keys.sorted(), expected.keys.sorted())
        for (key, value) in expected {
            XCTAssertEqual(migrated[key]?.0, value.0, key)
            XCTAssertEqual(migrated[key]?.1, value.1, key)
        }
        XCTAssertEqual(expected.count, 16, "per profile: autofill at two origins, a password used, conditional creates for two users, three unknown signals")
        XCTAssertEqual(try vault.latestMark(.autofill, "https://shop.example.com")?.value, "alice2")
        XCTAssertEqual(try vault.latestMark(.autofill, "https://bank.example.net").map { $0.value == nil }, true)
        XCTAssertEqual(try vault.scoped(to: "other").firstMarked(.unknownSignal, among: ["cred9", "cred1", "cred0"]), "cred1")

        // Events written after the migration carry on the log's IDs and set their marks.
        try vault.appendEvent(kind: "autofill", outcome: "filled", reason: "success",
                              detail: .object([("origin", "https://shop.example.com"), ("username", "carol")]), at: Date())
        let mark = try XCTUnwrap(vault.latestMark(.autofill, "https://shop.example.com"))
        XCTAssertEqual(mark.value, "carol")
        XCTAssertEqual(mark.eventID, Int64(Self.oldLog().count + 1))
    }
}

/// The log's limit, and what rotation keeps.
final class EventLogTests: XCTestCase {
    func testRotationKeepsTheNewestRowsAndEveryMark() throws {
        let (vault, _) = try makeTestVault()
        vault.limitEventLog(to: 50)
        for i in 0..<600 {
            try vault.appendEvent(kind: i == 3 ? "signal" : "get", outcome: "success", reason: "success",
                                  detail: .object([("signal", "unknown"), ("credentialId", .string("id\(i)"))]), at: Date(vaultMillis: Int64(i)))
            if i % 37 == 0 { try vault.flushEvents() }
        }
        try vault.flushEvents()
        let kept = try vault.events(limit: 1000)
        XCTAssertEqual(kept.count, 50)
        XCTAssertEqual(kept.map(\.id), Array(551...600))
        XCTAssertEqual(try vault.latestMark(.unknownSignal, "id3")?.eventID, 4, "the mark outlives its row")
    }

    func testALargeBacklogIsTrimmedAStepAtATime() throws {
        let (vault, _) = try makeTestVault()
        for i in 0..<3000 {
            try vault.appendEvent(kind: "get", outcome: "success", reason: "success", detail: .object([]), at: Date(vaultMillis: Int64(i)))
        }
        try vault.flushEvents()
        vault.limitEventLog(to: 100)
        try vault.appendEvent(kind: "get", outcome: "success", reason: "success", detail: .object([]), at: Date())
        try vault.flushEvents()
        XCTAssertEqual(try vault.events(limit: 10_000).count, 3001 - Int(Vault.rotationStep), "one step per write")
        for _ in 0..<3 {
            try vault.appendEvent(kind: "get", outcome: "success", reason: "success", detail: .object([]), at: Date())
            try vault.flushEvents()
        }
        XCTAssertEqual(try vault.events(limit: 10_000).count, 100)
    }

    func testTheLimitIsStoredInTheVaultAndTheEnvironmentOverridesIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v.db")
        let key: VaultKeySource = .raw(Array(repeating: 5, count: 32))
        let vault = try Vault.open(path: path, key: key)
        XCTAssertEqual(vault.eventLogLimit, Vault.defaultEventLogLimit)
        XCTAssertThrowsError(try vault.setEventLogLimit(999)) { XCTAssertEqual(($0 as? VaultError)?.code, .invalidInput) }
        try vault.setEventLogLimit(5000)
        XCTAssertEqual(vault.eventLogLimit, 5000)
        vault.close()
        let reopened = try Vault.open(path: path, key: key)
        defer { reopened.close() }
        XCTAssertEqual(reopened.eventLogLimit, 5000)
        try reopened.loadEventLogLimit(environment: [Vault.eventLogLimitVariable: "20000"])
        XCTAssertEqual(reopened.eventLogLimit, 20000)
        try reopened.loadEventLogLimit(environment: [Vault.eventLogLimitVariable: "10"])
        XCTAssertEqual(reopened.eventLogLimit, Vault.minimumEventLogLimit)
    }
}
