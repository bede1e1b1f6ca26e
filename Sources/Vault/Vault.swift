import Dispatch
import Foundation
import WebAuthn
import Signing

/// One provider account's stored state in a single SQLite file (WAL): passwords and passkeys, with private
/// keys and passwords encrypted at rest under the vault key.
///
/// Opening never writes before the key is proven: a wrong key, a damaged file or a newer schema is an error
/// and the file is left exactly as it was. Calls are serialised on one connection, so a vault may be shared
/// across threads.
public final class Vault: @unchecked Sendable {
    /// The schema this build reads and writes; see `VaultMigrations`.
    public static var schemaVersion: Int { VaultMigrations.all.count }

    /// The vault file's path (its connection's: every profile's handle shares it).
    public var path: String { connection.path }
    /// The profile whose records this handle reads and writes; see `scoped(to:)`.
    public let profile: String
    let connection: Connection

    var db: SQLiteDatabase { connection.db }
    /// The event buffer lives on the shared connection and is changed in place (see `appendEvent`).
    var events: EventBuffer { connection.events }

    /// Writes buffered events (and pending last uses) soon, on another thread, so a ceremony does not pay for
    /// the log's page writes.
    func scheduleEventFlush() { Vault.scheduleEventFlush(connection) }

    /// `scheduleEventFlush` for a connection, as the flush itself calls it for the last uses it had to leave. The
    /// caller holds the connection's lock.
    static func scheduleEventFlush(_ connection: Connection) {
        guard !connection.events.scheduled else { return }
        connection.events.scheduled = true
        DispatchQueue.global().asyncAfter(deadline: .now() + Vault.eventDelay) {
            // Take the batch, serialize it without the lock (ceremonies keep running), then insert what is still
            // unwritten: a reader may have flushed synchronously meanwhile. Events leave the buffer only once
            // written, so a reader never misses one (`EventBuffer.take`). (Inserting in slices, releasing the lock
            // between, measured slower: the lock changes hands more often.)
            // Taking runs no statement: beside a move too, so that ceremonies' events do not pile up behind it.
            connection.enter(withoutStatements: { true })
            connection.events.scheduled = false
            let batch = connection.events.take()
            connection.leave()
            let serialized = batch.map(\.serialized)
            connection.enter()
            let written = Vault.insertScheduled(serialized, connection)
            // Last uses this flush had to leave (a move began as its batch ended) go with the next one, which
            // nothing else may bring soon: an idle vault would keep them in memory until its next event or close.
            if !connection.events.pendingUses.isEmpty, connection.db.handle != nil { Vault.scheduleEventFlush(connection) }
            connection.leave()
            // The batch's events and rows are freed here, outside the lock (`batch` holds the events the buffer
            // let go of): ceremonies wait for the lock, not for the deallocation.
            withExtendedLifetime((batch, serialized, written)) {}
        }
    }

    /// The scheduled flush's part under the lock: inserts what is still unwritten (a reader may have flushed
    /// meanwhile); returns the rows, for the caller to free after unlocking.
    ///
    /// The events are inserted off the lock (`Connection.offLock`): their statements touch only the event log and
    /// its marks, and registrations, assertions (`atomically(besideWork:)`) and their events go on beside them; a
    /// batch under the lock made them wait for its inserts and for the checkpoint its commit may run (50 ms and
    /// more). The last uses waiting then (those of the assertions beside it too) are written after it, under the
    /// lock, in a transaction of their own: their statement changes `passkeys` and the records kept
    /// (`writeUses`), which are the lock holder's. A crash between the two commits leaves a last use behind its
    /// logged assertion, as a crash before either loses both. The caller has entered the lock once (`enter`);
    /// this call may let it go and take it again.
    ///
    /// A batch with last uses (an assertion loop's every batch) was once written whole under the lock, and the
    /// loop waited for each.
    private static func insertScheduled(_ serialized: [EventRow], _ connection: Connection) -> [EventRow] {
        let done = connection.events.insertedThrough
        let rows = serialized.filter { $0.sequence > done }
        let db = connection.db
        let limit = connection.events.logLimit
        guard db.handle != nil, !db.inTransaction else { return rows }
        if let last = rows.last {
            // A failed batch stays in the buffer, and the uses with it: the next flush writes both.
            guard (try? connection.offLock({ () throws(VaultError) in try Vault.insert(rows, into: connection, logLimit: limit) })) != nil else { return rows }
            connection.events.markInserted(through: last.sequence)
        }
        // The end of the batch's work may have started a move (`endOffLock`): then the uses wait for the next
        // flush (reads see them meanwhile), and SQLite is not asked about a transaction the move owns.
        let uses = connection.events.pendingUses
        guard !uses.isEmpty, !connection.busyOffLock, !db.inTransaction else { return rows }
        if (try? Vault.insert([], uses: uses, into: connection, logLimit: limit)) != nil {
            connection.events.pendingUses.removeAll(keepingCapacity: true)
        }
        return rows
    }

