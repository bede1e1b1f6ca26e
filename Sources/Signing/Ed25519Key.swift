import CSodium
import WebAuthn

/// An Ed25519 key for EdDSA (RFC 8032), held and used by libsodium.
final class Ed25519Key: SigningKey, @unchecked Sendable {
    // The secret key buffer is written once in init and only read afterwards.
    private let secretKey: [UInt8]
    let publicKey: COSEKey
    let pkcs8: [UInt8]
    var algorithm: COSEAlgorithm { .edDSA }

    /// RFC 8410 §7 PKCS#8 for an Ed25519 private key, before the 32-byte seed.
    static let pkcs8Prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70,
                                       0x04, 0x22, 0x04, 0x20]

    init(seed: [UInt8], pkcs8: [UInt8]? = nil) throws(SigningError) {
        guard Sodium.ready, seed.count == 32 else { throw SigningError(.invalidKey, "An Ed25519 seed is 32 bytes.") }
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var sk = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        guard crypto_sign_seed_keypair(&pk, &sk, seed) == 0 else { throw SigningError(.keyGeneration, "crypto_sign_seed_keypair failed.") }
        secretKey = sk
        publicKey = .okpEd25519(x: pk)
        self.pkcs8 = pkcs8 ?? Ed25519Key.pkcs8Prefix + seed
    }

    static func generate() throws(SigningError) -> Ed25519Key {
        try Ed25519Key(seed: SecureRandom.bytes(32))
    }

    func sign(_ message: [UInt8]) throws(SigningError) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        guard crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey) == 0 else {
            throw SigningError(.signing, "crypto_sign_detached failed.")
        }
        return signature
    }
}
