/// A held vault's `AccountFilter`: built when the file is held, kept by the writes that add accounts.
extension Vault {
    /// One index scan each (`passkeys_by_rp`, `passkeys_by_user_name`, the primary key's), at open: not on any
    /// ceremony's path.
    static let accountHandlesSQL = "SELECT profile, rp_id, user_handle FROM passkeys"
    static let accountNamesSQL = "SELECT profile, user_name FROM passkeys"
    static let credentialIDsSQL = "SELECT credential_id FROM passkeys"
    static let passkeyCountSQL = "SELECT count(*) FROM passkeys"

    /// The statements that write passkeys without dropping the filter: their callers add the accounts they write
    /// (insert, stage, rename), or they change no account (uses, hiding, secrets, large blobs, backup flags and counters); a move's rows
    /// were added when staged.
    static let keepsAccountFilter: Set<String> = [
        insertPasskeySQL, moveStagedSQL, moveLegacyStagedSQL, renameUserSQL, renameUserNameOnlySQL, updateUserSQL,
        recordAssertionSQL, recordUseSQL, setHiddenSQL, hideUnlistedSQL, restoreListedSQL, setPRFSecretSQL, setLargeBlobSQL,
        setCredentialPropertiesSQL, shadowPriorSQL, editUserSQL, replacePriorSQL,
    ]

    /// The statements that write passkeys without emptying `AccountCounts`: their callers count the passkeys they add
    /// (insert, stage), or they change no passkey's existence, visibility, user handle or user name (a move, shadowing,
    /// uses, secrets, large blobs, backup flags and counters).
    static let keepsAccountCounts: Set<String> = [
        insertPasskeySQL, moveStagedSQL, moveLegacyStagedSQL, deleteLegacyStagedSQL, shadowPriorSQL, recordAssertionSQL,
        recordUseSQL, setPRFSecretSQL, setLargeBlobSQL, setCredentialPropertiesSQL,
    ]

    /// Builds the filter from every passkey in the file (the caller holds the file alone).
    func buildAccountFilter() throws(VaultError) {
        try locked { () throws(VaultError) in
            var rows = 0
            try db.query(Vault.passkeyCountSQL) { row in rows = Int(row.int(0)) }
            let filter = AccountFilter(expected: 3 * rows)
            try db.query(Vault.accountHandlesSQL) { row in
                row.withBlob(2) { filter.addHandle(profile: row.text(0), rpID: row.text(1), userHandle: $0) }
            }
            try db.query(Vault.accountNamesSQL) { row in filter.addName(profile: row.text(0), userName: row.text(1)) }
            try db.query(Vault.credentialIDsSQL) { row in row.withBlob(0) { filter.addCredential($0) } }
            connection.accounts = filter
        }
    }

    /// Adds a passkey's account to the filter (the caller holds the lock).
    func addAccount(_ record: PasskeyRecord) {
        guard let accounts = connection.accounts else { return }
        accounts.addHandle(profile: profile, rpID: record.rpID, userHandle: record.userHandle)
        accounts.addName(profile: profile, userName: record.userName)
        accounts.addCredential(record.credentialID)
    }

    /// Whether any passkey may have this credential ID: true without a filter (the caller holds the lock).
    func mayHoldCredential(_ id: [UInt8]) -> Bool {
        connection.accounts?.mayHoldCredential(id) ?? true
    }

    /// A user name some passkey of this profile now has (the caller holds the lock).
    func addAccountName(_ name: String) {
        connection.accounts?.addName(profile: profile, userName: name)
    }

    /// Whether a passkey of this profile may have the user handle on the RP: true without a filter.
    func mayHoldHandle(rpID: String, userHandle: [UInt8]) -> Bool {
        connection.accounts?.mayHold(profile: profile, rpID: rpID, userHandle: userHandle) ?? true
    }

    /// Whether a passkey of this profile may have the user handle on the RP, or the user name: true without a filter.
    func mayHoldAccount(rpID: String, userHandle: [UInt8], userName: String) -> Bool {
        connection.accounts?.mayHold(profile: profile, rpID: rpID, userHandle: userHandle, userName: userName) ?? true
    }
}