    var box: SecretBox { connection.box }

    /// The connection, key and lock that every profile's handle on one file shares.
    final class Connection: @unchecked Sendable {
        let db: SQLiteDatabase
        let box: SecretBox
        let lock = NSRecursiveLock()
        let events = EventBuffer()
        /// Registrations appended to the staging log, not yet moved (see `Vault+Staging`).
        let staged = StagedPasskeys()
        /// The vault's path: its staging log is beside it.
        let path: String
        /// The staging log this process appends to: opened with the file held (`open(path:key:exclusive:)`).
        var log: StagingLog?
        /// The log a move reads (renamed by `Vault.startMove`), until its records are committed in `passkeys`.
        var movingLog: StagingLog?
        /// Set, under the lock, while work on another thread owns the database off the lock (a move of staged
        /// registrations, `Vault.startMove`; a batch of events, `Vault.scheduleEventFlush`): only operations that
        /// run no statement go on meanwhile (`enter(withoutStatements:)`). See `beginOffLock`.
        private(set) var busyOffLock = false
        /// Entered while `busyOffLock`: waiting for that work is waiting for the group to empty.
        private let offLockDone = DispatchGroup()
        /// The thread that work runs on (its statements are the only ones allowed meanwhile).
        var offLockThread: pthread_t?
        /// Tests: run by work off the lock on its thread before its first statement (it holds the work there; what
        /// it throws fails the work).
        var offLockGate: (() throws(VaultError) -> Void)?
        /// How deeply the thread holding the lock has entered it (`enter`); 0 when nobody holds it.
        private var depth = 0
        /// Set when a registration fills a batch or the delay passes: the outermost `leave` starts the move, so that
        /// no operation still running on this thread finds the database taken.
        var moveWanted = false
        /// The last staged record's sequence number (the log's, and the move's mark once it has moved it).
        var stagedSeq: Int64 = 0
        /// Passkeys read by ID, while the file is held (`exclusive`): nobody else can change them.
        let records = PasskeyRecordCache()
        /// Held for this process alone (see `open(path:key:exclusive:)`).
        var exclusive = false
        /// The accounts the held file may have passkeys for; nil when not held, or after a write it cannot follow.
        var accounts: AccountFilter?
        /// The accounts' passkey counts read or kept while the file is held (`AccountCounts`; used only with `accounts`).
        let counts = AccountCounts()
        /// Profiles whose user-decision queue was found empty; only trusted while `exclusive` (see `popDecision`).
        var profilesWithoutDecisions = Set<String>()
        /// The attestation root and batches read or made and committed (`Vault+Attestation`): rows never change once
        /// written, so these hold for every process.
        var attestationRoot: AttestationCA?
        var attestationBatches: [[UInt8]: AttestationBatch] = [:]

        init(path: String, db: SQLiteDatabase, box: SecretBox) {
            self.path = path
            self.db = db
            self.box = box
            Vault.installStaging(on: self)
        }

        /// Takes the lock; the outermost entry waits while work off the lock owns the database, unless
        /// `withoutStatements` says the operation runs no statement (asked holding the lock; a statement run anyway
        /// fails as `storage`: `Vault.installStaging`).
        func enter(withoutStatements: () -> Bool = { false }) {
            lock.lock()
            depth += 1
            guard depth == 1 else { return }
            while busyOffLock, !withoutStatements() {
                depth = 0
                lock.unlock()
                offLockDone.wait()
                lock.lock()
                depth = 1
            }
        }

