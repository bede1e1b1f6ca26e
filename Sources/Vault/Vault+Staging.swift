import Dispatch
import Foundation

/// Registrations on a held vault: each appended to the vault's staging log (`StagingLog`), then moved into `passkeys`
/// in batches.
///
/// A row committed into `passkeys` writes a page in each of its six b-trees (the table, the credential-ID key and
/// four indexes; `passkeys_shadowed` holds only shadowed rows): about 22 KB of WAL, and 34 µs of a registration's
/// CPU time (measured with five). On a vault this process holds (`exclusive`), `insertPasskey` appends the row to
/// the staging log instead: one `write` of about 600 bytes, and the same durability as a commit with
/// `synchronous=NORMAL` (the passkey is in the kernel's copy of the file when the call returns). Until issue 37 the
/// row was committed into the table `staged_passkeys` (migration 6): one 4 KB WAL frame through SQLite's b-tree,
/// pager and commit hook, 13 µs of the calling thread's 26 (`credemu-bench parts`), and its pages were written
/// again by the checkpoint and read and cleared by the move. The table stays for what an older build left in it.
///
/// The rows move into `passkeys` in one transaction `stagedDelay` after the first of them, or once `stagedLimit`
/// wait, on a thread of its own and off the lock (`startMove`); before any statement on passkeys that does not see
/// them by itself (`seesStaged`), at close, and, after a crash, when the vault is next opened, under the lock. The
/// move reads them back from the log (records after the mark `staged_through` in `meta`, which the move's own
/// transaction advances), so that a move undone by a rollback, or cut short by a crash, is made again from the same
/// records; the log is emptied (or, for a move off the lock, removed) once the mark is committed. Moving costs 6.5 to
/// 8 µs a row in a full batch (27-33 ms for 4,096, from the first batch on: SQLite's inserts into the table and its
/// five indexes; the bulk page cache, `withBulkCache`, spares the reads). What a ceremony reads by credential ID, or a
/// create shadows or replaces, finds staged rows in `StagedPasskeys`.
/// A vault shared with other processes never stages: they would not see the rows. Such a process moves what the log
/// holds after the mark when it opens the vault, and leaves the file (emptying it could race a holder that opened
/// since); the next holder empties it.
extension Vault {
    /// The registrations that start a move: a move cost about 8.9 µs a row in batches of 256, 6.9 at 512, 7 at 1024
    /// and 3.7 at 4096 when the rows came from `staged_passkeys` (the index pages they share; `credemu-bench parts`,
    /// a vault of some 30,000); from the staging log a full batch takes 27-33 ms, off the lock.
    public static let stagedLimit = 4096
    /// How long the first of them waits at most: at 0.1 s a vault registering 15,000 a second moved batches of
    /// 1,500 and did 4% fewer registrations a second.
    static let stagedDelay: TimeInterval = 0.5
    /// The most registrations staged beside a running move before the next waits for it: four batches, so that a
    /// move whose commit meets a slow checkpoint (200 ms and more, `credemu-bench worker` beside a browser) does not
    /// stop registrations at 40,000 a second; the mirror holds at most five batches.
    static let stagedBesideLimit = 4 * stagedLimit

    /// The statements on passkeys that need no move first: they see staged rows through `StagedPasskeys`, or move them.
    /// `shadowPriorSQL` is one: a create that shadows updates the account's moved passkeys itself (`stagePasskey`);
    /// `replacePriorSQL` another: a create that replaces moves them only when the account has one (`insertPasskey`);
    /// the account count's parts add the staged rows' (`StagedPasskeys.count`); `recordUseSQL` too: a batch of last
    /// uses moves them only for a use of a staged passkey (`writeUses`).
    static let seesStaged: Set<String> = [stagedDuplicateSQL, moveStagedSQL, moveLegacyStagedSQL, deleteLegacyStagedSQL,
                                          legacyStagedExistsSQL, byIDSQL, privateKeySQL, shadowPriorSQL, countHandleSQL,
                                          countNameSQL, countHandleAndNameSQL, priorDiscoverableSQL, replacePriorSQL, recordUseSQL]

