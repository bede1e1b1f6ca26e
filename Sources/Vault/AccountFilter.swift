/// The accounts a held vault may have passkeys for: a Bloom filter over every passkey's (profile, RP ID, user
/// handle) and (profile, user name), and its credential ID, hidden ones and staged ones too, so that the account
/// count of a create for an account the vault has never held (most creates), and the lookup of a credential ID it
/// has never held (a signal for another provider's passkey, an allow list naming a deleted one), run no SQL.
///
/// It only ever says "no" for an account no passkey has: a false "maybe" (about 0.0006% per full layer: a vault that
/// grows past the size it was built for gets layers of twice the size, one per doubling) costs the count's SQL, as
/// does a vault without a filter. That rate matters beside work off the lock (a move of staged registrations): a
/// registration the filter is not sure of runs a statement, so it waits for that work (`Vault.registersBesideMove`).
/// At 1% (12 bits and three hashes a key) one registration in each move waited out the rest of it; at 0.012% (24
/// and six) still several a run of 100,000, each up to a checkpoint's 200 ms. Built when the file
/// is held (`Vault.open(exclusive:)`, two index scans); every statement that adds a passkey or changes a name has
/// its caller add the key, and any other write to passkeys drops the filter (`SQLiteDatabase.dropsAccountFilter`).
final class AccountFilter {
    /// One Bloom filter of a fixed size; a full one is followed by one twice its size (a scalable Bloom filter), so a
    /// vault that grows past the size it was opened at keeps a false-positive rate of about 0.0006% a layer.
    private struct Layer {
        var words: [UInt64]
        let mask: UInt64
        /// Keys it takes at `bitsPerKey` each, and keys in it.
        let capacity: Int
        var count = 0

        init(bits: Int) {
            words = [UInt64](repeating: 0, count: bits / 64)
            mask = UInt64(bits - 1)
            capacity = bits / AccountFilter.bitsPerKey
        }
    }

    private var layers: [Layer]

    /// Bits a key takes, and bits set per key: a full layer has 22% of its bits set, and a false positive rate of
    /// 0.221^8, about 0.0006% (12 bits and three made it 1%). A million passkeys (three keys each) take 12 MB.
    static let bitsPerKey = 32
    static let hashes = 8

    /// Sized for `expected` keys at `bitsPerKey` each, at least 2^21 bits (256 KB).
    init(expected: Int) {
        var bits = 1 << 21
        while bits < AccountFilter.bitsPerKey * expected + (1 << 21) { bits <<= 1 }
        layers = [Layer(bits: bits)]
    }

    func addHandle(profile: String, rpID: String, userHandle: [UInt8]) {
        add(userHandle.withUnsafeBytes { AccountFilter.handleHash(profile, rpID, $0) })
    }

    func addHandle(profile: String, rpID: String, userHandle: UnsafeRawBufferPointer) {
        add(AccountFilter.handleHash(profile, rpID, userHandle))
    }

    func addName(profile: String, userName: String) { add(AccountFilter.nameHash(profile, userName)) }

    func addCredential(_ id: UnsafeRawBufferPointer) { add(AccountFilter.credentialHash(id)) }

    func addCredential(_ id: [UInt8]) { id.withUnsafeBytes { addCredential($0) } }

    /// Whether some passkey, of any profile, may have this credential ID.
    func mayHoldCredential(_ id: [UInt8]) -> Bool { contains(id.withUnsafeBytes { AccountFilter.credentialHash($0) }) }

    static func credentialHash(_ id: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(2 as UInt8)
        hasher.combine(id.count)
        hasher.combine(bytes: id)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// Whether a passkey of the profile on the RP may have this user handle.
    func mayHold(profile: String, rpID: String, userHandle: [UInt8]) -> Bool {
        contains(userHandle.withUnsafeBytes { AccountFilter.handleHash(profile, rpID, $0) })
    }

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

    /// `hashes` bits per key, by double hashing of the two halves of one 64-bit hash, in the newest layer.
    private func add(_ hash: UInt64) {
        if layers[layers.count - 1].count >= layers[layers.count - 1].capacity {
            layers.append(Layer(bits: layers[layers.count - 1].words.count * 64 * 2))
        }
        let last = layers.count - 1
        let h2 = (hash >> 32) | 1
        var h = hash
        for _ in 0..<AccountFilter.hashes {
            let bit = h & layers[last].mask
            layers[last].words[Int(bit >> 6)] |= 1 << (bit & 63)
            h &+= h2
        }
        layers[last].count += 1
    }

    private func contains(_ hash: UInt64) -> Bool {
        let h2 = (hash >> 32) | 1
        for layer in layers {
            var h = hash
            var all = true
            for _ in 0..<AccountFilter.hashes {
                let bit = h & layer.mask
                if layer.words[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { all = false; break }
                h &+= h2
            }
            if all { return true }
        }
        return false
    }
}
