import Foundation
import WebAuthn

extension Vault {
    /// A device's stored settings (an engine-defined JSON object), or nil when there is no such device.
    public func deviceSettings(_ name: String) throws(VaultError) -> JSONValue? {
        try settings(of: name, in: .devices)
    }

    /// Creates or replaces a device's settings.
    public func saveDevice(_ name: String, settings: JSONValue, at time: Date) throws(VaultError) {
        try save(settings, of: name, in: .devices, at: time)
    }

    /// Every device with its settings, by name.
    public func allDevices() throws(VaultError) -> [(name: String, settings: JSONValue)] {
        try allSettings(in: .devices)
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
