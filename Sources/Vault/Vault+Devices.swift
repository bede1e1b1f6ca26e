import Foundation
import WebAuthn

extension Vault {
    /// A device's stored settings (an engine-defined JSON object), or nil when there is no such device.
    public func deviceSettings(_ name: String) throws(VaultError) -> JSONValue? {
        try locked { () throws(VaultError) in
            var found: String?
            try db.query("SELECT settings FROM devices WHERE name = ?", [.text(name)]) { row in found = row.text(0) }
            guard let found else { return nil }
            guard let settings = try? JSONValue.parse(found) else {
                throw VaultError(.corrupt, "The settings of device \(name) are unreadable: the vault is damaged.")
            }
            return settings
        }
    }

    /// Creates or replaces a device's settings.
    public func saveDevice(_ name: String, settings: JSONValue, at time: Date) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query("""
                INSERT INTO devices (name, settings, created_at) VALUES (?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET settings = excluded.settings
                """, [.text(name), .text(settings.serialized()), .int(time.vaultMillis)])
        }
    }

    /// Every device with its settings, by name.
    public func allDevices() throws(VaultError) -> [(name: String, settings: JSONValue)] {
        try locked { () throws(VaultError) in
            var rows: [(String, String)] = []
            try db.query("SELECT name, settings FROM devices ORDER BY name") { row in rows.append((row.text(0), row.text(1))) }
            var out: [(name: String, settings: JSONValue)] = []
            for (name, text) in rows {
                guard let settings = try? JSONValue.parse(text) else {
                    throw VaultError(.corrupt, "The settings of device \(name) are unreadable: the vault is damaged.")
                }
                out.append((name, settings))
            }
            return out
        }
    }

    /// Deletes a device (its accounts stay); says whether it existed.
    @discardableResult
    public func removeDevice(_ name: String) throws(VaultError) -> Bool {
        try locked { () throws(VaultError) in
            try db.query("DELETE FROM devices WHERE name = ?", [.text(name)])
            return db.changes == 1
        }
    }
}
