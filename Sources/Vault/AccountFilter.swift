/// The accounts a held vault may have passkeys for: a Bloom filter over every passkey's (profile, RP ID, user
/// handle) and (profile, user name), hidden ones and staged ones too, so that the account count of a create for
/// an account the vault has never held (most creates) runs no SQL.
///
/// It only ever says "no" for an account no passkey has: a false "maybe" (about 1% at the size it was built for,
/// more as the vault grows past it) costs the count's SQL, as does a vault without a filter. Built when the file
/// is held (`Vault.open(exclusive:)`, two index scans); every statement that adds a passkey or changes a name has
/// its caller add the key, and any other write to passkeys drops the filter (`SQLiteDatabase.dropsAccountFilter`).
final class AccountFilter {
    private var words: [UInt64]
    private let mask: UInt64

    /// Sized for `expected` keys at 12 bits each, at least 2^21 bits (256 KB).
    init(expected: Int) {
        var bits = 1 << 21
        while bits < 12 * expected + (1 << 21) { bits <<= 1 }
        words = [UInt64](repeating: 0, count: bits / 64)
        mask = UInt64(bits - 1)
    }

    func addHandle(profile: String, rpID: String, userHandle: [UInt8]) {
        add(userHandle.withUnsafeBytes { AccountFilter.handleHash(profile, rpID, $0) })
    }

    func addHandle(profile: String, rpID: String, userHandle: UnsafeRawBufferPointer) {
        add(AccountFilter.handleHash(profile, rpID, userHandle))
    }

    func addName(profile: String, userName: String) { add(AccountFilter.nameHash(profile, userName)) }

    /// Whether a passkey of the profile on the RP may have this user handle, or one of the profile this user name.
    func mayHold(profile: String, rpID: String, userHandle: [UInt8], userName: String) -> Bool {
        contains(userHandle.withUnsafeBytes { AccountFilter.handleHash(profile, rpID, $0) }) || contains(AccountFilter.nameHash(profile, userName))
    }

    static func handleHash(_ profile: String, _ rpID: String, _ handle: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(0 as UInt8)
        hasher.combine(profile)
        hasher.combine(rpID)
        hasher.combine(handle.count)
        hasher.combine(bytes: handle)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    static func nameHash(_ profile: String, _ name: String) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(1 as UInt8)
        hasher.combine(profile)
        hasher.combine(name)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// Three bits per key, by double hashing of the two halves of one 64-bit hash.
    private func add(_ hash: UInt64) {
        let h2 = (hash >> 32) | 1
        var h = hash
        for _ in 0..<3 {
            let bit = h & mask
            words[Int(bit >> 6)] |= 1 << (bit & 63)
            h &+= h2
        }
    }

    private func contains(_ hash: UInt64) -> Bool {
        let h2 = (hash >> 32) | 1
        var h = hash
        for _ in 0..<3 {
            let bit = h & mask
            if words[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
            h &+= h2
        }
        return true
    }
}