    static let stagedColumns = passkeyColumns + ", private_key, profile, prf_secret"
    /// A staged record's values: `stagedColumns`' (credential ID 0, RP ID 1, user handle 2, profile 21).
    static let stagedColumnCount = 23
    /// A credential ID the profile holds already in `passkeys` (asked only when the account filter cannot say the ID
    /// is new: most registrations on a large vault skip this walk down the key, which reads a page from the file).
    static let stagedDuplicateSQL = "SELECT EXISTS (SELECT 1 FROM passkeys WHERE credential_id = ?1 AND profile = ?2)"
    /// One staged record into `passkeys` (its values are `stagedColumns`').
    static let moveStagedSQL = "INSERT INTO passkeys (\(stagedColumns)) VALUES (\((1...stagedColumnCount).map { "?\($0)" }.joined(separator: ", ")))"
    static let stagedMarkSQL = "SELECT value FROM meta WHERE key = 'staged_through'"
    static let setStagedMarkSQL = "INSERT OR REPLACE INTO meta (key, value) VALUES ('staged_through', ?1)"
    /// What an older build left in `staged_passkeys` (migration 6), moved at open.
    static let moveLegacyStagedSQL = "INSERT INTO passkeys (\(stagedColumns)) SELECT \(stagedColumns) FROM staged_passkeys WHERE seq <= ? ORDER BY seq"
    /// Every row, moved: without a WHERE clause SQLite clears the table's pages at once instead of row by row.
    static let deleteLegacyStagedSQL = "DELETE FROM staged_passkeys"
    static let legacyStagedExistsSQL = "SELECT max(seq) FROM staged_passkeys"

    /// Whether a new passkey is staged: on a held vault, outside a transaction (whose rollback the mirror would not see).
    /// (While a move owns the connection the caller runs no transaction: it would have waited for the move.)
    var stages: Bool { connection.log != nil && (connection.busyOffLock || !db.inTransaction) }

    /// Whether `insertPasskey` would run no statement: it stages the passkey, the account filter says neither its
    /// credential ID nor (for a create that shadows or replaces) its account is known, and no move is owed; the
    /// mirror has room for it (`stagedBesideLimit`). The caller holds the lock.
    func registersBesideMove(_ record: PasskeyRecord, prior: PriorOfSameUser) -> Bool {
        connection.log != nil && connection.accounts != nil && !connection.staged.mustMove
            && connection.staged.waiting < Vault.stagedBesideLimit && !mayHoldCredential(record.credentialID)
            && (prior == .kept || !mayHoldHandle(rpID: record.rpID, userHandle: record.userHandle))
    }

