/// A held vault's counts of visible passkeys per account part, so that a create's finding review
/// (`Vault.countAccountPasskeys`, N2.6-AC04) costs no index walk however many passkeys the account has collected.
///
/// A count walks every index entry it counts: a page that registers one user name over and over (the shim's bench,
/// a test suite's fixed account) made each create's review walk all the earlier ones, 0.35 ms a create rising to
/// 1.7 ms by 7,500. An account's count is `handle + name - both` (the passkeys with its user handle, those with its
/// user name, and those with both, counted once), each part read from SQL once, then kept by the registrations this
/// connection commits (`added`). Any other write that may change a passkey's existence, visibility, user handle or
/// user name empties it (`SQLiteDatabase.beforeCountedWrite`), as does a rollback.
final class AccountCounts {
    /// One part of an account: the passkeys of a profile on an RP with the user handle, the user name, or both.
    struct Part: Hashable {
        let profile: String
        let rpID: String
        let handle: [UInt8]?
        let name: String?

        func hash(into hasher: inout Hasher) {
            hasher.combine(profile)
            hasher.combine(rpID)
            hasher.combine(name)
            if let handle { handle.withUnsafeBytes { hasher.combine(bytes: $0) } } else { hasher.combine(0 as UInt8) }
        }
    }

    private var counts: [Part: Int] = [:]
    /// The most parts kept; past it the counts start again (each is read again, once).
    static let limit = 4096

    func count(_ part: Part) -> Int? { counts.isEmpty ? nil : counts[part] }

    func remember(_ count: Int, for part: Part) {
        if counts.count >= AccountCounts.limit { counts.removeAll(keepingCapacity: true) }
        counts[part] = count
    }

    /// A visible passkey of the profile was committed: the parts it belongs to that are kept count it.
    func added(_ record: PasskeyRecord, profile: String) {
        guard !counts.isEmpty, !record.hidden else { return }
        for part in [Part(profile: profile, rpID: record.rpID, handle: record.userHandle, name: nil),
                     Part(profile: profile, rpID: record.rpID, handle: nil, name: record.userName),
                     Part(profile: profile, rpID: record.rpID, handle: record.userHandle, name: record.userName)] {
            if let count = counts[part] { counts[part] = count + 1 }
        }
    }

    func removeAll() {
        if !counts.isEmpty { counts.removeAll(keepingCapacity: true) }
    }
}