        /// Lets the lock go; the outermost leave starts a move that was asked for (`Vault.startMove`).
        func leave() {
            if depth == 1, moveWanted { Vault.startMove(self) }
            depth -= 1
            lock.unlock()
        }

        /// Whether the calling thread is the work that owns the database off the lock.
        var onOffLockThread: Bool {
            guard let thread = offLockThread else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }

        /// Hands the database to work that runs off the lock (the caller holds the lock, no such work runs, and no
        /// transaction is open): until `endOffLock`, other threads' operations that run statements wait, and a
        /// statement they run anyway is refused. `thread` is the work's, when it is the caller's own; otherwise the
        /// work sets `offLockThread` under the lock before its first statement.
        ///
        /// One connection has one writer: a move or a batch of events holding the lock made every ceremony wait
        /// for its inserts (a move 27-33 ms a batch, a checkpoint in its commit 40-200 ms); off the lock, the
        /// operations that need no statement (`Vault.registersBesideMove`, `appendEvent`, ...) go on beside it.
        func beginOffLock(thread: pthread_t? = nil) {
            precondition(!busyOffLock, "one piece of work off the lock at a time")
            busyOffLock = true
            offLockThread = thread
            offLockDone.enter()
        }

        /// Refuses a statement on any thread but the work's while work off the lock owns the database, and notes
        /// it (`refusedBesideWork`): an operation that entered beside that work reached for one.
        func refuseBesideWork() throws(VaultError) {
            guard busyOffLock, !onOffLockThread else { return }
            refusedBesideWork = true
            throw VaultError(.storage, "A statement ran beside work off the vault's lock (a move of staged registrations or a batch of events), in an operation declared to run none.")
        }

        /// Set when `refuseBesideWork` refused a statement; `Vault.atomically(besideWork:)` clears and reads it.
        var refusedBesideWork = false

        /// Whether the caller, holding the lock, entered it outermost (`enter`).
        var outermost: Bool { depth == 1 }

        /// Gives the database back (the caller holds the lock): waiting operations go on, and a move asked for
        /// meanwhile starts.
        func endOffLock() {
            busyOffLock = false
            offLockThread = nil
            offLockDone.leave()
            if moveWanted { Vault.startMove(self) }
        }

        /// Runs `work`, which runs statements, on this thread without the lock (the caller has entered it once and
        /// runs no transaction): operations that run none go on meanwhile. The lock is held again on return, and
        /// nothing that ran meanwhile ran a statement.
        func offLock<T>(_ work: () throws(VaultError) -> T) throws(VaultError) -> T {
            precondition(depth == 1, "off the lock only from the outermost entry")
            beginOffLock(thread: pthread_self())
            let gate = offLockGate
            depth = 0
            lock.unlock()
            let result = Result { () throws(VaultError) in
                try gate?()
                return try work()
            }
            lock.lock()
            depth = 1
            endOffLock()
            return try result.get()
        }
    }

    /// The profile records belong to when none is named.
    public static let defaultProfile = "default"

    static let keyCheckPlaintext = Array("credemu vault key check".utf8)

    private init(path: String, db: SQLiteDatabase, box: SecretBox) {
        self.profile = Vault.defaultProfile
        self.connection = Connection(path: path, db: db, box: box)
    }

    private init(profile: String, connection: Connection) {
        self.profile = profile
        self.connection = connection
    }

    /// Whether this process holds the file alone: then nobody else can change it.
    public var isExclusive: Bool { connection.exclusive }

    /// A handle on the same file whose passwords, passkeys and events are those of `profile`.
    public func scoped(to profile: String) -> Vault {
        Vault(profile: profile, connection: connection)
    }

