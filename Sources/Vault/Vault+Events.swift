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
    /// pay for it. A crash can lose the events of the last few milliseconds.
    public func appendEvent(kind: String, outcome: String, reason: String, detail: JSONValue, at time: Date) throws(VaultError) {
        try locked { () throws(VaultError) in
            events.sequence += 1
            events.pending.append((profile, time.vaultMillis, kind, outcome, reason, detail, events.sequence))
            if events.pending.count >= Vault.eventBatch { try flushEvents() } else { scheduleEventFlush() }
        }
    }

    static let eventBatch = 256
    static let eventDelay: TimeInterval = 0.02
    /// Rows per INSERT statement.
    static let eventRowsPerStatement = 16
    private static let eventColumns = "INSERT INTO events (profile, at, kind, outcome, reason, detail) VALUES "
    private static let insertEventRows = eventColumns + Array(repeating: "(?, ?, ?, ?, ?, ?)", count: eventRowsPerStatement).joined(separator: ", ")
    private static let insertEventRow = eventColumns + "(?, ?, ?, ?, ?, ?)"

    /// Writes the events waiting in memory.
    public func flushEvents() throws(VaultError) {
        try locked { () throws(VaultError) in try Vault.flush(events, into: db) }
    }

    /// Writes a buffer's events in one transaction. Inside another transaction the batch waits: a rollback of
    /// that transaction must not take it along.
    static func flush(_ events: EventBuffer, into db: SQLiteDatabase) throws(VaultError) {
        guard !events.pending.isEmpty, db.handle != nil, !db.inTransaction else { return }
        let rows = events.pending.map { ($0.0, $0.1, $0.2, $0.3, $0.4, $0.5.serialized(), $0.6) }
        try insert(rows, into: db)
        events.markInserted(through: rows.last!.6)
    }

    /// Inserts serialized events in one transaction (the caller holds the connection's lock).
    static func insert(_ rows: [(String, Int64, String, String, String, String, Int)], into db: SQLiteDatabase) throws(VaultError) {
        guard !rows.isEmpty, db.handle != nil else { return }
        func values(_ e: (String, Int64, String, String, String, String, Int)) -> [SQLValue] {
            [.text(e.0), .int(e.1), .text(e.2), .text(e.3), .text(e.4), .text(e.5)]
        }
        try db.transaction { () throws(VaultError) in
            // Whole statements of several rows, then one row at a time: the same order, fewer statements.
            var index = 0
            while rows.count - index >= eventRowsPerStatement {
                try db.query(insertEventRows, rows[index..<index + eventRowsPerStatement].flatMap(values))
                index += eventRowsPerStatement
            }
            for e in rows[index...] { try db.query(insertEventRow, values(e)) }
        }
    }

    /// Events in order, for this profile or (with `allProfiles`) every one, optionally of one kind, after an ID.
    public func events(kind: String? = nil, allProfiles: Bool = false, after: Int64 = 0, limit: Int = 10_000) throws(VaultError) -> [EventRecord] {
        var clauses = ["id > ?"]
        var bindings: [SQLValue] = [.int(after)]
        if !allProfiles { clauses.append("profile = ?"); bindings.append(.text(profile)) }
        if let kind { clauses.append("kind = ?"); bindings.append(.text(kind)) }
        return try selectEvents(clauses, bindings, order: "ASC", limit: limit)
    }

    /// The profile's latest event of one of `kinds` whose detail has each (member, value) of `matching`
    /// (and the outcome, when given): the engine's findings ask this on every ceremony, so SQLite filters
    /// the detail (`json_extract`) instead of the whole log being read.
    public func lastEvent(kinds: [String], outcome: String? = nil, matching: [(String, String)] = []) throws(VaultError) -> EventRecord? {
        var clauses = ["profile = ?", "kind IN (" + kinds.map { _ in "?" }.joined(separator: ", ") + ")"]
        var bindings: [SQLValue] = [.text(profile)] + kinds.map(SQLValue.text)
        if let outcome { clauses.append("outcome = ?"); bindings.append(.text(outcome)) }
        for (member, value) in matching {
            clauses.append("json_extract(detail, ?) = ?")
            bindings += [.text("$." + member), .text(value)]
        }
        return try selectEvents(clauses, bindings, order: "DESC", limit: 1).first
    }

    private func selectEvents(_ clauses: [String], _ bindings: [SQLValue], order: String, limit: Int) throws(VaultError) -> [EventRecord] {
        try flushEvents()
        return try locked { () throws(VaultError) in
            var out: [EventRecord] = []
            try db.query("SELECT id, profile, at, kind, outcome, reason, detail FROM events WHERE \(clauses.joined(separator: " AND ")) ORDER BY id \(order) LIMIT ?",
                         bindings + [.int(Int64(limit))]) { row in
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
            try db.query("SELECT state FROM signal_quota WHERE profile = ? AND key = ?", [.text(profile), .text(key)]) { row in found = row.text(0) }
            return found
        }
    }

    public func setQuotaState(_ key: String, _ state: String) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query("INSERT INTO signal_quota (profile, key, state) VALUES (?, ?, ?) ON CONFLICT (profile, key) DO UPDATE SET state = excluded.state",
                         [.text(profile), .text(key), .text(state)])
        }
    }

    /// Queues the simulated user's next decision (first in, first out).
    public func pushDecision(_ decision: String) throws(VaultError) {
        try locked { () throws(VaultError) in
            connection.profilesWithoutDecisions.remove(profile)
            try db.query("INSERT INTO user_decisions (profile, decision) VALUES (?, ?)", [.text(profile), .text(decision)])
        }
    }

    /// Takes the next queued decision, if any.
    ///
    /// Every ceremony asks, and the queue is nearly always empty: a vault held exclusively remembers, per
    /// profile, that it found none (outside a transaction, which could still roll back) until one is pushed.
    public func popDecision() throws(VaultError) -> String? {
        try locked { () throws(VaultError) in
            if connection.exclusive && connection.profilesWithoutDecisions.contains(profile) { return nil }
            var found: (Int64, String)?
            try db.query("SELECT id, decision FROM user_decisions WHERE profile = ? ORDER BY id LIMIT 1", [.text(profile)]) { row in
                found = (row.int(0), row.text(1))
            }
            guard let found else {
                if connection.exclusive && !db.inTransaction { connection.profilesWithoutDecisions.insert(profile) }
                return nil
            }
            try db.transaction { () throws(VaultError) in
                try db.query("DELETE FROM user_decisions WHERE id = ?", [.int(found.0)])
            }
            return found.1
        }
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
