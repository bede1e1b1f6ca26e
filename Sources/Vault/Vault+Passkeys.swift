import Foundation
import WebAuthn

extension Vault {
    static let passkeyColumns = """
        credential_id, rp_id, user_handle, user_name, display_name, algorithm, public_key, sign_count, counter,
        backup_eligible, backup_state, aaguid, discoverable, attestation, hidden, hidden_at, created_at, last_used_at,
        shadowed_by, edited_by_user
        """

    /// Stores a new passkey with its PKCS#8 private key and, when given, its PRF secret; a credential ID already
    /// present is a `duplicate`. `prior` says what becomes of the account's older passkeys (same RP ID and user
    /// handle): kept, shadowed by this one, or (this one discoverable) the discoverable ones deleted; returns those
    /// shadowed or deleted. An account the vault has never held (most creates) costs no SQL for that.
    @discardableResult
    public func insertPasskey(_ record: PasskeyRecord, privateKey pkcs8: [UInt8], prfSecret: [UInt8]? = nil,
                              prior: PriorOfSameUser = .kept) throws(VaultError) -> [ChangedPasskey] {
        try locked(withoutStatements: { self.registersBesideMove(record, prior: prior) }) { () throws(VaultError) in
            let seen = prior != .kept && mayHoldHandle(rpID: record.rpID, userHandle: record.userHandle)
            // A held vault shadows in the staged row's own commit (`Vault+Staging`): no move, one transaction.
            if seen, prior == .shadowed, stages { return try storePasskey(record, privateKey: pkcs8, prfSecret: prfSecret, shadowing: true) }
            _ = try storePasskey(record, privateKey: pkcs8, prfSecret: prfSecret, shadowing: false)
            guard seen else { return [] }
            // After the insert: an insert that fails leaves the older ones as they were. Moves staged rows first (a
            // statement that does not see them), so a staged passkey of the account is replaced too.
            let bindings: [SQLValue] = [.text(profile), .text(record.rpID), .blob(record.userHandle), .blob(record.credentialID)]
            switch prior {
            case .kept: return []
            case .shadowed: return try shadowStored(bindings)
            case .replaced:
                guard record.settings.discoverable else { return [] }
                // The replacing DELETE sees no staged row: the account's own staged ones (a re-registration within
                // one batch) are moved first; otherwise the staged rows stay staged (they are all newer than any
                // moved passkey, so none is shadowed by one it deletes), and what it deletes leaves the record cache.
                if holdsStagedDiscoverable(record) {
                    try Vault.moveStaged(connection)
                } else {
                    var found = false
                    try db.query(Vault.priorDiscoverableSQL, bindings) { row in found = row.bool(0) }
                    guard found else { return [] }
                }
                let removed = try changed(Vault.replacePriorSQL, bindings)
                for passkey in removed {
                    events.pendingUses[PasskeyKey(passkey.credentialID, profile)] = nil
                    connection.records.forget(passkey.credentialID, profile: profile)
                }
                return removed
            }
        }
    }

    /// Whether one of the account's staged passkeys other than `record` is discoverable (the caller holds the lock).
    /// A create the account filter only took for a known account (a false "maybe", about 1% of new accounts a
    /// layer) then asks `priorDiscoverableSQL`, and replaces nothing when it finds nothing.
    private func holdsStagedDiscoverable(_ record: PasskeyRecord) -> Bool {
        connection.staged.holds(profile: profile, rpID: record.rpID, userHandle: record.userHandle) {
            $0.credentialID != record.credentialID && $0.settings.discoverable
        }
    }

    static let priorDiscoverableSQL = """
        SELECT EXISTS (SELECT 1 FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND credential_id != ?4 \
        AND discoverable = 1)
        """

    /// The account's passkeys in `passkeys` that `shadowPriorSQL` shadows (the caller holds the lock; `bindings` as
    /// the statement's). The statement sees no staged row, and does not empty the record cache as other writes do:
    /// the passkeys it changed leave it here.
    func shadowStored(_ bindings: [SQLValue]) throws(VaultError) -> [ChangedPasskey] {
        let shadowed = try changed(Vault.shadowPriorSQL, bindings)
        for passkey in shadowed { connection.records.forget(passkey.credentialID, profile: profile) }
        return shadowed
    }