    /// Opens the vault at `path`, creating it (and, for a key-file source, the key file) when absent.
    ///
    /// - Parameter exclusive: hold the file for this process until `close()`, as a long-running owner such as
    ///   `credemu serve` does: each transaction then skips the file locking that sharing needs (about a tenth of
    ///   an assertion's cost), and other processes get a clear `locked` error instead of access.
    ///
    /// Processes that open one new path at once all end up on the same file: each makes its own under a temporary
    /// name, one links it into place, the others open that one (`create`). A failed open removes nothing.
    public static func open(path: String, key source: VaultKeySource, exclusive: Bool = false) throws(VaultError) -> Vault {
        let madeKey = FileManager.default.fileExists(atPath: path) ? nil : try create(path: path, source: source)
        let vault = try openExisting(path: path, source: source, key: madeKey)
        if exclusive {
            vault.connection.exclusive = true
            do throws(VaultError) {
                try vault.db.execute("PRAGMA locking_mode=EXCLUSIVE; BEGIN IMMEDIATE; COMMIT;")
                // What a holder that opened after `openExisting`'s move and then stopped left staged; held now, the
                // log is this process's: emptied once moved, appended to by every registration from now on.
                let moving = StagingLog.movingPath(forVault: path)
                let leftMoving = FileManager.default.fileExists(atPath: moving)
                if leftMoving || FileManager.default.fileExists(atPath: StagingLog.path(forVault: path)) { try vault.moveLeftoverStaged() }
                vault.connection.log = try StagingLog(vaultPath: path)
                if leftMoving { unlink(moving) }
                try vault.buildAccountFilter()
            } catch {
                vault.close()
                throw error
            }
        }
        return vault
    }

    /// Set on every connection; the WAL's checkpoints are `WALWriteback`'s (it replaces `wal_autocheckpoint`).
    static let connectionPragmas = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"

    /// The default key file for a vault: beside it, with `.key` appended.
    public static func defaultKeyFile(forVault path: String) -> String { path + ".key" }

    /// Puts a new, fully initialised vault at `path` (files 0600, directories 0700), unless another process
    /// puts one there first. Returns the key when the file at `path` is the one made here, so opening it derives
    /// no key again; nil when another process's is there. `schema` is for tests: a vault as an older credemu made it.
    static func create(path: String, source: VaultKeySource, schema: Int = schemaVersion) throws(VaultError) -> [UInt8]? {
        try VaultFiles.makeDirectories(VaultFiles.directory(of: path))
        var meta: [(String, [UInt8])] = [("key_kind", Array(source.kind.utf8))]
        let key: [UInt8]
        switch source {
        case .passphrase(let passphrase):
            let salt = SecureRandom.bytes(16)
            let ops = VaultKeyDerivation.interactiveOps
            let mem = VaultKeyDerivation.interactiveMem
            key = try VaultKeyDerivation.argon2id(passphrase, salt: salt, opsLimit: ops, memLimit: mem)
            meta += [("kdf_salt", salt), ("kdf_ops", Array(String(ops).utf8)), ("kdf_mem", Array(String(mem).utf8))]
        case .keyFile(let keyPath):
            key = FileManager.default.fileExists(atPath: keyPath)
                ? try VaultKeyDerivation.readKeyFile(keyPath) : try VaultKeyDerivation.createKeyFile(keyPath)
        case .raw(let raw):
            guard raw.count == SecretBox.keyLength else { throw VaultError(.keyUnavailable, "A raw vault key is 32 bytes.") }
            key = raw
        }
        let box = SecretBox(key: key)
        meta.append(("key_check", box.seal(keyCheckPlaintext, context: "key-check")))
        let (temporary, fd) = try VaultFiles.makeTemporary(beside: path)
        Glibc.close(fd)
        // Everything under the temporary name is this process's own: its -wal and -shm (a clean close has removed
        // them already) go whatever happens; the file itself, once it is in place or has failed.
        defer { for suffix in ["-wal", "-shm"] { unlink(temporary + suffix) } }
        do throws(VaultError) {
            // SQLite makes the -wal and -shm with the main file's mode, 0600, whatever the umask.
            let db = try SQLiteDatabase(path: temporary, create: false)
            defer { db.close() }
            try db.execute(Vault.connectionPragmas)
            try db.transaction { () throws(VaultError) in
                try VaultMigrations.migrate(db, from: 0, to: schema)
                for (k, v) in meta {
                    try db.query("INSERT INTO meta (key, value) VALUES (?, ?)", [.text(k), .blob(v)])
                }
            }
            // All of it into the main file: only that is linked into place.
            var busy: Int64 = 1
            try db.query("PRAGMA wal_checkpoint(TRUNCATE)") { row in busy = row.int(0) }
            guard busy == 0 else { throw VaultError(.storage, "The new vault at \(temporary) could not be checkpointed.") }
        } catch {
            unlink(temporary)
            throw error
        }
        return try VaultFiles.publish(temporary, as: path) ? key : nil
    }

