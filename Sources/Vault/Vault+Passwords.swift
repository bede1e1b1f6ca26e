import Foundation

extension Vault {
    /// Saves a password for (origin, username), replacing the secret of one already saved. `savedIn` names the
    /// password manager that holds it when that is not the profile's own provider (the last save decides).
    @discardableResult
    public func savePassword(origin: String, username: String, password: String, at time: Date,
                             lastFilledAt: Date? = nil, lastUsedAt: Date? = nil, savedIn: String? = nil) throws(VaultError) -> PasswordRecord {
        guard !origin.isEmpty else { throw VaultError(.invalidInput, "A password needs an origin (or signon realm).") }
        // NUL separates the two in the secret's associated data, so neither may hold one.
        guard !origin.utf8.contains(0), !username.utf8.contains(0) else {
            throw VaultError(.invalidInput, "An origin or a user name cannot contain NUL (U+0000).")
        }
        if let savedIn { try Vault.checkStoreName(savedIn) }
        let sealed = box.seal(Array(password.utf8), context: Vault.passwordContext(origin: origin, username: username))
        try locked { () throws(VaultError) in
            try db.query(Vault.savePasswordSQL, [.text(profile), .text(origin), .text(username), .blob(sealed), .int(time.vaultMillis),
                      .optionalInt(lastFilledAt?.vaultMillis), .optionalInt(lastUsedAt?.vaultMillis), savedIn.map(SQLValue.text) ?? .null,
                      PasswordSite.of(origin).map(SQLValue.text) ?? .null])
        }
        guard let record = try passwords(origin: origin).first(where: { $0.username == username }) else {
            throw VaultError(.storage, "The saved password could not be read back.")
        }
        return record
    }

    static let savePasswordSQL = """
        INSERT INTO passwords (profile, origin, username, password, created_at, last_filled_at, last_used_at, saved_in, site)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (profile, origin, username) DO UPDATE SET password = excluded.password, saved_in = excluded.saved_in, retired_at = NULL
        """
    static let selectPasswordsSQL = "SELECT id, origin, username, created_at, last_filled_at, last_used_at, saved_in, retired_at FROM passwords "
    static let passwordsByOriginSQL = selectPasswordsSQL + "WHERE profile = ? AND origin = ? ORDER BY username"
    static let passwordsBySiteSQL = selectPasswordsSQL + "WHERE profile = ? AND site = ? ORDER BY origin, username"
    static let passwordSecretSQL = "SELECT password FROM passwords WHERE id = ? AND profile = ?"
    static let retirePasswordSQL = "UPDATE passwords SET retired_at = ? WHERE profile = ? AND origin = ? AND username = ? AND retired_at IS NULL"
    static let deletePasswordByAccountSQL = "DELETE FROM passwords WHERE profile = ? AND origin = ? AND username = ?"
    static func markPasswordSQL(_ column: String) -> String { "UPDATE passwords SET \(column) = ? WHERE id = ? AND profile = ?" }

    /// Every password, ordered by origin and username.
    public func allPasswords() throws(VaultError) -> [PasswordRecord] {
        try selectPasswords(sql: Vault.selectPasswordsSQL + "WHERE profile = ? ORDER BY origin, username", [.text(profile)])
    }

    public func passwords(origin: String) throws(VaultError) -> [PasswordRecord] {
        try selectPasswords(sql: Vault.passwordsByOriginSQL, [.text(profile), .text(origin)])
    }

    /// The passwords saved at `realm` and at every realm that public-suffix matches it (`PasswordSite`: same scheme,
    /// registrable domain and port), ordered by origin and username; those at `realm` alone when it has no site.
    public func passwords(sameSiteAs realm: String) throws(VaultError) -> [PasswordRecord] {
        guard let site = PasswordSite.of(realm) else { return try passwords(origin: realm) }
        return try selectPasswords(sql: Vault.passwordsBySiteSQL, [.text(profile), .text(site)])
    }

