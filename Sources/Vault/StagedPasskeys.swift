/// The registrations a held vault has committed into `staged_passkeys` and not yet moved into `passkeys`, in
/// memory: what a ceremony reads by credential ID or counts by account finds them here (see `Vault+Staging`).
///
/// It mirrors the table: an entry is added when its row is committed, and all are dropped when the rows move. A
/// move inside a transaction that then rolls back is made again at once (`movedInTransaction`); should that fail,
/// `mustMove` has the next read make it.
final class StagedPasskeys {
    struct Entry {
        var record: PasskeyRecord
        let profile: String
        let sealedKey: [UInt8]
    }

    /// An account of one profile on one RP: its user handle, or its user name's bytes.
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

    private var entries: [CredentialKey: Entry] = [:]
    private var byHandle: [AccountKey: [CredentialKey]] = [:]
    private var byName: [AccountKey: [CredentialKey]] = [:]
    /// Set when staged rows were moved inside a transaction, which may still roll back.
    var movedInTransaction = false
    /// Set when the table may hold rows this mirror lacks (a rollback undid a move that could not be made again).
    var mustMove = false

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    func add(_ entry: Entry) {
        let id = CredentialKey(entry.record.credentialID)
        entries[id] = entry
        byHandle[AccountKey(profile: entry.profile, rpID: entry.record.rpID, key: entry.record.userHandle), default: []].append(id)
        byName[AccountKey(profile: entry.profile, rpID: entry.record.rpID, key: Array(entry.record.userName.utf8)), default: []].append(id)
    }

    func removeAll() {
        entries.removeAll(keepingCapacity: true)
        byHandle.removeAll(keepingCapacity: true)
        byName.removeAll(keepingCapacity: true)
    }

    /// The staged passkey with this credential ID, whatever its profile.
    func entry(_ credentialID: [UInt8]) -> Entry? {
        entries.isEmpty ? nil : entries[CredentialKey(credentialID)]
    }

    /// `Vault.countAccountSQL` over the staged passkeys: the visible ones with the user handle, and those with the
    /// user name under another handle, that are not among `excluding`.
    func countAccount(profile: String, rpID: String, userHandle: [UInt8], userName: String, excluding: [[UInt8]]) -> Int {
        guard !entries.isEmpty else { return 0 }
        var total = 0
        for id in byHandle[AccountKey(profile: profile, rpID: rpID, key: userHandle)] ?? [] {
            if let e = entries[id], !e.record.hidden, !excluding.contains(id.bytes) { total += 1 }
        }
        for id in byName[AccountKey(profile: profile, rpID: rpID, key: Array(userName.utf8))] ?? [] {
            if let e = entries[id], !e.record.hidden, e.record.userHandle != userHandle, !excluding.contains(id.bytes) { total += 1 }
        }
        return total
    }

    /// `Vault.countDiscoverableSQL` over the staged passkeys of one profile.
    func countDiscoverable(profile: String) -> Int {
        entries.values.reduce(0) { $0 + ($1.profile == profile && $1.record.settings.discoverable && !$1.record.hidden ? 1 : 0) }
    }
}
