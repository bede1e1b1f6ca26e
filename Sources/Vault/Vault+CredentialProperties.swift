import WebAuthn

extension Vault {
    /// Sets a passkey's backup flags and signature counter, as WebDriver's Set Credential Properties does
    /// (WebAuthn L3 §11.10): each nil leaves its column as it is; `counter` is the counter's mode (`zero`: no
    /// signature counter, §11.5 `signCount: null`). A passkey the profile does not hold is `notFound`.
    public func setCredentialProperties(credentialID: [UInt8], backupEligible: Bool?, backupState: Bool?,
                                        signCount: UInt32?, counter: CounterMode?) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query(Vault.setCredentialPropertiesSQL,
                         [backupEligible.map(SQLValue.bool) ?? .null, backupState.map(SQLValue.bool) ?? .null,
                          signCount.map { SQLValue.int(Int64($0)) } ?? .null, counter.map { SQLValue.text($0.rawValue) } ?? .null,
                          .blob(credentialID), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    /// Removes every passkey of the profile (WebDriver's Remove All Credentials, §11.8); returns how many.
    @discardableResult
    public func removeAllPasskeys() throws(VaultError) -> Int {
        try locked { () throws(VaultError) in
            events.pendingUses = events.pendingUses.filter { $0.key.profile != profile }
            try db.query(Vault.removeAllPasskeysSQL, [.text(profile)])
            return db.changes
        }
    }

    static let setCredentialPropertiesSQL = """
        UPDATE passkeys SET backup_eligible = coalesce(?1, backup_eligible), backup_state = coalesce(?2, backup_state),
        sign_count = coalesce(?3, sign_count), counter = coalesce(?4, counter) WHERE credential_id = ?5 AND profile = ?6
        """
    static let removeAllPasskeysSQL = "DELETE FROM passkeys WHERE profile = ?"
}
