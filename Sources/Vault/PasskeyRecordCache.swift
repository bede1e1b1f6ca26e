import Foundation

/// The passkeys a held vault read by credential ID lately, as stored (pending last uses apply on top): an assertion
/// with an allow list then reads no SQL at all, so its transaction never begins (`SQLiteDatabase.anyTransaction`).
///
/// Emptied before any statement on passkeys other than the few that see staged rows (every write to a passkey is
/// one of those others: `Vault+Staging`) and after a rollback, so it never holds what the file does not. A batch of
/// last uses keeps it instead (`Vault.writeUses`): it writes the same time into each record it holds. Emptied
/// every 20 ms by the scheduled flush, the cache held nothing for an assertion loop.
final class PasskeyRecordCache {
    private var records: [PasskeyKey: PasskeyRecord] = [:]
    static let limit = 4096

    func record(_ credentialID: [UInt8], profile: String) -> PasskeyRecord? {
        records.isEmpty ? nil : records[PasskeyKey(credentialID, profile)]
    }

    func remember(_ record: PasskeyRecord, profile: String) {
        if records.count >= PasskeyRecordCache.limit { records.removeAll(keepingCapacity: true) }
        records[PasskeyKey(record.credentialID, profile)] = record
    }

    /// The use a batch of last uses just wrote (`Vault.writeUses`), applied to the record kept of it.
    func used(_ key: PasskeyKey, at millis: Int64) {
        guard var record = records[key] else { return }
        record.lastUsedAt = Date(vaultMillis: millis)
        records[key] = record
    }

    func forget(_ credentialID: [UInt8], profile: String) {
        if !records.isEmpty { records[PasskeyKey(credentialID, profile)] = nil }
    }

    func removeAll() {
        if !records.isEmpty { records.removeAll(keepingCapacity: true) }
    }
}
