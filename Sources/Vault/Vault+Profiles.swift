import Foundation
import WebAuthn

extension Vault {
    /// A profile's stored settings (an engine-defined JSON object), or nil when the profile does not exist.
    public func profileSettings(_ name: String) throws(VaultError) -> JSONValue? {
        try settings(of: name, in: .profiles)
    }

    /// Creates or replaces a profile's settings.
    public func saveProfile(_ name: String, settings: JSONValue, at time: Date) throws(VaultError) {
        try save(settings, of: name, in: .profiles, at: time)
    }

    /// Every profile with its settings, by name.
    public func allProfiles() throws(VaultError) -> [(name: String, settings: JSONValue)] {
        try allSettings(in: .profiles)
    }

    /// A table of named settings objects: `profiles` and `devices` (name, settings, created_at).
    enum SettingsTable: String {
        case profiles, devices
        var noun: String { self == .profiles ? "profile" : "device" }
    }

    func settings(of name: String, in table: SettingsTable) throws(VaultError) -> JSONValue? {
        try locked { () throws(VaultError) in
            var found: String?
            try db.query("SELECT settings FROM \(table.rawValue) WHERE name = ?", [.text(name)]) { row in found = row.text(0) }
            guard let found else { return nil }
            guard let settings = try? JSONValue.parse(found) else {
                throw VaultError(.corrupt, "The settings of \(table.noun) \(name) are unreadable: the vault is damaged.")
            }
            return settings
        }
    }

    func save(_ settings: JSONValue, of name: String, in table: SettingsTable, at time: Date) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query("""
                INSERT INTO \(table.rawValue) (name, settings, created_at) VALUES (?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET settings = excluded.settings
                """, [.text(name), .text(settings.serialized()), .int(time.vaultMillis)])
        }
    }

    func allSettings(in table: SettingsTable) throws(VaultError) -> [(name: String, settings: JSONValue)] {
        try locked { () throws(VaultError) in
            var rows: [(String, String)] = []
            try db.query("SELECT name, settings FROM \(table.rawValue) ORDER BY name") { row in rows.append((row.text(0), row.text(1))) }
            var out: [(name: String, settings: JSONValue)] = []
            for (name, text) in rows {
                guard let settings = try? JSONValue.parse(text) else {
                    throw VaultError(.corrupt, "The settings of \(table.noun) \(name) are unreadable: the vault is damaged.")
                }
                out.append((name, settings))
            }
            return out
        }
    }

    /// Deletes a profile with its passwords, passkeys, events and state; says whether it existed.
    @discardableResult
    public func removeProfile(_ name: String) throws(VaultError) -> Bool {
        try transaction { () throws(VaultError) in
            for table in ["passwords", "passkeys", "events", "event_marks", "signal_quota", "user_decisions"] {
                try db.query("DELETE FROM \(table) WHERE profile = ?", [.text(name)])
            }
            try db.query("DELETE FROM profiles WHERE name = ?", [.text(name)])
            // What this handle remembers of the profile goes with it (175,000 keys made and removed kept 23 MB).
            connection.profilesWithoutDecisions.remove(name)
            return db.changes == 1
        }
    }

    /// How many profiles the handle remembers something of in memory (tests: a removed one leaves nothing).
    var rememberedProfileCount: Int { (try? locked { () throws(VaultError) in connection.profilesWithoutDecisions.count }) ?? 0 }

    /// Changes whenever another connection (another process) commits to the file; this connection's own
    /// commits leave it as it is. Caches of vault data stay valid while it does not change.
    public func dataVersion() throws(VaultError) -> Int64 {
        // Held exclusively, the file cannot change under us.
        if isExclusive { return 0 }
        return try locked { () throws(VaultError) in
            var version: Int64 = 0
            try db.query("PRAGMA data_version") { row in version = row.int(0) }
            return version
        }
    }

    /// The vault's virtual clock time, when `credemu clock` or `POST /clock` set one; nil means system time.
    public func storedClockTime() throws(VaultError) -> Date? {
        guard let value = try metaValue("clock"), value.hasPrefix("virtual:"), let millis = Int64(value.dropFirst(8)) else { return nil }
        return Date(vaultMillis: millis)
    }

    /// Keeps a virtual clock time for the CLI and the server to share; nil returns to system time.
    public func storeClockTime(_ date: Date?) throws(VaultError) {
        try setMetaValue("clock", date.map { "virtual:\($0.vaultMillis)" })
    }

    /// A vault-wide value kept in `meta` (the clock, for one).
    public func metaValue(_ key: String) throws(VaultError) -> String? {
        try locked { () throws(VaultError) in
            var found: String?
            try db.query("SELECT value FROM meta WHERE key = ?", [.text("x-" + key)]) { row in
                found = String(decoding: row.blob(0), as: UTF8.self)
            }
            return found
        }
    }

    public func setMetaValue(_ key: String, _ value: String?) throws(VaultError) {
        try locked { () throws(VaultError) in
            if let value {
                try db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                             [.text("x-" + key), .blob(Array(value.utf8))])
            } else {
                try db.query("DELETE FROM meta WHERE key = ?", [.text("x-" + key)])
            }
        }
    }
}
