import Foundation
import Signing
import Vault

/// The signing keys of stored passkeys, parsed once: two generations of at most `limit` keys each.
///
/// When the current generation is full it becomes the previous one, and the one before it is freed off the
/// ceremony's thread (`releaseInBackground`). A key found in the previous generation moves to the current one. So a
/// working set of up to `limit` keys stays parsed however many other keys pass through; new registrations fill the
/// cache too. Clearing a full cache instead made every key of the next pass unseal and parse again: about 15 µs an
/// assertion, a third of a relayed assertion's server time, for a suite that signs in with more accounts than it
/// registers at a time (docs/benchmarks.md, "A relayed ceremony in Chromium, where the time goes").
final class SigningKeyCache: @unchecked Sendable {
    let limit: Int
    private let lock = NSLock()
    private var current: [CacheKey: any SigningKey] = [:]
    private var previous: [CacheKey: any SigningKey] = [:]

    init(limit: Int) { self.limit = limit }

    /// The key of `credentialID`, if either generation holds it.
    func key(for credentialID: [UInt8]) -> (any SigningKey)? {
        let id = CacheKey(credentialID)
        lock.lock()
        defer { lock.unlock() }
        if let key = current[id] { return key }
        guard let key = previous.removeValue(forKey: id) else { return nil }
        insert(key, id)
        return key
    }

    func remember(_ key: any SigningKey, for credentialID: [UInt8]) {
        lock.lock()
        insert(key, CacheKey(credentialID))
        lock.unlock()
    }

    func forget(_ credentialID: [UInt8]) {
        let id = CacheKey(credentialID)
        lock.lock()
        current[id] = nil
        previous[id] = nil
        lock.unlock()
    }

    /// How many keys the two generations hold (tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return current.count + previous.count
    }

    /// Adds `key` to the current generation, turning it into the previous one first when it is full (the lock held).
    private func insert(_ key: any SigningKey, _ id: CacheKey) {
        if current.count >= limit {
            var retired = [CacheKey: any SigningKey](minimumCapacity: current.capacity)
            swap(&retired, &current)
            swap(&retired, &previous)
            releaseInBackground(retired)
        }
        current[id] = key
    }
}

/// A credential ID as a dictionary key, hashed as one block of bytes (an array hashes element by element).
struct CacheKey: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
