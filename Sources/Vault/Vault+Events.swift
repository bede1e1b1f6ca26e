import Foundation
import WebAuthn

/// One entry of the event log: a ceremony, autofill, signal or setting change, with its outcome and reason.
public struct EventRecord: Equatable, Sendable {
    public var id: Int64
    public var profile: String
    public var at: Date
    public var kind: String
    public var outcome: String
    public var reason: String
    public var detail: JSONValue

    public var json: JSONValue {
        .object([("id", .number(Double(id))), ("profile", .string(profile)), ("at", .string(Timestamp.format(at))),
                 ("kind", .string(kind)), ("outcome", .string(outcome)), ("reason", .string(reason)), ("detail", detail)])
    }
}

extension Vault {
    /// Appends an event for this handle's profile.
    ///
    /// Events are buffered and written in batches on another thread, soon after (`eventDelay`), or at once when
    /// the log is read or the vault closed: an event costs a page write, and a ceremony's own commit should not
    /// pay for it. A crash can lose the events of the last few milliseconds. An event findings look for later
    /// also updates its `EventMark`, in the same transaction as its row.
    public func appendEvent(kind: String, outcome: String, reason: String, detail: JSONValue, at time: Date) throws(VaultError) {
        // Beside work off the lock the buffer is written after it (a flush runs statements), up to `eventBesideLimit`.
        try locked(withoutStatements: { self.events.pending.count < Vault.eventBesideLimit }) { () throws(VaultError) in
            events.sequence += 1
            events.append(PendingEvent(profile: profile, at: time.vaultMillis, kind: kind, outcome: outcome, reason: reason,
                                               detail: detail, marks: EventMark.marks(kind: kind, outcome: outcome, detail: detail),
                                               sequence: events.sequence))
            if events.pending.count >= Vault.eventBatch, !connection.busyOffLock { try flushEvents() } else { scheduleEventFlush() }
        }
    }