    /// Opens the vault at `path`; `key`, when given, is the one `create` made it with.
    private static func openExisting(path: String, source: VaultKeySource, key known: [UInt8]?) throws(VaultError) -> Vault {
        let db = try SQLiteDatabase(path: path, create: false)
        do throws(VaultError) {
            // Read-only checks first: schema version, then the key.
            var version: Int64 = 0
            try db.query("PRAGMA user_version") { row in version = row.int(0) }
            try VaultMigrations.checkNotNewer(version, path: path)
            var meta: [String: [UInt8]] = [:]
            var hasMeta = false
            try db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'") { _ in hasMeta = true }
            guard version >= 1, hasMeta else {
                throw VaultError(.corrupt, "The file at \(path) is a SQLite database but not a credemu vault.")
            }
            try db.query("SELECT key, value FROM meta") { row in meta[row.text(0)] = row.blob(1) }
            let key = try deriveKey(meta: meta, source: source, path: path, known: known)
            let box = SecretBox(key: key)
            guard let check = meta["key_check"], box.open(check, context: "key-check") == keyCheckPlaintext else {
                throw VaultError(.wrongKey, "The key does not open the vault at \(path): wrong passphrase or key file.")
            }
            try db.execute(Vault.connectionPragmas)
            db.startWALWriteback()
            if version < Int64(schemaVersion) { try VaultMigrations.upgrade(db, path: path) }
            let vault = Vault(path: path, db: db, box: box)
            try vault.moveLeftoverStaged()
            try vault.loadEventLogLimit()
            return vault
        } catch {
            db.close()
            throw error
        }
    }

    private static func deriveKey(meta: [String: [UInt8]], source: VaultKeySource, path: String, known: [UInt8]?) throws(VaultError) -> [UInt8] {
        let kind = meta["key_kind"].map { String(decoding: $0, as: UTF8.self) } ?? "?"
        guard kind == source.kind else {
            throw VaultError(.keyUnavailable, "The vault at \(path) is protected by a \(kind), but a \(source.kind) was given.")
        }
        if let known { return known }
        switch source {
        case .passphrase(let passphrase):
            guard let salt = meta["kdf_salt"],
                  let ops = meta["kdf_ops"].flatMap({ UInt64(String(decoding: $0, as: UTF8.self)) }),
                  let mem = meta["kdf_mem"].flatMap({ Int(String(decoding: $0, as: UTF8.self)) }) else {
                throw VaultError(.corrupt, "The vault at \(path) lacks its key-derivation parameters.")
            }
            return try VaultKeyDerivation.argon2id(passphrase, salt: salt, opsLimit: ops, memLimit: mem)
        case .keyFile(let keyPath):
            return try VaultKeyDerivation.readKeyFile(keyPath)
        case .raw(let raw):
            return raw
        }
    }

    /// Runs `body` holding the connection; every public operation goes through here.
    ///
    /// - Parameter withoutStatements: whether the operation runs no statement, so it need not wait for work off the
    ///   lock (asked only while such work runs; see `Connection.enter`).
    func locked<T>(withoutStatements: () -> Bool = { false }, _ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        connection.enter(withoutStatements: withoutStatements)
        defer { connection.leave() }
        return try body()
    }

    /// Runs `body` as one transaction: all its changes land, or none.
    public func transaction<T>(_ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        try locked { () throws(VaultError) in try db.transaction(body) }
    }