    /// The decrypted password of a record.
    public func password(for record: PasswordRecord) throws(VaultError) -> String {
        let sealed: [UInt8]? = try locked { () throws(VaultError) in
            var found: [UInt8]?
            try db.query(Vault.passwordSecretSQL, [.int(record.id), .text(profile)]) { row in found = row.blob(0) }
            return found
        }
        guard let sealed else { throw VaultError(.notFound, "No password for \(record.username) at \(record.origin).") }
        guard let plain = box.open(sealed, context: Vault.passwordContext(origin: record.origin, username: record.username)) else {
            throw VaultError(.corrupt, "The password for \(record.username) at \(record.origin) does not decrypt: the vault is damaged.")
        }
        return String(decoding: plain, as: UTF8.self)
    }

    /// Records that a password was filled into a form (`date_last_filled` in Chrome's terms).
    public func markPasswordFilled(id: Int64, at time: Date) throws(VaultError) {
        try updatePassword("last_filled_at", id: id, time: time)
    }

    /// Records that a filled password was submitted in a sign-in (`date_last_used`).
    public func markPasswordUsed(id: Int64, at time: Date) throws(VaultError) {
        try updatePassword("last_used_at", id: id, time: time)
    }

    /// Hides the password of (origin, username) from autofill and the upgrade check; false when there is none
    /// offered. Saving it again offers it again.
    @discardableResult
    public func retirePassword(origin: String, username: String, at time: Date) throws(VaultError) -> Bool {
        try locked { () throws(VaultError) in
            try db.query(Vault.retirePasswordSQL, [.int(time.vaultMillis), .text(profile), .text(origin), .text(username)])
            return db.changes == 1
        }
    }

    /// Deletes the password of (origin, username); false when there is none.
    @discardableResult
    public func removePassword(origin: String, username: String) throws(VaultError) -> Bool {
        try locked { () throws(VaultError) in
            try db.query(Vault.deletePasswordByAccountSQL, [.text(profile), .text(origin), .text(username)])
            return db.changes == 1
        }
    }

    @discardableResult
    public func removePassword(id: Int64) throws(VaultError) -> Bool {
        try locked { () throws(VaultError) in
            try db.query("DELETE FROM passwords WHERE id = ? AND profile = ?", [.int(id), .text(profile)])
            return db.changes == 1
        }
    }

    private func updatePassword(_ column: String, id: Int64, time: Date) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query(Vault.markPasswordSQL(column), [.int(time.vaultMillis), .int(id), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No password with id \(id).") }
        }
    }

    private func selectPasswords(sql: String, _ bindings: [SQLValue]) throws(VaultError) -> [PasswordRecord] {
        try locked { () throws(VaultError) in
            var records: [PasswordRecord] = []
            try db.query(sql, bindings) { row in
                records.append(PasswordRecord(id: row.int(0), origin: row.text(1), username: row.text(2),
                                              createdAt: Date(vaultMillis: row.int(3)),
                                              lastFilledAt: row.optionalInt(4).map(Date.init(vaultMillis:)),
                                              lastUsedAt: row.optionalInt(5).map(Date.init(vaultMillis:)), savedIn: row.optionalText(6),
                                              retiredAt: row.optionalInt(7).map(Date.init(vaultMillis:))))
            }
            return records
        }
    }

    /// A password manager's name as `savedIn` takes it: 1 to 64 letters, digits, '-', '_' or '.'.
    public static func checkStoreName(_ name: String) throws(VaultError) {
        guard (1...64).contains(name.utf8.count),
              name.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || [0x2D, 0x5F, 0x2E].contains($0) })
        else {
            throw VaultError(.invalidInput, "savedIn must name a password manager in 1 to 64 letters, digits, '-', '_' or '.'.")
        }
    }

    static func passwordContext(origin: String, username: String) -> String {
        "password:" + origin + "\u{0}" + username
    }
}