    /// The account's other passkeys not yet shadowed get the new one as their shadow; one shadowed already keeps its
    /// own (a newer passkey than it, itself now shadowed), so deleting the newest restores the one before it
    /// (`passkey_shadow_passes_on`, migration 10).
    static let shadowPriorSQL = """
        UPDATE passkeys SET shadowed_by = ?4 WHERE profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND credential_id != ?4 \
        AND shadowed_by IS NULL RETURNING credential_id, created_at
        """
    static let replacePriorSQL = """
        DELETE FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND credential_id != ?4 AND discoverable = 1 \
        RETURNING credential_id, created_at
        """

    /// The statement of the trigger `passkey_shadow_passes_on` (migrations 10 and 14: `?1` the deleted passkey's ID,
    /// `?2` its own shadow, `?3` its profile), for its query plan: it must find the passkeys the deleted one shadowed
    /// through `passkeys_shadowed`.
    static let shadowPassesOnSQL = "UPDATE passkeys SET shadowed_by = ?2 WHERE profile = ?3 AND shadowed_by = ?1"

    /// Stores a passkey (the caller holds the lock); with `shadowing` (a held vault only, outside a transaction), the
    /// account's older passkeys are shadowed in the same commit and returned.
    private func storePasskey(_ record: PasskeyRecord, privateKey pkcs8: [UInt8], prfSecret: [UInt8]?,
                              shadowing: Bool = false) throws(VaultError) -> [ChangedPasskey] {
        let sealed = box.seal(pkcs8, context: Vault.keyContext(record.credentialID))
        let sealedPRF: SQLValue = prfSecret.map { .blob(box.seal($0, context: Vault.prfContext(record.credentialID))) } ?? .null
        return try locked { () throws(VaultError) in
            let newID = !mayHoldCredential(record.credentialID)
            addAccount(record)
            // A held vault commits one page now and moves the row into `passkeys` with a batch (`Vault+Staging`).
            if stages { return try stagePasskey(record, sealedKey: sealed, sealedPRF: sealedPRF, shadowing: shadowing, newID: newID) }
            do throws(VaultError) {
                try db.query(Vault.insertPasskeySQL, Vault.bindings(record) + [.blob(sealed), .text(profile), sealedPRF])
            } catch {
                if error.code == .duplicate { throw Vault.duplicatePasskey(record) }
                throw error
            }
            connection.counts.added(record, profile: profile)
            return []
        }
    }

    /// Stores many passkeys at SQLite's speed (a fixture import): one hold of the connection, the insert prepared
    /// once, and a page cache large enough for the indexes' random inserts while it runs (a transaction, when the
    /// caller holds one, is the caller's). A credential ID already present is a `duplicate`.
    public func insertPasskeys(_ records: [(PasskeyRecord, [UInt8])]) throws(VaultError) {
        try insertPasskeys(records.map { ($0.0, $0.1, nil, nil) })
    }

    /// The same, each passkey with its PRF secret and large blob when it has them (a fixture's).
    public func insertPasskeys(_ records: [(PasskeyRecord, [UInt8], [UInt8]?, [UInt8]?)]) throws(VaultError) {
        try locked { () throws(VaultError) in
            try Vault.withBulkCache(db) { () throws(VaultError) in
                for (record, pkcs8, prfSecret, largeBlob) in records {
                    _ = try storePasskey(record, privateKey: pkcs8, prfSecret: prfSecret)
                    if let largeBlob { try setLargeBlob(largeBlob, for: record.credentialID) }
                }
            }
        }
    }

    /// The page cache a bulk insert uses, in KiB (SQLite's default is 2,000).
    static let bulkCacheKiB = 256 * 1024

    /// Runs a bulk insert into passkeys and their indexes (a fixture's import, a move of staged registrations) with
    /// `bulkCacheKiB` of page cache, then gives it back (the caller holds the lock). With SQLite's 2 MB the indexes'
    /// scattered inserts spill dirty pages into the WAL mid-transaction and read them back, and read the same index
    /// pages from the file again and again: moving 60,000 staged registrations made 26,000 more `pwrite`s and 28,000
    /// more `pread`s than with the bulk cache, and a move into a vault of 120,000 took 7.9 µs of CPU a row instead of
    /// 7.2 (three paired runs, the cache's pages freed and allocated again included). The cache holds only the pages
    /// the insert touches, and is emptied back to the size it had (an import's move inside the import keeps the import's).
    static func withBulkCache<T>(_ db: SQLiteDatabase, _ body: () throws(VaultError) -> T) throws(VaultError) -> T {
        try db.withCacheSize(kib: bulkCacheKiB, body)
    }

