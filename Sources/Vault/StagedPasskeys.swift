/// The registrations a held vault has appended to its staging log and not yet moved into `passkeys`, in memory:
/// what a ceremony reads by credential ID, or a create shadows by account, finds them here (see `Vault+Staging`).
///
/// It mirrors the log: an entry is added when its record is written, and all are dropped when the records move. A
/// move inside a transaction that then rolls back is made again at once (`movedInTransaction`); should that fail,
/// `mustMove` has the next read make it.
final class StagedPasskeys {
    struct Entry {
        var record: PasskeyRecord
        let profile: String
        let sealedKey: [UInt8]
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

    private var entries: [PasskeyKey: Entry] = [:]
    private var byHandle: [AccountKey: [PasskeyKey]] = [:]
    private var byName: [AccountKey: [PasskeyKey]] = [:]
    /// Each account's staged passkeys that no other passkey shadows (those a create shadows leave it).
    private var unshadowedByAccount: [AccountKey: [PasskeyKey]] = [:]
    /// Set when staged rows were moved inside a transaction, which may still roll back.
    var movedInTransaction = false
    /// Set when the log may hold records this mirror lacks (a rollback undid a move that could not be made again).
    var mustMove = false

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    func add(_ entry: Entry) {
        let id = PasskeyKey(entry.record.credentialID, entry.profile)
        entries[id] = entry
        let account = AccountKey(profile: entry.profile, rpID: entry.record.rpID, key: entry.record.userHandle)
        byHandle[account, default: []].append(id)
        byName[AccountKey(profile: entry.profile, rpID: entry.record.rpID, key: Array(entry.record.userName.utf8)), default: []].append(id)
        if entry.record.shadowedBy == nil { unshadowedByAccount[account, default: []].append(id) }
    }

    /// Empties the mirror; its records are freed on a background queue (`releaseInBackground`), the tables keep their
    /// capacity for the next batch.
    func removeAll() {
        guard !entries.isEmpty || !byHandle.isEmpty || !byName.isEmpty || !unshadowedByAccount.isEmpty else { return }
        func emptied<K, V>(_ table: inout [K: V]) -> [K: V] {
            var fresh = [K: V](minimumCapacity: table.capacity)
            swap(&fresh, &table)
            return fresh
        }
        releaseInBackground((emptied(&entries), emptied(&byHandle), emptied(&byName), emptied(&unshadowedByAccount)))
    }

    /// The profile's staged passkey with this credential ID.
    func entry(_ credentialID: [UInt8], profile: String) -> Entry? {
        entries.isEmpty ? nil : entries[PasskeyKey(credentialID, profile)]
    }

    /// `Vault.countHandleSQL`, `countNameSQL` or `countHandleAndNameSQL` over the staged passkeys: the visible ones of
    /// the profile on the RP with the user handle, the user name, or both.
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

    /// Whether one of the account's staged passkeys is as `matches` says.
    func holds(profile: String, rpID: String, userHandle: [UInt8], where matches: (PasskeyRecord) -> Bool) -> Bool {
        guard !entries.isEmpty else { return false }
        return (byHandle[AccountKey(profile: profile, rpID: rpID, key: userHandle)] ?? []).contains { entries[$0].map { matches($0.record) } ?? false }
    }

    /// The account's staged passkeys no other passkey shadows yet (`Vault.shadowPriorSQL` over the staged ones).
    func unshadowed(profile: String, rpID: String, userHandle: [UInt8]) -> [Entry] {
        guard !entries.isEmpty, let ids = unshadowedByAccount[AccountKey(profile: profile, rpID: rpID, key: userHandle)] else { return [] }
        return ids.compactMap { entries[$0] }
    }

    /// Records that the account's staged passkeys `unshadowed` returned are shadowed by `shadow` (their rows were
    /// updated in the commit that staged it).
    func shadow(_ shadowed: [Entry], by shadow: [UInt8]) {
        guard let first = shadowed.first else { return }
        for entry in shadowed { entries[PasskeyKey(entry.record.credentialID, entry.profile)]?.record.shadowedBy = shadow }
        unshadowedByAccount[AccountKey(profile: first.profile, rpID: first.record.rpID, key: first.record.userHandle)] = nil
    }

    /// `Vault.countDiscoverableSQL` over the staged passkeys of one profile.
    func countDiscoverable(profile: String) -> Int {
        entries.values.reduce(0) {
            $0 + ($1.profile == profile && $1.record.settings.discoverable && !$1.record.hidden && $1.record.shadowedBy == nil ? 1 : 0)
        }
    }
}
