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

    /// HMAC-SHA-256 (RFC 2104; libsodium `crypto_auth_hmacsha256_*`, which takes a key of any length).
    public static func hmacSHA256(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        precondition(Sodium.ready, "libsodium failed to initialise")
        var state = crypto_auth_hmacsha256_state()
        var out = [UInt8](repeating: 0, count: 32)
        // An empty key still needs a pointer; its length stays 0.
        let keyBytes = key.isEmpty ? [UInt8(0)] : key
        _ = keyBytes.withUnsafeBufferPointer { crypto_auth_hmacsha256_init(&state, $0.baseAddress!, key.count) }
        _ = data.withUnsafeBufferPointer { crypto_auth_hmacsha256_update(&state, $0.baseAddress, UInt64(data.count)) }
        _ = crypto_auth_hmacsha256_final(&state, &out)
        return out
    }
}

/// For modules that call libsodium directly: makes sure it is initialised.
public enum SodiumLibrary {
    @discardableResult
    public static func ensureInitialized() -> Bool { Sodium.ready }
}