    static let insertPasskeySQL = """
        INSERT INTO passkeys (\(passkeyColumns), private_key, profile, prf_secret)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Every passkey, ordered by RP ID, user name and creation.
    public func allPasskeys() throws(VaultError) -> [PasskeyRecord] {
        try selectPasskeys(sql: Vault.allPasskeysSQL, [.text(profile)])
    }

    /// The passkeys for an RP ID, hidden ones only when asked for: every one of them, so no ceremony calls this
    /// (listings and tests do); see `offeredPasskeys`.
    public func passkeys(rpID: String, includeHidden: Bool = false) throws(VaultError) -> [PasskeyRecord] {
        try selectPasskeys("WHERE profile = ? AND rp_id = ?\(includeHidden ? "" : " AND hidden = 0") ORDER BY created_at, credential_id",
                           [.text(profile), .text(rpID)])
    }

    /// One account's passkeys for an RP ID: those with its user handle or its user name (at most `limit`), oldest
    /// first. Two indexed lookups, each in index order so `LIMIT` stops it early: with an OR, SQLite scans every
    /// passkey of the RP.
    public func passkeys(rpID: String, userHandle: [UInt8], userName: String, includeHidden: Bool = false,
                         limit: Int = Int.max) throws(VaultError) -> [PasskeyRecord] {
        let cap = SQLValue.int(Int64(min(max(limit, 0), 1_000_000)))
        let byHandle = try selectPasskeys(sql: includeHidden ? Vault.accountByHandleSQL : Vault.accountByHandleVisibleSQL,
                                          [.text(profile), .text(rpID), .blob(userHandle), cap])
        let byName = try selectPasskeys(sql: includeHidden ? Vault.accountByNameSQL : Vault.accountByNameVisibleSQL,
                                        [.text(profile), .text(rpID), .text(userName), .blob(userHandle), cap])
        return Array((byHandle + byName).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.prefix(limit))
    }

    static let allPasskeysSQL = selectPasskeysSQL + "WHERE profile = ? ORDER BY rp_id, user_name, created_at, credential_id"

    static let accountByHandleSQL = selectPasskeysSQL + "WHERE profile = ? AND rp_id = ? AND user_handle = ? ORDER BY created_at, credential_id LIMIT ?"
    static let accountByHandleVisibleSQL = selectPasskeysSQL
        + "WHERE profile = ? AND rp_id = ? AND user_handle = ? AND hidden = 0 ORDER BY created_at, credential_id LIMIT ?"
    static let accountByNameSQL = selectPasskeysSQL
        + "WHERE profile = ? AND rp_id = ? AND user_name = ? AND user_handle != ? ORDER BY created_at, credential_id LIMIT ?"
    static let accountByNameVisibleSQL = selectPasskeysSQL
        + "WHERE profile = ? AND rp_id = ? AND user_name = ? AND user_handle != ? AND hidden = 0 ORDER BY created_at, credential_id LIMIT ?"

    static let countDiscoverableSQL = "SELECT count(*) FROM (SELECT 1 FROM passkeys INDEXED BY passkeys_offered WHERE profile = ? "
        + "AND hidden = 0 AND discoverable = 1 AND shadowed_by IS NULL LIMIT ?)"

    /// How many discoverable passkeys the profile holds, counted up to `limit`: a security key's resident slots in use
    /// (its capacity bounds `limit`), read from the offer index's profile prefix.
    public func countDiscoverablePasskeys(limit: Int) throws(VaultError) -> Int {
        try locked { () throws(VaultError) in
            var total = 0
            try db.query(Vault.countDiscoverableSQL, [.text(profile), .int(Int64(limit))]) { row in total = Int(row.int(0)) }
            return total + connection.staged.countDiscoverable(profile: profile)
        }
    }

    /// How many of an account's visible passkeys for an RP ID are not among `excluding`: those with its user handle,
    /// and those with its user name under another handle. The account's count is its parts' (`AccountCounts`: the
    /// handle's, the name's, less those with both), each one indexed count, kept in memory on a held vault; the
    /// excluded IDs are looked up one by one (the RP's list is short, the account's history may not be).
    public func countAccountPasskeys(rpID: String, userHandle: [UInt8], userName: String, excluding: [[UInt8]]) throws(VaultError) -> Int {
        try locked(withoutStatements: { !self.mayHoldAccount(rpID: rpID, userHandle: userHandle, userName: userName) }) { () throws(VaultError) in
            // An account no passkey has (the filter is sure), the count is 0 without SQL: most creates.
            guard mayHoldAccount(rpID: rpID, userHandle: userHandle, userName: userName) else { return 0 }
            let handleSeen = mayHoldHandle(rpID: rpID, userHandle: userHandle)
            let byHandle = handleSeen ? try accountPart(rpID: rpID, handle: userHandle, name: nil) : 0
            let byName = try accountPart(rpID: rpID, handle: nil, name: userName)
            let both = handleSeen && byName > 0 ? try accountPart(rpID: rpID, handle: userHandle, name: userName) : 0
            var total = byHandle + byName - both
            guard total > 0, !excluding.isEmpty else { return total }
            var seen = Set<CredentialKey>()
            for id in excluding where seen.insert(CredentialKey(id)).inserted {
                guard let listed = try storedPasskey(id: id), listed.rpID == rpID, !listed.hidden,
                      listed.userHandle == userHandle || listed.userName == userName else { continue }
                total -= 1
            }
            return total
        }
    }

    /// One part of an account's count (the caller holds the lock): from `AccountCounts` on a held vault, else SQL.
    private func accountPart(rpID: String, handle: [UInt8]?, name: String?) throws(VaultError) -> Int {
        let part = AccountCounts.Part(profile: profile, rpID: rpID, handle: handle, name: name)
        if connection.accounts != nil, let known = connection.counts.count(part) { return known }
        var bindings: [SQLValue] = [.text(profile), .text(rpID)]
        let sql: String
        switch (handle, name) {
        case (let handle?, let name?): sql = Vault.countHandleAndNameSQL; bindings += [.blob(handle), .text(name)]
        case (let handle?, nil): sql = Vault.countHandleSQL; bindings += [.blob(handle)]
        case (nil, let name?): sql = Vault.countNameSQL; bindings += [.text(name)]
        case (nil, nil): return 0
        }
        // The statement sees no staged row; the mirror counts them (a mirror that lost track moves them first).
        if connection.staged.mustMove { try Vault.moveStaged(connection) }
        var total = connection.staged.count(profile: profile, rpID: rpID, handle: handle, name: name)
        try db.query(sql, bindings) { row in total += Int(row.int(0)) }
        if connection.accounts != nil { connection.counts.remember(total, for: part) }
        return total
    }

    static let countHandleSQL = "SELECT COUNT(*) FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND hidden = 0"
    static let countNameSQL = "SELECT COUNT(*) FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_name = ?3 AND hidden = 0"
    static let countHandleAndNameSQL = """
        SELECT COUNT(*) FROM passkeys WHERE profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND user_name = ?4 AND hidden = 0
        """

    /// Credential IDs as one SQL parameter: a JSON array of upper-case hex, which `hex(credential_id)` matches
    /// (`... IN (SELECT value FROM json_each(?))`). Binding one value per ID would need a statement per list length.
    static func idList(_ ids: [[UInt8]]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(2 + ids.reduce(0) { $0 + $1.count * 2 + 3 })
        out.append(UInt8(ascii: "["))
        let digits = Array("0123456789ABCDEF".utf8)
        for (i, id) in ids.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            for byte in id {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0xF)])
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: What a get offers

    /// The RP's discoverable, visible, unshadowed passkeys, most recently used (never used: newest) first, at most `limit`:
    /// what a get without an allow list may use. One walk down the `passkeys_offered` index, in its order; only
    /// the rows returned are read and decoded, however many the RP holds.
    ///
    /// - Parameter maxCredProtect: leaves out credentials of a higher credProtect level (CTAP 2.1 §12.1: without user
    ///   verification a level 2 or 3 credential is not discoverable), each checked by its key in `credential_extensions`.
    public func offeredPasskeys(rpID: String, limit: Int, maxCredProtect: Int = 3) throws(VaultError) -> [PasskeyRecord] {
        try locked { () throws(VaultError) in
            try flushUses()  // the order is the last use's: pending ones first (a no-op inside a transaction)
            if maxCredProtect < 3 {
                return try selectPasskeys(sql: Vault.offeredProtectedSQL, [.text(profile), .text(rpID), .int(Int64(maxCredProtect)),
                                                                          .int(Int64(max(0, limit)))])
            }
            return try selectPasskeys(sql: Vault.offeredSQL, [.text(profile), .text(rpID), .int(Int64(max(0, limit)))])
        }
    }

    static let offeredSQL = selectPasskeysSQL + """
        WHERE profile = ? AND rp_id = ? AND hidden = 0 AND discoverable = 1 AND shadowed_by IS NULL \
        ORDER BY coalesce(last_used_at, created_at) DESC, created_at DESC, credential_id LIMIT ?
        """

    static let offeredProtectedSQL = selectPasskeysSQL + """
        WHERE profile = ? AND rp_id = ? AND hidden = 0 AND discoverable = 1 AND shadowed_by IS NULL AND NOT EXISTS (SELECT 1 FROM credential_extensions \
        WHERE credential_extensions.credential_id = passkeys.credential_id AND credential_extensions.profile = passkeys.profile \
        AND cred_protect > ?) \
        ORDER BY coalesce(last_used_at, created_at) DESC, created_at DESC, credential_id LIMIT ?
        """

    // MARK: What signals change
    //
    // A signal never sees a shadowed passkey (Chromium's signal_api_utils.cc reads with ShadowedCredentials::kExclude):
    // every statement below is scoped by `userPasskeys`, which leaves them out.

    /// A user's oldest unshadowed passkey for an RP ID, hidden or not (a signal scoped to the first passkey acts on it).
    public func firstPasskey(rpID: String, userHandle: [UInt8]) throws(VaultError) -> PasskeyRecord? {
        try selectPasskeys(sql: Vault.firstUserPasskeySQL, [.text(profile), .text(rpID), .blob(userHandle)]).first
    }

    static let firstUserPasskeySQL = selectPasskeysSQL + "WHERE \(userPasskeys) ORDER BY created_at, credential_id LIMIT 1"

    /// Hides a user's visible passkeys for an RP ID that are not among `listed`; returns those hidden.
    public func hidePasskeys(rpID: String, userHandle: [UInt8], notIn listed: [[UInt8]], at time: Date) throws(VaultError) -> [ChangedPasskey] {
        try changed(Vault.hideUnlistedSQL, [.text(profile), .text(rpID), .blob(userHandle), .text(Vault.idList(listed)), .int(time.vaultMillis)])
    }

    /// Unhides a user's hidden passkeys for an RP ID that are among `listed`; returns those restored.
    public func restorePasskeys(rpID: String, userHandle: [UInt8], in listed: [[UInt8]]) throws(VaultError) -> [ChangedPasskey] {
        try changed(Vault.restoreListedSQL, [.text(profile), .text(rpID), .blob(userHandle), .text(Vault.idList(listed))])
    }

    /// Deletes a user's passkeys for an RP ID, hidden or not, that are not among `listed`; returns those deleted.
    public func removePasskeys(rpID: String, userHandle: [UInt8], notIn listed: [[UInt8]]) throws(VaultError) -> [ChangedPasskey] {
        try locked { () throws(VaultError) in
            let removed = try changed(Vault.deleteUnlistedSQL, [.text(profile), .text(rpID), .blob(userHandle), .text(Vault.idList(listed))])
            for passkey in removed { events.pendingUses[PasskeyKey(passkey.credentialID, profile)] = nil }
            return removed
        }
    }

    /// Renames a user's passkeys for an RP ID (hidden ones too): the name, and the display name unless it is nil;
    /// with `sparingUserEdits`, not those the user edited (`editedByUser`). Returns the passkeys that changed.
    public func renameUser(rpID: String, userHandle: [UInt8], name: String, displayName: String?,
                           sparingUserEdits: Bool = false) throws(VaultError) -> [ChangedPasskey] {
        try locked { () throws(VaultError) in addAccountName(name) }
        // The flag is a parameter (0 spares no passkey: `edited_by_user` is 0 or 1), so one statement serves both.
        let spared: SQLValue = .int(sparingUserEdits ? 1 : 2)
        if let displayName {
            return try changed(Vault.renameUserSQL, [.text(profile), .text(rpID), .blob(userHandle), .text(name), spared, .text(displayName)])
        }
        return try changed(Vault.renameUserNameOnlySQL, [.text(profile), .text(rpID), .blob(userHandle), .text(name), spared])
    }

    /// A user's passkeys for an RP ID that a signal may see: not shadowed.
    static let userPasskeys = "profile = ?1 AND rp_id = ?2 AND user_handle = ?3 AND shadowed_by IS NULL"
    static let hideUnlistedSQL = """
        UPDATE passkeys SET hidden = 1, hidden_at = ?5 WHERE \(userPasskeys) AND hidden = 0 \
        AND hex(credential_id) NOT IN (SELECT value FROM json_each(?4)) RETURNING credential_id, created_at
        """
    static let restoreListedSQL = """
        UPDATE passkeys SET hidden = 0, hidden_at = NULL WHERE \(userPasskeys) AND hidden = 1 \
        AND hex(credential_id) IN (SELECT value FROM json_each(?4)) RETURNING credential_id, created_at
        """
    static let deleteUnlistedSQL = """
        DELETE FROM passkeys WHERE \(userPasskeys) AND hex(credential_id) NOT IN (SELECT value FROM json_each(?4)) \
        RETURNING credential_id, created_at
        """
    static let renameUserSQL = """
        UPDATE passkeys SET user_name = ?4, display_name = ?6 WHERE \(userPasskeys) AND edited_by_user != ?5 \
        AND (user_name != ?4 OR display_name != ?6) RETURNING credential_id, created_at
        """
    static let renameUserNameOnlySQL = """
        UPDATE passkeys SET user_name = ?4 WHERE \(userPasskeys) AND edited_by_user != ?5 AND user_name != ?4 \
        RETURNING credential_id, created_at
        """

    /// Runs a statement returning (credential ID, creation time) per row changed, in the vault's order.
    private func changed(_ sql: String, _ bindings: [SQLValue]) throws(VaultError) -> [ChangedPasskey] {
        try locked { () throws(VaultError) in
            var out: [ChangedPasskey] = []
            try db.query(sql, bindings) { row in out.append(ChangedPasskey(credentialID: row.blob(0), createdMillis: row.int(1))) }
            return out.sorted()
        }
    }

    // MARK: What signal findings count

    /// How many of a user's visible passkeys for an RP ID were used in an assertion but are not among `listed`.
    public func countUsedPasskeys(rpID: String, userHandle: [UInt8], notIn listed: [[UInt8]]) throws(VaultError) -> Int {
        try locked { () throws(VaultError) in
            try flushUses()
            var count = 0
            try db.query(Vault.countUsedUnlistedSQL, [.text(profile), .text(rpID), .blob(userHandle), .text(Vault.idList(listed))]) { row in
                count = Int(row.int(0))
            }
            return count
        }
    }

    /// Whether any of a user's passkeys for an RP ID (hidden ones too) has a display name other than `displayName`.
    public func hasOtherDisplayName(rpID: String, userHandle: [UInt8], than displayName: String) throws(VaultError) -> Bool {
        try locked { () throws(VaultError) in
            var found = false
            try db.query(Vault.otherDisplayNameSQL, [.text(profile), .text(rpID), .blob(userHandle), .text(displayName)]) { row in found = row.bool(0) }
            return found
        }
    }

    static let countUsedUnlistedSQL = """
        SELECT COUNT(*) FROM passkeys WHERE \(userPasskeys) AND hidden = 0 AND last_used_at IS NOT NULL \
        AND hex(credential_id) NOT IN (SELECT value FROM json_each(?4))
        """
    static let otherDisplayNameSQL = "SELECT EXISTS (SELECT 1 FROM passkeys WHERE \(userPasskeys) AND display_name != ?4)"

    /// The passkey with this credential ID, unless it is shadowed (`PriorOfSameUser.shadowed`): what a ceremony or a
    /// signal may use. A listing, or a check that counts shadowed passkeys too (an exclusion), passes `includeShadowed`.
    public func passkey(id credentialID: [UInt8], includeShadowed: Bool = false) throws(VaultError) -> PasskeyRecord? {
        guard let found = try storedPasskey(id: credentialID) else { return nil }
        return includeShadowed || found.shadowedBy == nil ? found : nil
    }

    private func storedPasskey(id credentialID: [UInt8]) throws(VaultError) -> PasskeyRecord? {
        try locked { () throws(VaultError) in
            var found: PasskeyRecord
            if let staged = try stagedEntry(credentialID) {
                found = staged.record
            } else if let cached = connection.records.record(credentialID, profile: profile) {
                found = cached
            } else {
                // A credential ID no passkey has ever had, in a held vault: no SQL.
                guard mayHoldCredential(credentialID) else { return nil }
                var records: [PasskeyRecord] = []
                try db.query(Vault.byIDSQL, [.blob(credentialID), .text(profile)]) { row throws(VaultError) in
                    records.append(try Vault.passkey(from: row))
                }
                guard let stored = records.first else { return nil }
                if connection.exclusive { connection.records.remember(stored, profile: profile) }
                found = stored
            }
            if let use = events.pendingUses[PasskeyKey(credentialID, profile)] { found.lastUsedAt = Date(vaultMillis: use.at) }
            return found
        }
    }

    /// The decrypted PKCS#8 private key of a stored passkey.
    public func privateKey(for credentialID: [UInt8]) throws(VaultError) -> [UInt8] {
        let sealed: [UInt8]? = try locked { () throws(VaultError) in
            if let staged = try stagedEntry(credentialID) { return staged.sealedKey }
            var found: [UInt8]?
            try db.query(Vault.privateKeySQL, [.blob(credentialID), .text(profile)]) { row in
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
    ///
    /// With `deferred` (a counter that stays zero, so only the time changes), the time waits in memory and is
    /// written with the event log's next batch (`eventDelay`, or when anything reads passkeys in SQL by their
    /// last use: `flushUses`), as the assertion's event is: an assertion's own commit costs more than the
    /// signature's bookkeeping is worth. Reads through this handle see the time at once. A crash can lose the last
    /// few milliseconds' times, as it can their events; a counter an RP checks is never deferred.
    public func recordAssertion(credentialID: [UInt8], signCount: UInt32, at time: Date, deferred: Bool = false) throws(VaultError) {
        if deferred {
            return try locked(withoutStatements: { true }) { () throws(VaultError) in
                events.pendingUses[PasskeyKey(credentialID, profile)] = PendingUse(at: time.vaultMillis)
                scheduleEventFlush()
            }
        }
        try locked { () throws(VaultError) in
            try db.query(Vault.recordAssertionSQL,
                         [.int(Int64(signCount)), .int(time.vaultMillis), .blob(credentialID), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    /// Hides or unhides a passkey; a hidden passkey is never offered to a get.
    public func setHidden(credentialID: [UInt8], hidden: Bool, at time: Date) throws(VaultError) {
        try locked { () throws(VaultError) in
            try db.query(Vault.setHiddenSQL,
                         [.bool(hidden), hidden ? .int(time.vaultMillis) : .null, .blob(credentialID), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    /// The user's own edit of a passkey's user name and display name, in the provider's UI: marks it `editedByUser`,
    /// which a pack's signals may respect. A shadowed passkey may be edited too (the UI lists it). Returns the passkey.
    public func editUser(credentialID: [UInt8], name: String, displayName: String) throws(VaultError) -> PasskeyRecord {
        try locked { () throws(VaultError) in
            addAccountName(name)
            try db.query(Vault.editUserSQL, [.text(name), .text(displayName), .blob(credentialID), .text(profile)])
            guard db.changes == 1, let edited = try passkey(id: credentialID, includeShadowed: true) else {
                throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).")
            }
            return edited
        }
    }

    /// Renames a passkey's user entity (a current-user-details signal).
    public func updateUser(credentialID: [UInt8], name: String, displayName: String) throws(VaultError) {
        try locked { () throws(VaultError) in
            addAccountName(name)
            try db.query(Vault.updateUserSQL,
                         [.text(name), .text(displayName), .blob(credentialID), .text(profile)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    /// Removes a passkey for good; says whether there was one.
    @discardableResult
    public func removePasskey(credentialID: [UInt8]) throws(VaultError) -> Bool {
        try locked { () throws(VaultError) in
            events.pendingUses[PasskeyKey(credentialID, profile)] = nil
            try db.query(Vault.removePasskeySQL, [.blob(credentialID), .text(profile)])
            return db.changes == 1
        }
    }

    static let selectPasskeysSQL = "SELECT \(passkeyColumns) FROM passkeys "
    static let byIDSQL = selectPasskeysSQL + "WHERE credential_id = ? AND profile = ?"
    static let privateKeySQL = "SELECT private_key FROM passkeys WHERE credential_id = ? AND profile = ?"
    static let recordAssertionSQL = "UPDATE passkeys SET sign_count = ?, last_used_at = ? WHERE credential_id = ? AND profile = ?"
    static let recordUseSQL = "UPDATE passkeys SET last_used_at = ? WHERE credential_id = ? AND profile = ?"
    static let setHiddenSQL = "UPDATE passkeys SET hidden = ?, hidden_at = ? WHERE credential_id = ? AND profile = ?"
    static let updateUserSQL = "UPDATE passkeys SET user_name = ?, display_name = ? WHERE credential_id = ? AND profile = ?"
    static let editUserSQL = "UPDATE passkeys SET user_name = ?, display_name = ?, edited_by_user = 1 WHERE credential_id = ? AND profile = ?"
    static let removePasskeySQL = "DELETE FROM passkeys WHERE credential_id = ? AND profile = ?"

    private func selectPasskeys(_ clause: String, _ bindings: [SQLValue]) throws(VaultError) -> [PasskeyRecord] {
        try selectPasskeys(sql: Vault.selectPasskeysSQL + clause, bindings)
    }

    /// `sql` is a whole SELECT of `passkeyColumns`; the hot lookup by ID passes a prebuilt one. Records carry
    /// their pending last use.
    private func selectPasskeys(sql: String, _ bindings: [SQLValue]) throws(VaultError) -> [PasskeyRecord] {
        try locked { () throws(VaultError) in
            var records: [PasskeyRecord] = []
            try db.query(sql, bindings) { row throws(VaultError) in
                records.append(try Vault.passkey(from: row))
            }
            if !events.pendingUses.isEmpty {
                for i in records.indices {
                    if let use = events.pendingUses[PasskeyKey(records[i].credentialID, profile)] { records[i].lastUsedAt = Date(vaultMillis: use.at) }
                }
            }
            return records
        }
    }

    /// Writes the pending last uses (`recordAssertion(deferred:)`) now, so that SQL which orders or counts
    /// passkeys by last use sees them. Inside a transaction it does nothing (a rollback must not take them
    /// along): the engine calls it before a ceremony's transaction that reads by last use.
    public func flushUses() throws(VaultError) {
        try locked { () throws(VaultError) in
            guard !events.pendingUses.isEmpty, db.handle != nil, !db.inTransaction else { return }
            let uses = events.pendingUses
            try db.transaction { () throws(VaultError) in try Vault.writeUses(uses, connection) }
            events.pendingUses.removeAll(keepingCapacity: true)
        }
    }

    /// Writes last uses (the caller holds the lock, in a transaction), and the same into the passkey records kept
    /// (`PasskeyRecordCache`), which the statement leaves: it is one of `seesStaged`, and the staged batch moves
    /// first only when a use is of a passkey in it. A rollback empties the records.
    ///
    /// Through the hook every batch (20 ms) emptied the records, and the first batch of uses after a burst of
    /// registrations moved the burst, so an assertion loop read each passkey in SQL again and waited for the move.
    static func writeUses(_ uses: [PasskeyKey: PendingUse], _ connection: Connection) throws(VaultError) {
        guard !uses.isEmpty else { return }
        let staged = connection.staged
        if staged.mustMove || uses.keys.contains(where: { staged.entry($0.id.bytes, profile: $0.profile) != nil }) {
            connection.records.removeAll()   // as the hook does before a move (`installStaging`)
            try moveStaged(connection)
        }
        for (key, use) in uses {
            try connection.db.query(recordUseSQL, [.int(use.at), .blob(key.id.bytes), .text(key.profile)])
            connection.records.used(key, at: use.at)
        }
    }

    static func keyContext(_ credentialID: [UInt8]) -> String { "passkey:" + Base64URL.encode(credentialID) }

    static func bindings(_ r: PasskeyRecord, capacity: Int = 20) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(capacity)
        values += [.blob(r.credentialID), .text(r.rpID), .blob(r.userHandle), .text(r.userName), .text(r.displayName),
         .int(Int64(r.algorithm.rawValue)), .blob(r.publicKey.encoded), .int(Int64(r.signCount)), .text(r.settings.counter.rawValue),
         .bool(r.settings.backupEligible), .bool(r.settings.backupState), .blob(r.settings.aaguid), .bool(r.settings.discoverable),
         .text(r.settings.attestation.rawValue), .bool(r.hidden), .optionalInt(r.hiddenAt?.vaultMillis), .int(r.createdAt.vaultMillis),
         .optionalInt(r.lastUsedAt?.vaultMillis), r.shadowedBy.map(SQLValue.blob) ?? .null, .bool(r.editedByUser)]
        return values
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
            createdAt: Date(vaultMillis: row.int(16)), lastUsedAt: row.optionalInt(17).map(Date.init(vaultMillis:)),
            shadowedBy: row.optionalBlob(18), editedByUser: row.bool(19))
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
