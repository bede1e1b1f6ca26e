import CSQLite
import CSQLiteVFS

/// A thin SQLite connection: prepared statements, typed binds and reads, errors as `VaultError`.
final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?
    let path: String
    private var statements: [String: Prepared] = [:]
    private var writeback: WALWriteback?
    /// Called with every statement `query` runs (tests: which statements a ceremony runs, for their query plans).
    var observer: ((String) -> Void)?
    /// Called before any statement that names the passkeys table, other than those in `seesStagedPasskeys`: the
    /// vault moves its staged registrations into `passkeys` there (see `Vault+Staging`).
    var beforePasskeyStatement: (() throws(VaultError) -> Void)?
    /// The statements on passkeys that see staged registrations by themselves (or move them).
    var seesStagedPasskeys: Set<String> = []
    /// Called before every statement: throws when the calling thread may not use the connection now (work off the
    /// vault's lock owns it: `Vault.Connection.beginOffLock`).
    var beforeStatement: (() throws(VaultError) -> Void)?
    /// Called after a transaction rolled back.
    var afterRollback: (() -> Void)?
    /// Called before a statement that may write passkeys' accounts (see `AccountFilter`), other than those in
    /// `keepsAccountFilter`, whose callers keep the filter true themselves or which change no account.
    var beforeAccountWrite: (() -> Void)?
    var keepsAccountFilter: Set<String> = []
    /// Called before a statement that may write passkeys (an insert, update, replace or delete that names them),
    /// other than those in `keepsAccountCounts`, whose callers keep `AccountCounts` true or which change no count.
    var beforeCountedWrite: (() -> Void)?
    var keepsAccountCounts: Set<String> = []

    /// A prepared statement, whether it needs `beforePasskeyStatement` first, whether `beforeAccountWrite`, and
    /// whether `beforeCountedWrite`.
    private struct Prepared {
        let statement: OpaquePointer
        let readsPasskeys: Bool
        let writesAccounts: Bool
        let changesCounts: Bool
    }

    /// Whether `sql` may write passkeys at all (a delete too), by its text.
    private static func mayWritePasskeys(_ sql: String) -> Bool {
        let upper = sql.uppercased()
        return upper.contains("PASSKEYS") && ["INSERT", "UPDATE", "REPLACE", "DELETE"].contains { upper.contains($0) }
    }

    /// Whether `sql` may write passkeys (an insert, update or replace that names them), by its text.
    private func mayWriteAccounts(_ sql: String) -> Bool {
        let upper = sql.uppercased()
        return upper.contains("PASSKEYS") && (upper.contains("INSERT") || upper.contains("UPDATE") || upper.contains("REPLACE"))
            && !keepsAccountFilter.contains(sql)
    }

    init(path: String, create: Bool) throws(VaultError) {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, SQLiteDatabase.vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw VaultError(.storage, "Cannot open the vault at \(path): \(message).")
        }
        guard SQLiteDatabase.registerPasswordSite(db) == SQLITE_OK else {
            sqlite3_close(db)
            throw VaultError(.storage, "Cannot open the vault at \(path): the password-site function did not register.")
        }
        handle = db
        sqlite3_busy_timeout(db, SQLiteDatabase.busyTimeoutMillis)
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// How long a statement waits for another process's lock before it fails as `locked`.
    static let busyTimeoutMillis: Int32 = 5000

    /// Waits up to `millis` for other processes' locks from now on (`busyTimeoutMillis` on opening).
    func setBusyTimeout(_ millis: Int32) {
        if let handle { sqlite3_busy_timeout(handle, millis) }
    }

    /// The VFS every connection uses: the default one, with a WAL's writes gathered into one call per commit
    /// (the `CSQLiteVFS` target). Nil, should it not register: the default.
    nonisolated(unsafe) private static let vfs: UnsafePointer<CChar>? = credemu_vfs_register()

    /// Hands the WAL's syncs and checkpoints to a `WALWriteback`.
    func startWALWriteback() {
        guard writeback == nil, let handle else { return }
        let writeback = WALWriteback(databasePath: path)
        writeback.install(on: handle)
        self.writeback = writeback
    }

    func close() {
        if let handle, writeback != nil { sqlite3_wal_hook(handle, nil, nil) }
        writeback?.stop()
        writeback = nil
        for (_, prepared) in statements { sqlite3_finalize(prepared.statement) }
        statements = [:]
        if let handle { sqlite3_close(handle) }
        handle = nil
    }

    func error(_ rc: Int32, _ what: String) -> VaultError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        switch rc & 0xFF {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return VaultError(.corrupt, "The file at \(path) is not a credemu vault or is damaged (\(message)).")
        case SQLITE_CONSTRAINT:
            return VaultError(.duplicate, "\(what): \(message).")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return VaultError(.locked, "The vault at \(path) is held by another process (a running `credemu serve` holds its vault); use that server's API, or stop it.")
        default:
            return VaultError(.storage, "\(what) failed: \(message).")
        }
    }

    func execute(_ sql: String) throws(VaultError) {
        try beforeStatement?()
        try beginIfPending()
        if let hook = beforePasskeyStatement, sql.contains("passkeys") { try hook() }
        if let hook = beforeAccountWrite, mayWriteAccounts(sql) { hook() }
        if let hook = beforeCountedWrite, SQLiteDatabase.mayWritePasskeys(sql) { hook() }
        var errmsg: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errmsg)
        if let errmsg { sqlite3_free(errmsg) }
        guard rc == SQLITE_OK else { throw error(rc, "SQL") }
    }

    /// Runs `sql` with `bindings`, calling `row` for each result row.
    func query(_ sql: String, _ bindings: [SQLValue] = [], row: (SQLRow) throws(VaultError) -> Void = { _ in }) throws(VaultError) {
        try beforeStatement?()
        try beginIfPending()
        observer?(sql)
        let prepared = try prepared(sql)
        if prepared.readsPasskeys, let hook = beforePasskeyStatement { try hook() }
        if prepared.writesAccounts, let hook = beforeAccountWrite { hook() }
        if prepared.changesCounts, let hook = beforeCountedWrite { hook() }
        let statement = prepared.statement
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (i, value) in bindings.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(statement, index)
            case .int(let v): rc = sqlite3_bind_int64(statement, index, v)
            // The byte count, not strlen: a string is stored whole even when it holds a NUL. Its UTF-8 in place (no
            // C string made first; SQLite copies it); an empty one as "", which a nil pointer would bind as NULL.
            case .text(var v):
                rc = v.withUTF8 { utf8 in
                    guard let base = utf8.baseAddress, utf8.count > 0 else { return sqlite3_bind_text(statement, index, "", 0, csqlite_transient()) }
                    return UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                        sqlite3_bind_text(statement, index, $0, Int32(clamping: utf8.count), csqlite_transient())
                    }
                }
            case .blob(let v):
                rc = v.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(v.count), csqlite_transient()) }
            }
            guard rc == SQLITE_OK else { throw error(rc, "binding") }
        }
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw error(rc, "SQL statement") }
            try row(SQLRow(statement: statement))
        }
    }

    /// Whether a transaction is open on the connection, or begins with the next statement.
    var inTransaction: Bool { beginPending || (handle != nil && sqlite3_get_autocommit(handle) == 0) }

    /// Set by `anyTransaction` until its body's first statement, which begins the transaction: a body that runs
    /// none (an assertion answered from memory, its use and event written later) costs no BEGIN and COMMIT.
    private var beginPending = false

    private func beginIfPending() throws(VaultError) {
        guard beginPending else { return }
        beginPending = false
        try query("BEGIN IMMEDIATE")
    }

    /// The page cache's size in KiB: SQLite's default until `withCacheSize` changes it.
    private(set) var cacheKiB = 2000

    /// Runs `body` with a page cache of `kib` KiB, then sets the size it had back (SQLite frees the pages over it);
    /// nested, the outer size holds.
    func withCacheSize<T>(kib: Int, _ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        let previous = cacheKiB
        guard kib != previous else { return try body() }
        try execute("PRAGMA cache_size = -\(kib)")
        cacheKiB = kib
        defer {
            try? execute("PRAGMA cache_size = -\(previous)")
            cacheKiB = previous
        }
        return try body()
    }

    /// The row ID of the last insert.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    private func prepared(_ sql: String) throws(VaultError) -> Prepared {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, "preparing SQL") }
        let prepared = Prepared(statement: statement, readsPasskeys: sql.contains("passkeys") && !seesStagedPasskeys.contains(sql),
                                writesAccounts: mayWriteAccounts(sql),
                                changesCounts: SQLiteDatabase.mayWritePasskeys(sql) && !keepsAccountCounts.contains(sql))
        statements[sql] = prepared
        return prepared
    }

    /// Runs `body` in one transaction: all of it lands, or none of it. Inside a transaction already, it
    /// simply runs `body` as part of the outer one.
    func transaction<T>(_ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        do {
            return try anyTransaction(body)
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError(.storage, "\(error)")
        }
    }

    /// `transaction` for bodies that throw other errors (the engine's), which pass through unchanged. The
    /// transaction begins (`BEGIN IMMEDIATE`) with the body's first statement; one that runs none has nothing to
    /// commit. The caller holds the connection throughout, so nothing in this process comes between.
    func anyTransaction<T>(_ body: () throws -> T) throws -> T {
        guard !inTransaction else { return try body() }
        beginPending = true
        do {
            let result = try body()
            if beginPending { beginPending = false } else { try query("COMMIT") }
            return result
        } catch {
            if beginPending {
                beginPending = false
            } else {
                try? query("ROLLBACK")
                afterRollback?()
            }
            throw error
        }
    }
}

