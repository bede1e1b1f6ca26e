/// The registrations a held vault has appended to its staging log and not yet moved into `passkeys`, in memory:
/// what a ceremony reads by credential ID, or a create shadows by account, finds them here (see `Vault+Staging`).
///
/// It mirrors the logs: an entry is added when its record is written. A move off the lock (`Vault.startMove`) takes
/// the entries so far as a generation of its own, found by lookups until its commit and dropped then; a move under
/// the lock drops them all. A move inside a transaction that then rolls back is made again at once
/// (`movedInTransaction`); should that fail, or a move off the lock fail, `mustMove` has the next read make it.
final class StagedPasskeys {
    struct Entry {
        var record: PasskeyRecord
        let profile: String
        let sealedKey: [UInt8]
    }

    /// The registrations staged since the last move began (`current`), and those a move on another thread is
    /// inserting (`moving`; see `Vault.startMove`): what a lookup finds in either, until the move's commit.
    private var current = Generation()
    private var moving: Generation?
    /// Set when staged rows were moved inside a transaction, which may still roll back.
    var movedInTransaction = false
    /// Set when the log may hold records this mirror lacks (a rollback undid a move that could not be made again).
    var mustMove = false

    var isEmpty: Bool { current.entries.isEmpty && (moving?.entries.isEmpty ?? true) }
    var count: Int { current.entries.count + (moving?.entries.count ?? 0) }
    /// The entries a move beginning now would take.
    var waiting: Int { current.entries.count }

    func add(_ entry: Entry) { current.add(entry) }

    /// Empties the mirror; its records are freed on a background queue (`releaseInBackground`), the tables keep their
    /// capacity for the next batch.
    func removeAll() {
        current.removeAll()
        if let moving { releaseInBackground(moving) }
        moving = nil
    }

    /// A move on another thread takes every entry so far; the ones staged meanwhile start a new generation.
    func beginMove() {
        precondition(moving == nil, "one move at a time")
        moving = current
        current = Generation()
    }

    /// The move's commit is visible: its entries are in `passkeys`, and leave the mirror (freed in the background).
    func endMove() {
        if let moving { releaseInBackground(moving) }
        moving = nil
    }

    /// The profile's staged passkey with this credential ID.
    func entry(_ credentialID: [UInt8], profile: String) -> Entry? {
        if isEmpty { return nil }
        let id = PasskeyKey(credentialID, profile)
        return current.entries[id] ?? moving?.entries[id]
    }

    /// `Vault.countHandleSQL`, `countNameSQL` or `countHandleAndNameSQL` over the staged passkeys: the visible ones of
    /// the profile on the RP with the user handle, the user name, or both.
    func count(profile: String, rpID: String, handle: [UInt8]?, name: String?) -> Int {
        current.count(profile: profile, rpID: rpID, handle: handle, name: name)
            + (moving?.count(profile: profile, rpID: rpID, handle: handle, name: name) ?? 0)
    }

    /// Whether one of the account's staged passkeys is as `matches` says.
    func holds(profile: String, rpID: String, userHandle: [UInt8], where matches: (PasskeyRecord) -> Bool) -> Bool {
        current.holds(profile: profile, rpID: rpID, userHandle: userHandle, where: matches)
            || (moving?.holds(profile: profile, rpID: rpID, userHandle: userHandle, where: matches) ?? false)
    }

    /// The account's staged passkeys no other passkey shadows yet (`Vault.shadowPriorSQL` over the staged ones).
    func unshadowed(profile: String, rpID: String, userHandle: [UInt8]) -> [Entry] {
        (moving?.unshadowed(profile: profile, rpID: rpID, userHandle: userHandle) ?? [])
            + current.unshadowed(profile: profile, rpID: rpID, userHandle: userHandle)
    }

    /// Records that the account's staged passkeys `unshadowed` returned are shadowed by `shadow` (their rows were
    /// updated in the commit that staged it).
    func shadow(_ shadowed: [Entry], by shadow: [UInt8]) {
        current.shadow(shadowed, by: shadow)
        moving?.shadow(shadowed, by: shadow)
    }

