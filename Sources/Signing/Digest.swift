import CP256
import CSodium

/// The hashes WebAuthn names: SHA-256 (OpenSSL's) and HMAC-SHA-256 (libsodium's).
public enum Digest {
    /// SHA-256, for rpIdHash and clientDataHash: OpenSSL's (`credemu_sha256`), which uses the CPU's SHA extensions,
    /// where libsodium's `crypto_hash_sha256` is portable C; about 0.4 µs of an assertion's 19 on this machine.
    public static func sha256<Bytes: Collection>(_ data: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: 32)
        func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
            out.withUnsafeMutableBufferPointer { credemu_sha256(bytes.baseAddress, bytes.count, $0.baseAddress) }
        }
        let done = data.withContiguousStorageIfAvailable(hash) ?? Array(data).withUnsafeBufferPointer(hash)
        precondition(done == 1, "OpenSSL's SHA-256 failed")
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