    static let eventBatch = 1024
    /// The most events appended beside work off the lock (a move, a batch written) before the next waits for it.
    static let eventBesideLimit = 16 * eventBatch
    static let eventDelay: TimeInterval = 0.02
    /// Rows per INSERT statement.
    static let eventRowsPerStatement = 16
    static let eventColumns = "INSERT INTO events (id, profile, at, kind, outcome, reason, detail) VALUES "
    static let insertEventRows = eventColumns + Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: eventRowsPerStatement).joined(separator: ", ")
    static let insertEventRow = eventColumns + "(?, ?, ?, ?, ?, ?, ?)"

    /// The statements that write the log and its marks, and rotate it (see `ScaleTests`).
    static let lastEventIDSQL = "SELECT max(id) FROM events"
    static let firstEventIDSQL = "SELECT min(id) FROM events"
    static let rotateEventsSQL = "DELETE FROM events WHERE id < ?"
    static let upsertMarkSQL = """
        INSERT INTO event_marks (profile, mark, key, key2, event_id, value) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (profile, mark, key, key2) DO UPDATE SET event_id = excluded.event_id, value = excluded.value
        """
    static let markSQL = "SELECT event_id, value FROM event_marks WHERE profile = ? AND mark = ? AND key = ? AND key2 = ?"
    /// The marked keys among a JSON array of keys (one parameter, however long the list).
    static let markedKeysSQL = """
        SELECT key FROM event_marks WHERE profile = ?1 AND mark = ?2 AND key2 = '' AND key IN (SELECT value FROM json_each(?3))
        """
    /// The rows rotation removes at most per flush, so no flush pays for a large delete.
    static let rotationStep: Int64 = 1024

    /// Writes the events and last uses waiting in memory.
    public func flushEvents() throws(VaultError) {
        try locked { () throws(VaultError) in try Vault.flush(connection) }
    }

    /// Writes a buffer's events in one transaction. Inside another transaction the batch waits: a rollback of
    /// that transaction must not take it along.
    static func flush(_ connection: Connection) throws(VaultError) {
        let events = connection.events, db = connection.db
        guard !events.isEmpty || !events.pendingUses.isEmpty, db.handle != nil, !db.inTransaction else { return }
        let rows = events.unwritten.map(\.serialized)
        try insert(rows, uses: events.pendingUses, into: connection, logLimit: events.logLimit)
        if let last = rows.last { events.markInserted(through: last.sequence) }
        events.pendingUses.removeAll(keepingCapacity: true)
    }

    /// Inserts serialized events and their marks, and writes pending last uses, in one transaction, then trims
    /// the log to `logLimit` rows (the caller holds the connection's lock). Each event gets the next ID
    /// explicitly, so its marks can name it.
    static func insert(_ rows: [EventRow], uses: [PasskeyKey: PendingUse] = [:], into connection: Connection, logLimit: Int64) throws(VaultError) {
        let db = connection.db
        guard !rows.isEmpty || !uses.isEmpty, db.handle != nil else { return }
        try db.transaction { () throws(VaultError) in
            try writeUses(uses, connection)
            guard !rows.isEmpty else { return }
            var last: Int64 = 0
            try db.query(lastEventIDSQL) { row in last = row.int(0) }
            let first = last + 1
            func values(_ offset: Int, _ e: EventRow) -> [SQLValue] {
                [.int(first + Int64(offset)), .text(e.profile), .int(e.at), .text(e.kind), .text(e.outcome), .text(e.reason), .text(e.detail)]
            }
            // Whole statements of several rows, then one row at a time: the same order, fewer statements.
            var index = 0
            while rows.count - index >= eventRowsPerStatement {
                var bindings: [SQLValue] = []
                bindings.reserveCapacity(7 * eventRowsPerStatement)
                for i in index..<index + eventRowsPerStatement { bindings += values(i, rows[i]) }
                try db.query(insertEventRows, bindings)
                index += eventRowsPerStatement
            }
            for i in index..<rows.count { try db.query(insertEventRow, values(i, rows[i])) }
            for (i, e) in rows.enumerated() {
                for m in e.marks {
                    try db.query(upsertMarkSQL, [.text(e.profile), .text(m.mark.rawValue), .text(m.key), .text(m.key2),
                                                 .int(first + Int64(i)), m.value.map(SQLValue.text) ?? .null])
                }
            }
            try rotate(db, newest: first + Int64(rows.count) - 1, limit: logLimit)
        }
    }

    /// Deletes the oldest events while the log spans more than `limit` IDs, at most `rotationStep` rows at a time
    /// (so every flush removes more than it adds until the log is within its limit). Marks stay: they are what
    /// findings need of the rows removed.
    static func rotate(_ db: SQLiteDatabase, newest: Int64, limit: Int64) throws(VaultError) {
        let keepFrom = newest - max(limit, 1) + 1
        guard keepFrom > 1 else { return }
        var oldest: Int64 = 0
        try db.query(firstEventIDSQL) { row in oldest = row.int(0) }
        guard oldest < keepFrom else { return }
        try db.query(rotateEventsSQL, [.int(min(keepFrom, oldest + rotationStep))])
    }

    /// Events in order, for this profile or (with `allProfiles`) every one, optionally of one kind, after an ID.
    public func events(kind: String? = nil, allProfiles: Bool = false, after: Int64 = 0, limit: Int = 10_000) throws(VaultError) -> [EventRecord] {
        var clauses = ["id > ?"]
        var bindings: [SQLValue] = [.int(after)]
        if !allProfiles { clauses.append("profile = ?"); bindings.append(.text(profile)) }
        if let kind { clauses.append("kind = ?"); bindings.append(.text(kind)) }
        return try selectEvents(Vault.eventsSQL(clauses), bindings, limit: limit)
    }

    static func eventsSQL(_ clauses: [String]) -> String {
        "SELECT id, profile, at, kind, outcome, reason, detail FROM events WHERE \(clauses.joined(separator: " AND ")) ORDER BY id LIMIT ?"
    }

    /// A profile's events of one kind (findings listed, a scenario's signal outcome): on `events_by_kind`.
    static let eventsOfKindSQL = eventsSQL(["id > ?", "profile = ?", "kind = ?"])

    /// The ID of the profile's latest event of `kind`, or 0 (one indexed lookup).
    public func lastEventID(kind: String) throws(VaultError) -> Int64 {
        try flushEvents()
        return try locked { () throws(VaultError) in
            var id: Int64 = 0
            try db.query(Vault.lastEventOfKindSQL, [.text(profile), .text(kind)]) { row in id = row.int(0) }
            return id
        }
    }

    static let lastEventOfKindSQL = "SELECT max(id) FROM events WHERE profile = ? AND kind = ?"

    /// The latest mark of `mark` for `key` (and `key2`): what findings ask instead of searching the log. The
    /// buffered events are written first, so the mark of an event just appended is there.
    public func latestMark(_ mark: EventMark.Kind, _ key: String, _ key2: String = "") throws(VaultError) -> EventMark? {
        try flushEvents()
        return try locked { () throws(VaultError) in
            var found: EventMark?
            try db.query(Vault.markSQL, [.text(profile), .text(mark.rawValue), .text(key), .text(key2)]) { row in
                found = EventMark(eventID: row.int(0), value: row.isNull(1) ? nil : row.text(1))
            }
            return found
        }
    }

    /// The first of `keys`, in their order, that has a mark of `mark` (one statement however many keys).
    public func firstMarked(_ mark: EventMark.Kind, among keys: [String]) throws(VaultError) -> String? {
        guard !keys.isEmpty else { return nil }
        try flushEvents()
        let marked = try locked { () throws(VaultError) in
            var found = Set<String>()
            try db.query(Vault.markedKeysSQL, [.text(profile), .text(mark.rawValue), .text(JSONValue.array(keys.map(JSONValue.string)).serialized())]) { row in
                found.insert(row.text(0))
            }
            return found
        }
        return keys.first(where: marked.contains)
    }

    /// How many rows the event log keeps (the oldest go first); marks are kept whatever the limit. Set for the
    /// vault with `setEventLogLimit`, or for one process with `CREDEMU_EVENT_LOG_LIMIT`.
    public var eventLogLimit: Int { Int(events.logLimit) }

    /// Keeps at most `rows` events (at least 1,000), from the next write on; stored in the vault for every process.
    public func setEventLogLimit(_ rows: Int) throws(VaultError) {
        guard rows >= Vault.minimumEventLogLimit else {
            throw VaultError(.invalidInput, "The event log keeps at least \(Vault.minimumEventLogLimit) rows.")
        }
        try setMetaValue(Vault.eventLogLimitKey, String(rows))
        try locked { () throws(VaultError) in events.logLimit = Int64(rows) }
    }

    /// Any limit, the minimum not applied (tests: a short log).
    func limitEventLog(to rows: Int64) {
        connection.enter()
        events.logLimit = rows
        connection.leave()
    }

    public static let defaultEventLogLimit = 1_000_000
    public static let minimumEventLogLimit = 1000
    static let eventLogLimitKey = "event-log-limit"
    static let eventLogLimitVariable = "CREDEMU_EVENT_LOG_LIMIT"

    /// The limit in force on opening: the environment's, else the vault's, else the default.
    func loadEventLogLimit(environment: [String: String] = ProcessInfo.processInfo.environment) throws(VaultError) {
        let stored = try metaValue(Vault.eventLogLimitKey).flatMap { Int($0) }
        let limit = environment[Vault.eventLogLimitVariable].flatMap { Int($0) } ?? stored ?? Vault.defaultEventLogLimit
        limitEventLog(to: Int64(max(limit, Vault.minimumEventLogLimit)))
    }

    private func selectEvents(_ sql: String, _ bindings: [SQLValue], limit: Int) throws(VaultError) -> [EventRecord] {
        try flushEvents()
        return try locked { () throws(VaultError) in
            var out: [EventRecord] = []
            try db.query(sql, bindings + [.int(Int64(limit))]) { row in
                out.append(EventRecord(id: row.int(0), profile: row.text(1), at: Date(vaultMillis: row.int(2)), kind: row.text(3),
                                       outcome: row.text(4), reason: row.text(5),
                                       detail: (try? JSONValue.parse(row.text(6))) ?? .string(row.text(6))))
            }
            return out
        }
    }

    /// Per-profile state a policy keeps between calls (signal rate-limit buckets), as text.
    public func quotaState(_ key: String) throws(VaultError) -> String? {
        try locked { () throws(VaultError) in
            var found: String?
            try db.query(Vault.quotaSQL, [.text(profile), .text(key)]) { row in found = row.text(0) }
            return found
        }
    }

    static let quotaSQL = "SELECT state FROM signal_quota WHERE profile = ? AND key = ?"
    static let setQuotaSQL = "INSERT INTO signal_quota (profile, key, state) VALUES (?, ?, ?) ON CONFLICT (profile, key) DO UPDATE SET state = excluded.state"
    static let pushDecisionSQL = "INSERT INTO user_decisions (profile, decision) VALUES (?, ?)"
    static let deleteDecisionSQL = "DELETE FROM user_decisions WHERE id = ?"
    static let nextDecisionSQL = "SELECT id, decision FROM user_decisions WHERE profile = ? ORDER BY id LIMIT 1"

    public func setQuotaState(_ key: String, _ state: String) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query(Vault.setQuotaSQL,
                         [.text(profile), .text(key), .text(state)])
        }
    }

    /// Queues the simulated user's next decision (first in, first out).
    public func pushDecision(_ decision: String) throws(VaultError) {
        try locked { () throws(VaultError) in
            connection.profilesWithoutDecisions.remove(profile)
            try db.query(Vault.pushDecisionSQL, [.text(profile), .text(decision)])
        }
    }

    /// Takes the next queued decision, if any.
    ///
    /// Every ceremony asks, and the queue is nearly always empty: a vault held exclusively remembers, per
    /// profile, that it found none (outside a transaction, which could still roll back) until one is pushed.
    public func popDecision() throws(VaultError) -> String? {
        try locked(withoutStatements: knownWithoutDecisions) { () throws(VaultError) in
            guard let found = try headDecision() else { return nil }
            try db.transaction { () throws(VaultError) in
                try db.query(Vault.deleteDecisionSQL, [.int(found.0)])
            }
            return found.1
        }
    }

    /// The next queued decision, left in the queue (the browser's sheet looks before it takes one); as cheap as
    /// `popDecision` when the queue is empty.
    public func peekDecision() throws(VaultError) -> String? {
        try locked(withoutStatements: knownWithoutDecisions) { () throws(VaultError) in try headDecision()?.1 }
    }

    /// Whether the profile's decision queue is known to be empty (`headDecision` then runs no statement).
    private func knownWithoutDecisions() -> Bool {
        connection.exclusive && connection.profilesWithoutDecisions.contains(profile)
    }

    /// The queue's head by ID; an empty queue is remembered on a held vault (see `popDecision`). The caller holds the lock.
    private func headDecision() throws(VaultError) -> (Int64, String)? {
        if connection.exclusive && connection.profilesWithoutDecisions.contains(profile) { return nil }
        var found: (Int64, String)?
        try db.query(Vault.nextDecisionSQL, [.text(profile)]) { row in
            found = (row.int(0), row.text(1))
        }
        if found == nil, connection.exclusive && !db.inTransaction { connection.profilesWithoutDecisions.insert(profile) }
        return found
    }

    public func pendingDecisions() throws(VaultError) -> [String] {
        try locked { () throws(VaultError) in
            var out: [String] = []
            try db.query("SELECT decision FROM user_decisions WHERE profile = ? ORDER BY id", [.text(profile)]) { row in out.append(row.text(0)) }
            return out
        }
    }

    public func clearDecisions() throws(VaultError) {
        try locked { () throws(VaultError) in try db.query("DELETE FROM user_decisions WHERE profile = ?", [.text(profile)]) }
    }
}