    /// `Vault.countDiscoverableSQL` over the staged passkeys of one profile.
    func countDiscoverable(profile: String) -> Int {
        current.countDiscoverable(profile: profile) + (moving?.countDiscoverable(profile: profile) ?? 0)
    }

    /// An account of one profile on one RP: its user handle.
    private struct AccountKey: Hashable {
        let profile: String
        let rpID: String
        let key: [UInt8]

        func hash(into hasher: inout Hasher) {
            hasher.combine(profile)
            hasher.combine(rpID)
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// One generation's entries and their account indexes.
    private final class Generation {
        var entries: [PasskeyKey: Entry] = [:]
        var byHandle: [AccountKey: [PasskeyKey]] = [:]
        var byName: [AccountKey: [PasskeyKey]] = [:]
        /// Each account's staged passkeys that no other passkey shadows (those a create shadows leave it).
        var unshadowedByAccount: [AccountKey: [PasskeyKey]] = [:]

        func add(_ entry: Entry) {
            let id = PasskeyKey(entry.record.credentialID, entry.profile)
            entries[id] = entry
            let account = AccountKey(profile: entry.profile, rpID: entry.record.rpID, key: entry.record.userHandle)
            byHandle[account, default: []].append(id)
            byName[AccountKey(profile: entry.profile, rpID: entry.record.rpID, key: Array(entry.record.userName.utf8)), default: []].append(id)
            if entry.record.shadowedBy == nil { unshadowedByAccount[account, default: []].append(id) }
        }

        func removeAll() {
            guard !entries.isEmpty || !byHandle.isEmpty || !byName.isEmpty || !unshadowedByAccount.isEmpty else { return }
            func emptied<K, V>(_ table: inout [K: V]) -> [K: V] {
                var fresh = [K: V](minimumCapacity: table.capacity)
                swap(&fresh, &table)
                return fresh
            }
            releaseInBackground((emptied(&entries), emptied(&byHandle), emptied(&byName), emptied(&unshadowedByAccount)))
        }

        func count(profile: String, rpID: String, handle: [UInt8]?, name: String?) -> Int {
            guard !entries.isEmpty else { return 0 }
            let ids: [PasskeyKey]
            if let handle {
                ids = byHandle[AccountKey(profile: profile, rpID: rpID, key: handle)] ?? []
            } else if let name {
                ids = byName[AccountKey(profile: profile, rpID: rpID, key: Array(name.utf8))] ?? []
            } else {
                return 0
            }
            return ids.reduce(0) { total, id in
                guard let e = entries[id], !e.record.hidden, name == nil || e.record.userName == name else { return total }
                return total + 1
            }
        }

        func holds(profile: String, rpID: String, userHandle: [UInt8], where matches: (PasskeyRecord) -> Bool) -> Bool {
            guard !entries.isEmpty else { return false }
            return (byHandle[AccountKey(profile: profile, rpID: rpID, key: userHandle)] ?? []).contains { entries[$0].map { matches($0.record) } ?? false }
        }

        func unshadowed(profile: String, rpID: String, userHandle: [UInt8]) -> [Entry] {
            guard !entries.isEmpty, let ids = unshadowedByAccount[AccountKey(profile: profile, rpID: rpID, key: userHandle)] else { return [] }
            return ids.compactMap { entries[$0] }
        }

        /// Marks those of `shadowed` that are in this generation.
        func shadow(_ shadowed: [Entry], by shadow: [UInt8]) {
            var accounts: [AccountKey] = []
            for entry in shadowed {
                let id = PasskeyKey(entry.record.credentialID, entry.profile)
                guard entries[id] != nil else { continue }
                entries[id]?.record.shadowedBy = shadow
                accounts.append(AccountKey(profile: entry.profile, rpID: entry.record.rpID, key: entry.record.userHandle))
            }
            for account in accounts { unshadowedByAccount[account] = nil }
        }

        func countDiscoverable(profile: String) -> Int {
            entries.values.reduce(0) {
                $0 + ($1.profile == profile && $1.record.settings.discoverable && !$1.record.hidden && $1.record.shadowedBy == nil ? 1 : 0)
            }
        }
    }
}