    /// Appends a new passkey to the staging log (the caller holds the lock, outside a transaction). With `shadowing`,
    /// the account's older passkeys, staged or moved, get it as their shadow, and are returned; nothing is moved for
    /// it (the moved ones by `shadowPriorSQL` after the append: a crash between the two leaves the record, whose move
    /// shadows them again).
    ///
    /// - Parameter newID: the account filter said no passkey has the credential ID (asked before it was added).
    func stagePasskey(_ record: PasskeyRecord, sealedKey: [UInt8], sealedPRF: SQLValue, shadowing: Bool, newID: Bool) throws(VaultError) -> [ChangedPasskey] {
        guard try stagedEntry(record.credentialID) == nil else { throw Vault.duplicatePasskey(record) }
        if !newID {
            var held = false
            try db.query(Vault.stagedDuplicateSQL, [.blob(record.credentialID), .text(profile)]) { row in held = row.bool(0) }
            if held { throw Vault.duplicatePasskey(record) }
        }
        var values = Vault.bindings(record, capacity: Vault.stagedColumnCount)
        values += [.blob(sealedKey), .text(profile), sealedPRF]
        guard let log = connection.log else { throw VaultError(.storage, "The staging log of \(path) is not open.") }
        let before = log.length
        connection.stagedSeq += 1
        try log.append(seq: connection.stagedSeq, shadows: shadowing, values: values)
        var stored: [ChangedPasskey] = []
        let stagedPrior = shadowing ? connection.staged.unshadowed(profile: profile, rpID: record.rpID, userHandle: record.userHandle) : []
        if shadowing {
            do throws(VaultError) {
                stored = try shadowStored([.text(profile), .text(record.rpID), .blob(record.userHandle), .blob(record.credentialID)])
            } catch {
                log.truncate(to: before)
                throw error
            }
        }
        connection.staged.shadow(stagedPrior, by: record.credentialID)
        connection.staged.add(.init(record: record, profile: profile, sealedKey: sealedKey))
        connection.counts.added(record, profile: profile)
        if connection.staged.waiting >= Vault.stagedLimit {
            connection.moveWanted = true
        } else if connection.staged.waiting == 1 {
            let connection = self.connection
            DispatchQueue.global().asyncAfter(deadline: .now() + Vault.stagedDelay) {
                // Beside a running move: this only asks for the next one, which its end starts.
                connection.enter(withoutStatements: { true })
                defer { connection.leave() }
                guard connection.db.handle != nil, connection.staged.waiting > 0 else { return }
                connection.moveWanted = true
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

    /// Moves every staged passkey into `passkeys` (the caller holds the lock, no move runs on another thread);
    /// inside a transaction, as part of it.
    static func moveStaged(_ connection: Connection) throws(VaultError) {
        let staged = connection.staged
        guard !staged.isEmpty || staged.mustMove else { return }
        try connection.refuseBesideWork()  // before asking SQLite about a transaction the work may own
        let db = connection.db
        if db.inTransaction { staged.movedInTransaction = true }
        try moveLogged(connection)
        staged.removeAll()
        staged.mustMove = false
    }

    /// The staging logs' records after the mark into `passkeys`, in the order they were staged, with the bulk page
    /// cache, and the mark past them, in one transaction (the caller's, when it holds one). Outside a transaction the
    /// logs this process appends to are emptied once that commits (the moving one removed); inside one they are
    /// emptied by a later move. With no record to move (every open of a vault: `moveLeftoverStaged`) it reads the
    /// mark and begins no transaction.
    static func moveLogged(_ connection: Connection) throws(VaultError) {
        let db = connection.db
        let outside = !db.inTransaction
        var mark: Int64 = 0
        try db.query(stagedMarkSQL) { row in mark = row.int(0) }
        // The next record's sequence number follows the mark: a process that opens the vault starts from it.
        connection.stagedSeq = max(connection.stagedSeq, mark)
        let records = try loggedRecords(connection, after: mark)
        if let last = try insertRecords(records, db: db, path: connection.path, outside: outside, mark: mark) {
            connection.stagedSeq = max(connection.stagedSeq, last)
        }
        guard outside, let log = connection.log else { return }
        log.truncate(to: 0)
        if let moving = connection.movingLog {
            unlink(moving.path)
            moving.close()
            connection.movingLog = nil
        }
    }

    /// Inserts `records` (those after `mark`, oldest first) and advances the mark past them, in one transaction with
    /// the bulk page cache; returns the last one's sequence number (nil when there is none).
    ///
    /// - Parameter outside: the transaction is this call's own: the mark is read again under its write lock.
    @discardableResult
    static func insertRecords(_ records: [StagingLog.Record], db: SQLiteDatabase, path: String, outside: Bool, mark: Int64) throws(VaultError) -> Int64? {
        guard let last = records.last else { return nil }
        try withBulkCache(db) { () throws(VaultError) in
            try db.transaction { () throws(VaultError) in
                // Another process sharing the vault may have moved them since the read: the mark, read again
                // under the write lock, says which are still to move.
                var moved = mark
                if outside { try db.query(stagedMarkSQL) { row in moved = row.int(0) } }
                for record in records where record.seq > moved {
                    // A whole record (its checksum holds) of another shape was not written by this schema.
                    guard record.values.count == stagedColumnCount else {
                        throw VaultError(.corrupt, "The staging log of \(path) holds a record of \(record.values.count) values, not \(stagedColumnCount).")
                    }
                    try db.query(moveStagedSQL, record.values)
                    if record.shadows {
                        // The account's other passkeys not yet shadowed: what the registration shadowed, staged or moved.
                        try db.query(shadowPriorSQL, [record.values[21], record.values[1], record.values[2], record.values[0]])
                    }
                }
                try db.query(setStagedMarkSQL, [.int(max(moved, last.seq))])
            }
        }
        return last.seq
    }

    /// The staging logs' records after `mark`, a moving log's first: through the descriptors this process appends
    /// to when it holds the vault, else from the files beside it (none when there are none).
    static func loggedRecords(_ connection: Connection, after mark: Int64) throws(VaultError) -> [StagingLog.Record] {
        guard let log = connection.log else { return try StagingLog.records(forVault: connection.path, after: mark) }
        return try (connection.movingLog?.records(after: mark) ?? []) + log.records(after: mark)
    }

    /// Starts moving the staged registrations on another thread, off the lock (the caller holds it, outermost, and
    /// has asked for it with `moveWanted`): the log is renamed for the move to read and a new one takes the
    /// registrations that arrive meanwhile (`StagingLog.rotate`), the mirror's entries stay visible until the
    /// move's commit (`StagedPasskeys.beginMove`), and operations that run no statement go on beside it.
    ///
    /// A move holding the lock made a registration wait for it: 27-33 ms a batch of 4,096 (SQLite's inserts into
    /// six b-trees), about 7 µs a registration on top of the 21 µs of its own work. Off the lock, on the second
    /// core, it costs a registration nothing but the rotation. What cannot move this way (a transaction open, a
    /// moving log left by a failed move, the rename failing) moves here, on the caller's thread, under the lock.
    static func startMove(_ connection: Connection) {
        guard !connection.busyOffLock else { return }  // its end starts the next
        connection.moveWanted = false
        let db = connection.db
        guard db.handle != nil, !db.inTransaction, !connection.staged.isEmpty else { return }
        guard connection.movingLog == nil, !connection.staged.mustMove, let log = connection.log,
              let fresh = try? log.rotate(vaultPath: connection.path) else {
            try? moveStaged(connection)
            return
        }
        connection.movingLog = log
        connection.log = fresh
        connection.staged.beginMove()
        connection.beginOffLock()
        // A thread of its own, not the dispatch pool's: the pool's threads may be the ones waiting for it.
        Thread.detachNewThread { moveInBackground(connection) }
    }

    /// The move `startMove` began: the moving log's records into `passkeys`, then, under the lock, its file removed
    /// and the mirror's entries dropped. A failed move leaves both, and the next operation that reads passkeys
    /// moves them under the lock (`mustMove`).
    private static func moveInBackground(_ connection: Connection) {
        connection.lock.lock()
        connection.offLockThread = pthread_self()
        let log = connection.movingLog
        let gate = connection.offLockGate
        connection.lock.unlock()
        let db = connection.db
        var moved = false
        if let log {
            do throws(VaultError) {
                try gate?()
                // Every record of the batch: the transaction reads the mark (`outside`) and skips what it covers.
                try insertRecords(try log.records(after: 0), db: db, path: connection.path, outside: true, mark: 0)
                moved = true
            } catch {}
        }
        connection.lock.lock()
        if moved, let log {
            unlink(log.path)
            log.close()
            connection.movingLog = nil
            connection.staged.endMove()
        } else {
            connection.staged.mustMove = true
        }
        // A batch filled meanwhile (or the delay passed): the next move starts now.
        connection.endOffLock()
        connection.lock.unlock()
    }

    /// After a rollback: a move it undid is made again (the mirror was emptied by it).
    static func stagedAfterRollback(_ connection: Connection) {
        let staged = connection.staged
        guard staged.movedInTransaction, !connection.db.inTransaction else { return }
        staged.movedInTransaction = false
        do throws(VaultError) { try moveLogged(connection) } catch { staged.mustMove = true }
    }

    /// Moves what a process that held the vault left staged (it stopped before moving them), and what an older build
    /// left in `staged_passkeys`; at open, and again once the file is held (a holder may have stopped in between).
    func moveLeftoverStaged() throws(VaultError) {
        try locked { () throws(VaultError) in
            var legacy = false
            try db.query(Vault.legacyStagedExistsSQL) { row in legacy = !row.isNull(0) }
            if legacy {
                try Vault.withBulkCache(db) { () throws(VaultError) in
                    try db.transaction { () throws(VaultError) in
                        try db.query(Vault.moveLegacyStagedSQL, [.int(Int64.max)])
                        try db.query(Vault.deleteLegacyStagedSQL)
                    }
                }
            }
            try Vault.moveLogged(connection)
        }
    }

    /// Installs the hooks through which the connection keeps `staged_passkeys` invisible to every other statement,
    /// and its `PasskeyRecordCache` true to the file.
    static func installStaging(on connection: Connection) {
        // Only the thread of the work off the lock runs statements while it owns the connection (a move, a batch
        // of events): an operation that said it runs none (`Connection.enter(withoutStatements:)`) and then ran one
        // is refused, not let into that work's transaction.
        connection.db.beforeStatement = { [unowned connection] () throws(VaultError) in try connection.refuseBesideWork() }
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
            // A rollback of work off the lock (a move, a batch of events) touched none of this, which is the lock
            // holder's to change.
            guard let connection, !connection.onOffLockThread else { return }
            connection.records.removeAll()
            connection.counts.removeAll()
            Vault.stagedAfterRollback(connection)
        }
    }

    static func duplicatePasskey(_ record: PasskeyRecord) -> VaultError {
        VaultError(.duplicate, "A passkey with credential ID \(record.id) is already in the vault.")
    }
}