    /// Runs `body` as one transaction whatever it throws: the engine groups a ceremony's reads and writes so
    /// they commit once, or not at all.
    ///
    /// - Parameter besideWork: `body` usually runs no statement (an assertion of a passkey and key in memory, its
    ///   counter zero), so it goes on beside work off the lock (a move, a batch of events) instead of waiting for
    ///   it. Meanwhile every statement it reaches for is refused (`Connection.refuseBesideWork`), the first one
    ///   included, and then `body` runs again once the work has ended, its first result dropped. So `body` must
    ///   keep its effects in memory after its last statement, and let a refusal end it (a refused attempt then
    ///   left nothing behind).
    public func atomically<T>(besideWork: Bool = false, _ body: () throws -> T) throws -> T {
        connection.enter(withoutStatements: { besideWork })
        guard besideWork, connection.busyOffLock else {
            defer { connection.leave() }
            return try db.anyTransaction(body)
        }
        guard connection.outermost else {
            // Inside an operation that itself went on beside the work: no transaction (asking SQLite whether one is
            // open would race the work), and a refused statement is that operation's to answer for.
            defer { connection.leave() }
            return try body()
        }
        // No transaction: the work owns the connection (even asking SQLite whether one is open would race it).
        connection.refusedBesideWork = false
        let attempt = Result { try body() }
        let refused = connection.refusedBesideWork
        connection.leave()
        guard refused else { return try attempt.get() }
        return try atomically(body)
    }

    /// Closes the connection; the WAL is checkpointed into the main file.
    public func close() {
        connection.enter()
        defer { connection.leave() }
        try? Vault.moveStaged(connection)
        try? flushEvents()
        connection.moveWanted = false
        if let log = connection.log {
            // Every record moved and committed: the files go while the vault is still held.
            if connection.staged.isEmpty, !connection.staged.mustMove, !db.inTransaction {
                if let moving = connection.movingLog { unlink(moving.path) }
                unlink(log.path)
            }
            log.close()
            connection.movingLog?.close()
            connection.log = nil
            connection.movingLog = nil
        }
        db.close()
    }
}

/// Events not yet written, in order. See `Vault.appendEvent`.
final class EventBuffer {
    /// Appended by ceremonies since the last `take`.
    private(set) var pending: [PendingEvent] = []
    /// What scheduled flushes took and have not yet written (a synchronous flush writes them too).
    private var taken: [PendingEvent] = []
    /// The last uses of zero-counter passkeys not yet written, by passkey (see `Vault.recordAssertion`).
    var pendingUses: [PasskeyKey: PendingUse] = [:]
    var scheduled = false
    var sequence = 0
    /// Every event up to this sequence number is in the table.
    var insertedThrough = 0
    /// The rows the log keeps (`Vault.eventLogLimit`).
    var logLimit = Int64(Vault.defaultEventLogLimit)

    func append(_ event: PendingEvent) { pending.append(event) }

    /// Every unwritten event, oldest first.
    var unwritten: [PendingEvent] {
        guard let newest = taken.last, newest.sequence > insertedThrough else { return pending }
        return taken.filter { $0.sequence > insertedThrough } + pending
    }

    var isEmpty: Bool { pending.isEmpty && (taken.last.map { $0.sequence <= insertedThrough } ?? true) }

    /// Hands every unwritten event to a scheduled flush, which serializes them outside the lock: they stay here
    /// (`taken`) until written, and ceremonies append to a new array meanwhile; appending to the one the flush
    /// still read made a copy of it on the ceremony's thread.
    func take() -> [PendingEvent] {
        taken = unwritten
        pending = []
        pending.reserveCapacity(taken.count)
        return taken
    }

    /// Drops the events up to `last`: they are written (what a scheduled flush took is freed by its own reference).
    func markInserted(through last: Int) {
        insertedThrough = max(insertedThrough, last)
        dropWritten(&taken, keepingCapacity: false)
        dropWritten(&pending, keepingCapacity: true)
    }

    /// Removes the written events from `events` (all of them, without a scan, when its newest is written).
    private func dropWritten(_ events: inout [PendingEvent], keepingCapacity: Bool) {
        if let newest = events.last, newest.sequence > insertedThrough {
            events.removeAll { $0.sequence <= insertedThrough }
        } else {
            events.removeAll(keepingCapacity: keepingCapacity)
        }
    }
}

/// A passkey's last use, waiting in memory to be written with the event log's next batch.
struct PendingUse {
    let at: Int64
}

/// Milliseconds since the Unix epoch, the vault's time unit; a date outside `Timestamp.earliest...latest` is stored
/// as the bound it passes.
extension Date {
    var vaultMillis: Int64 { Timestamp.millis(self) }
    init(vaultMillis: Int64) { self.init(timeIntervalSince1970: Double(vaultMillis) / 1000) }
}
