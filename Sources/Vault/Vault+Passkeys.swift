import Foundation
import WebAuthn

extension Vault {
    private static let passkeyColumns = """
        credential_id, rp_id, user_handle, user_name, display_name, algorithm, public_key, sign_count, counter,
        backup_eligible, backup_state, aaguid, discoverable, attestation, hidden, hidden_at, created_at, last_used_at
        """

    /// Stores a new passkey with its PKCS#8 private key; a credential ID already present is a `duplicate`.
    public func insertPasskey(_ record: PasskeyRecord, privateKey pkcs8: [UInt8]) throws(VaultError) {
        let sealed = box.seal(pkcs8, context: Vault.keyContext(record.credentialID))
        try locked { () throws(VaultError) in
            do throws(VaultError) {
                try db.query("""
                    INSERT INTO passkeys (\(Vault.passkeyColumns), private_key, profile)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, Vault.bindings(record) + [.blob(sealed), .text(profile)])
            } catch {
                if error.code == .duplicate {
                    throw VaultError(.duplicate, "A passkey with credential ID \(record.id) is already in the vault.")
                }
                throw error
            }
        }
    }

    /// Every passkey, ordered by RP ID, user name and creation.
    public func allPasskeys() throws(VaultError) -> [PasskeyRecord] {
        try selectPasskeys("WHERE profile = ? ORDER BY rp_id, user_name, created_at, credential_id", [.text(profile)])
    }

    /// The passkeys for an RP ID, hidden ones only when asked for.
    public func passkeys(rpID: String, includeHidden: Bool = false) throws(VaultError) -> [PasskeyRecord] {
        try selectPasskeys("WHERE profile = ? AND rp_id = ?\(includeHidden ? "" : " AND hidden = 0") ORDER BY created_at, credential_id",
                           [.text(profile), .text(rpID)])
    }

    /// One account's passkeys for an RP ID: those with its user handle or its user name (at most `limit`).
    /// Two indexed lookups: with an OR, SQLite scans every passkey of the RP.
    public func passkeys(rpID: String, userHandle: [UInt8], userName: String, includeHidden: Bool = false,
                         limit: Int = Int.max) throws(VaultError) -> [PasskeyRecord] {
        let tail = (includeHidden ? "" : " AND hidden = 0") + " ORDER BY created_at, credential_id LIMIT \(min(limit, 1_000_000))"
        let byHandle = try selectPasskeys("WHERE profile = ? AND rp_id = ? AND user_handle = ?" + tail, [.text(profile), .text(rpID), .blob(userHandle)])
        let byName = try selectPasskeys("WHERE profile = ? AND rp_id = ? AND user_name = ? AND user_handle != ?" + tail,
                                        [.text(profile), .text(rpID), .text(userName), .blob(userHandle)])
        return Array((byHandle + byName).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.prefix(limit))
    }

    /// How many of an account's visible passkeys for an RP ID are not among `excluding`: counted in SQL, so an
    /// account with many passkeys costs no decoding. One statement, each half on its own index (with an OR,
    /// SQLite scans every passkey of the RP).
    public func countAccountPasskeys(rpID: String, userHandle: [UInt8], userName: String, excluding: [[UInt8]]) throws(VaultError) -> Int {
        var sql = Vault.countAccountSQL
        if !excluding.isEmpty {
            // The excluded IDs are ?5, ?6, ...: both halves name the same parameters.
            let notIn = " AND credential_id NOT IN (" + excluding.indices.map { "?\($0 + 5)" }.joined(separator: ", ") + ")"
            sql = """
                SELECT (SELECT COUNT(*) FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND hidden = 0\(notIn)) + \
                (SELECT COUNT(*) FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_name = ?4 AND user_handle != ?3 AND hidden = 0\(notIn))
                """
        }
        let ids = excluding.map(SQLValue.blob)
        return try locked { () throws(VaultError) in
            var total = 0
            try db.query(sql, [.text(profile), .text(rpID), .blob(userHandle), .text(userName)] + ids) { row in total = Int(row.int(0)) }
            return total
        }
    }

    private static let countAccountSQL = """
        SELECT (SELECT COUNT(*) FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND hidden = 0) + \
        (SELECT COUNT(*) FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_name = ?4 AND user_handle != ?3 AND hidden = 0)
        """

    public func passkey(id credentialID: [UInt8]) throws(VaultError) -> PasskeyRecord? {
        try selectPasskeys(sql: Vault.byIDSQL, [.blob(credentialID), .text(profile)]).first
    }

    /// The decrypted PKCS#8 private key of a stored passkey.
    public func privateKey(for credentialID: [UInt8]) throws(VaultError) -> [UInt8] {
        let sealed: [UInt8]? = try locked { () throws(VaultError) in
            var found: [UInt8]?
            try db.query("SELECT private_key FROM passkeys WHERE credential_id = ? AND profile = ?", [.blob(credentialID), .text(profile)]) { row in
                found = row.blob(0)
            }
            return found
        }
        guard let sealed else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        guard let key = box.open(sealed, context: Vault.keyContext(credentialID)) else {
            throw VaultError(.corrupt, "The private key of passkey \(Base64URL.encode(credentialID)) does not decrypt: the vault is damaged.")
        }
        return key
    }

    /// Records a completed assertion: the new counter value and the time of use.
    public func recordAssertion(credentialID: [UInt8], signCount: UInt32, at time: Date) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query("UPDATE passkeys SET sign_count = ?, last_used_at = ? WHERE credential_id = ? AND profile = ?",
                         [.int(Int64(signCount)), .int(time.vaultMillis), .blob(credentialID), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    /// Hides or unhides a passkey; a hidden passkey is never offered to a get.
    public func setHidden(credentialID: [UInt8], hidden: Bool, at time: Date) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query("UPDATE passkeys SET hidden = ?, hidden_at = ? WHERE credential_id = ? AND profile = ?",
                         [.bool(hidden), hidden ? .int(time.vaultMillis) : .null, .blob(credentialID), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    /// Renames a passkey's user entity (a current-user-details signal).
    public func updateUser(credentialID: [UInt8], name: String, displayName: String) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query("UPDATE passkeys SET user_name = ?, display_name = ? WHERE credential_id = ? AND profile = ?",
                         [.text(name), .text(displayName), .blob(credentialID), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    /// Removes a passkey for good; says whether there was one.
    @discardableResult
    public func removePasskey(credentialID: [UInt8]) throws(VaultError) -> Bool {
        try locked { () throws(VaultError) in
            try db.query("DELETE FROM passkeys WHERE credential_id = ? AND profile = ?", [.blob(credentialID), .text(profile)])
            return db.changes == 1
        }
    }

    private static let selectPasskeysSQL = "SELECT \(passkeyColumns) FROM passkeys "
    private static let byIDSQL = selectPasskeysSQL + "WHERE credential_id = ? AND profile = ?"

    private func selectPasskeys(_ clause: String, _ bindings: [SQLValue]) throws(VaultError) -> [PasskeyRecord] {
        try selectPasskeys(sql: Vault.selectPasskeysSQL + clause, bindings)
    }

    /// `sql` is a whole SELECT of `passkeyColumns`; the hot lookup by ID passes a prebuilt one.
    private func selectPasskeys(sql: String, _ bindings: [SQLValue]) throws(VaultError) -> [PasskeyRecord] {
        try locked { () throws(VaultError) in
            var records: [PasskeyRecord] = []
            try db.query(sql, bindings) { row throws(VaultError) in
                records.append(try Vault.passkey(from: row))
            }
            return records
        }
    }

    static func keyContext(_ credentialID: [UInt8]) -> String { "passkey:" + Base64URL.encode(credentialID) }

    private static func bindings(_ r: PasskeyRecord) -> [SQLValue] {
        [.blob(r.credentialID), .text(r.rpID), .blob(r.userHandle), .text(r.userName), .text(r.displayName),
         .int(Int64(r.algorithm.rawValue)), .blob(r.publicKey.encoded), .int(Int64(r.signCount)), .text(r.settings.counter.rawValue),
         .bool(r.settings.backupEligible), .bool(r.settings.backupState), .blob(r.settings.aaguid), .bool(r.settings.discoverable),
         .text(r.settings.attestation.rawValue), .bool(r.hidden), .optionalInt(r.hiddenAt?.vaultMillis), .int(r.createdAt.vaultMillis),
         .optionalInt(r.lastUsedAt?.vaultMillis)]
    }

    private static func passkey(from row: SQLRow) throws(VaultError) -> PasskeyRecord {
        let id = row.blob(0)
        func damaged(_ what: String) -> VaultError {
            VaultError(.corrupt, "Passkey \(Base64URL.encode(id)) has an unreadable \(what): the vault is damaged.")
        }
        guard let algorithm = COSEAlgorithm(rawValue: Int(row.int(5))) else { throw damaged("algorithm") }
        guard let publicKey = Vault.decodedKeys.key(row.blob(6)) else { throw damaged("public key") }
        guard let counter = CounterMode(rawValue: row.text(8)), let attestation = AttestationCapability(rawValue: row.text(13)) else {
            throw damaged("setting")
        }
        let settings = PasskeySettings(backupEligible: row.bool(9), backupState: row.bool(10), counter: counter,
                                       aaguid: row.blob(11), attestation: attestation, discoverable: row.bool(12))
        return PasskeyRecord(
            credentialID: id, rpID: row.text(1), userHandle: row.blob(2), userName: row.text(3), displayName: row.text(4),
            algorithm: algorithm, publicKey: publicKey, signCount: UInt32(truncatingIfNeeded: row.int(7)), settings: settings,
            hidden: row.bool(14), hiddenAt: row.optionalInt(15).map(Date.init(vaultMillis:)),
            createdAt: Date(vaultMillis: row.int(16)), lastUsedAt: row.optionalInt(17).map(Date.init(vaultMillis:)))
    }
}

/// COSE public keys already decoded, by their bytes: every assertion reads its passkey's row, and decoding
/// the same key each time costs more than the lookup.
final class DecodedKeyCache: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [[UInt8]: COSEKey] = [:]

    func key(_ bytes: [UInt8]) -> COSEKey? {
        lock.lock()
        defer { lock.unlock() }
        if let key = keys[bytes] { return key }
        guard let cbor = try? CBOR.decode(bytes), let key = try? COSEKey(cbor: cbor) else { return nil }
        if keys.count >= 4096 { keys.removeAll(keepingCapacity: true) }
        keys[bytes] = key
        return key
    }
}

extension Vault {
    static let decodedKeys = DecodedKeyCache()
}
