import CSodium

/// libsodium needs `sodium_init()` once before use; every entry point here goes through `ready`.
enum Sodium {
    static let ready: Bool = sodium_init() >= 0
}

/// SHA-256 (libsodium `crypto_hash_sha256`), for rpIdHash and clientDataHash.
public enum Digest {
    public static func sha256<Bytes: Collection>(_ data: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        precondition(Sodium.ready, "libsodium failed to initialise")
        var out = [UInt8](repeating: 0, count: 32)
        let input = Array(data)
        _ = input.withUnsafeBufferPointer { crypto_hash_sha256(&out, $0.baseAddress, UInt64(input.count)) }
        return out
    }
}

/// For modules that call libsodium directly: makes sure it is initialised.
public enum SodiumLibrary {
    @discardableResult
    public static func ensureInitialized() -> Bool { Sodium.ready }
}
