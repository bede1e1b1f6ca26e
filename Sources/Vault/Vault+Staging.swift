import Dispatch
import Foundation

/// Registrations on a held vault: each committed into `staged_passkeys`, then moved into `passkeys` in batches.
///
/// A row committed into `passkeys` writes a page in each of its six b-trees (the table, the credential-ID key and
/// four indexes; `passkeys_shadowed` holds only shadowed rows): about 22 KB of WAL, and 34 µs of a registration's
/// CPU time (measured with five). On a vault this process holds
/// (`exclusive`), `insertPasskey` commits the row into `staged_passkeys` instead, a rowid table only ever
/// appended to: one page, about 9 µs, and the same durability (the passkey is in the file when the call returns).
/// The rows move into `passkeys` in one transaction `stagedDelay` after the first of them, or once `stagedLimit`
/// wait, before any statement on passkeys that does not see them by itself (`seesStaged`), at close, and, after a
/// crash, when the vault is next opened; moving costs 7 to 8 µs of CPU a row in a full batch into a vault of
/// 100,000 (the index pages shared by the batch, the bulk page cache: `withBulkCache`), whichever thread moves: the
/// lock is held meanwhile. What a ceremony reads by credential ID, or a create shadows or replaces, finds staged
/// rows in `StagedPasskeys`.
/// A vault shared with other processes never stages: they would not see the rows.
extension Vault {
    /// The most registrations that wait to be moved: a move costs about 8.9 µs a row in batches of 256, 6.9 at
    /// 512, 7 at 1024 and 3.7 at 4096 (the index pages they share; `credemu-bench parts`, a vault of some 30,000),
    /// and holds the vault about 15 ms at this limit (7 ms at 1024).
    public static let stagedLimit = 4096
    /// How long the first of them waits at most: at 0.1 s a vault registering 15,000 a second moved batches of
    /// 1,500 and did 4% fewer registrations a second.
    static let stagedDelay: TimeInterval = 0.5

    /// The statements on passkeys that need no move first: they see staged rows through `StagedPasskeys`, or move them.
    /// `shadowPriorSQL` is one: a create that shadows updates the staged rows of the account itself (`stagePasskey`);
    /// `replacePriorSQL` another: a create that replaces moves them only when the account has one (`insertPasskey`);
    /// the account count's parts add the staged rows' (`StagedPasskeys.count`).
    static let seesStaged: Set<String> = [stagePasskeySQL, moveStagedSQL, deleteStagedSQL, stagedExistsSQL, byIDSQL, privateKeySQL,
                                          shadowPriorSQL, shadowStagedSQL, countHandleSQL, countNameSQL, countHandleAndNameSQL,
                                          priorDiscoverableSQL, replacePriorSQL]

    static let stagedColumns = passkeyColumns + ", private_key, profile, prf_secret"
    /// A credential ID the profile holds already in `passkeys` is refused here (no row), one already staged by
    /// `StagedPasskeys`. `?24` is 1 when the account filter says no passkey has the ID: the probe, a walk down the key
    /// (credential ID, profile) that reads a page from the file in most registrations on a large vault, is skipped then
    /// (the OR stops at its first true term).
    static let stagePasskeySQL = """
        INSERT INTO staged_passkeys (\(stagedColumns)) SELECT \((1...23).map { "?\($0)" }.joined(separator: ", ")) \
        WHERE ?24 = 1 OR NOT EXISTS (SELECT 1 FROM passkeys WHERE credential_id = ?1 AND profile = ?22)
        """
    static let moveStagedSQL = "INSERT INTO passkeys (\(stagedColumns)) SELECT \(stagedColumns) FROM staged_passkeys WHERE seq <= ? ORDER BY seq"
    /// Every row, moved: without a WHERE clause SQLite clears the table's pages at once instead of row by row.
    static let deleteStagedSQL = "DELETE FROM staged_passkeys"
    static let stagedExistsSQL = "SELECT max(seq) FROM staged_passkeys"

    /// Whether a new passkey is staged: on a held vault, outside a transaction (whose rollback the mirror would not see).
    var stages: Bool { connection.exclusive && !db.inTransaction }

    /// `shadowPriorSQL` over the staged rows: one of them, by its `seq`.
    static let shadowStagedSQL = "UPDATE staged_passkeys SET shadowed_by = ?1 WHERE seq = ?2"