enum SQLValue {
    case null
    case int(Int64)
    case text(String)
    case blob([UInt8])

    static func optionalInt(_ v: Int64?) -> SQLValue { v.map(SQLValue.int) ?? .null }
    static func bool(_ b: Bool) -> SQLValue { .int(b ? 1 : 0) }
}

/// One result row; columns are read by index.
struct SQLRow {
    let statement: OpaquePointer

    func isNull(_ i: Int32) -> Bool { sqlite3_column_type(statement, i) == SQLITE_NULL }
    func int(_ i: Int32) -> Int64 { sqlite3_column_int64(statement, i) }
    func optionalInt(_ i: Int32) -> Int64? { isNull(i) ? nil : int(i) }
    func bool(_ i: Int32) -> Bool { int(i) != 0 }
    func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(statement, i) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(statement, i))), as: UTF8.self)
    }
    func optionalBlob(_ i: Int32) -> [UInt8]? { isNull(i) ? nil : blob(i) }
    /// The column's bytes in place, valid only during `body`.
    func withBlob<T>(_ i: Int32, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        let p = sqlite3_column_blob(statement, i)
        return body(UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : Int(sqlite3_column_bytes(statement, i))))
    }
    func optionalText(_ i: Int32) -> String? { isNull(i) ? nil : text(i) }
    func blob(_ i: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, i))
        guard count > 0, let p = sqlite3_column_blob(statement, i) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: count))
    }
}