    /// Commits a new passkey into `staged_passkeys` (the caller holds the lock, outside a transaction). With
    /// `shadowing`, the account's older passkeys, staged or moved, get it as their shadow in the same transaction
    /// (`PriorOfSameUser.shadowed`), and are returned; nothing is moved for it.
    ///
    /// - Parameter newID: the account filter said no passkey has the credential ID (asked before it was added).
    func stagePasskey(_ record: PasskeyRecord, sealedKey: [UInt8], sealedPRF: SQLValue, shadowing: Bool, newID: Bool) throws(VaultError) -> [ChangedPasskey] {
        guard try stagedEntry(record.credentialID) == nil else { throw Vault.duplicatePasskey(record) }
        var bindings = Vault.bindings(record, capacity: 24)
        bindings += [.blob(sealedKey), .text(profile), sealedPRF, .bool(newID)]
        let stagedPrior = shadowing ? connection.staged.unshadowed(profile: profile, rpID: record.rpID, userHandle: record.userHandle) : []
        func stage() throws(VaultError) -> Int64 {
            try db.query(Vault.stagePasskeySQL, bindings)
            guard db.changes == 1 else { throw Vault.duplicatePasskey(record) }
            return db.lastInsertRowID
        }
        var seq: Int64 = 0, stored: [ChangedPasskey] = []
        if shadowing {
            try db.transaction { () throws(VaultError) in
                seq = try stage()
                for entry in stagedPrior { try db.query(Vault.shadowStagedSQL, [.blob(record.credentialID), .int(entry.seq)]) }
                stored = try shadowStored([.text(profile), .text(record.rpID), .blob(record.userHandle), .blob(record.credentialID)])
            }
        } else {
            seq = try stage()
        }
        connection.staged.shadow(stagedPrior, by: record.credentialID)
        connection.staged.add(.init(record: record, profile: profile, sealedKey: sealedKey, seq: seq))
        connection.counts.added(record, profile: profile)
        if connection.staged.count >= Vault.stagedLimit {
            try Vault.moveStaged(connection)
        } else if connection.staged.count == 1 {
            let connection = self.connection
            DispatchQueue.global().asyncAfter(deadline: .now() + Vault.stagedDelay) {
                connection.lock.lock()
                defer { connection.lock.unlock() }
                guard connection.db.handle != nil, !connection.db.inTransaction else { return }
                try? Vault.moveStaged(connection)
            }
        }
        guard shadowing else { return [] }
        return (stored + stagedPrior.map { ChangedPasskey(credentialID: $0.record.credentialID, createdMillis: $0.record.createdAt.vaultMillis) }).sorted()
    }

    /// The profile's staged passkey with this credential ID (the caller holds the lock).
    func stagedEntry(_ credentialID: [UInt8]) throws(VaultError) -> StagedPasskeys.Entry? {
        if connection.staged.mustMove { try Vault.moveStaged(connection) }
        return connection.staged.entry(credentialID, profile: profile)
    }

    /// Moves every staged passkey into `passkeys` (the caller holds the lock); inside a transaction, as part of it.
    static func moveStaged(_ connection: Connection) throws(VaultError) {
        let staged = connection.staged
        guard !staged.isEmpty || staged.mustMove else { return }
        let db = connection.db
        if db.inTransaction { staged.movedInTransaction = true }
        try moveAllStaged(db)
        staged.removeAll()
        staged.mustMove = false
    }

    /// The rows of `staged_passkeys` into `passkeys`, in the order they were staged, with the bulk page cache.
    static func moveAllStaged(_ db: SQLiteDatabase) throws(VaultError) {
        try withBulkCache(db) { () throws(VaultError) in
            try db.transaction { () throws(VaultError) in
                try db.query(moveStagedSQL, [.int(Int64.max)])
                try db.query(deleteStagedSQL)
            }
        }
    }

    /// After a rollback: a move it undid is made again (the mirror was emptied by it).
    static func stagedAfterRollback(_ connection: Connection) {
        let staged = connection.staged
        guard staged.movedInTransaction, !connection.db.inTransaction else { return }
        staged.movedInTransaction = false
        do throws(VaultError) { try moveAllStaged(connection.db) } catch { staged.mustMove = true }
    }

    /// Moves what a process that held the vault left staged (it stopped before moving them); at open.
    func moveLeftoverStaged() throws(VaultError) {
        try locked { () throws(VaultError) in
            var leftovers = false
            try db.query(Vault.stagedExistsSQL) { row in leftovers = !row.isNull(0) }
            if leftovers { try Vault.moveAllStaged(db) }
        }
    }

    /// Installs the hooks through which the connection keeps `staged_passkeys` invisible to every other statement,
    /// and its `PasskeyRecordCache` true to the file.
    static func installStaging(on connection: Connection) {
        connection.db.seesStagedPasskeys = seesStaged
        connection.db.beforePasskeyStatement = { [weak connection] () throws(VaultError) in
            guard let connection else { return }
            connection.records.removeAll()
            try Vault.moveStaged(connection)
        }
        connection.db.keepsAccountFilter = keepsAccountFilter
        connection.db.beforeAccountWrite = { [weak connection] in connection?.accounts = nil }
        connection.db.keepsAccountCounts = keepsAccountCounts
        connection.db.beforeCountedWrite = { [weak connection] in connection?.counts.removeAll() }
        connection.db.afterRollback = { [weak connection] in
            guard let connection else { return }
            connection.records.removeAll()
            connection.counts.removeAll()
            Vault.stagedAfterRollback(connection)
        }
    }

    static func duplicatePasskey(_ record: PasskeyRecord) -> VaultError {
        VaultError(.duplicate, "A passkey with credential ID \(record.id) is already in the vault.")
    }
}
