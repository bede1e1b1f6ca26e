import CP256
import CSodium
import WebAuthn

/// An ES256 key held by the `CP256` C target (OpenSSL's EC_KEY), which every P-256 key generated or read in
/// the usual PKCS#8 layout becomes; OpenSSL's decoder hands other layouts to `OpenSSLKey`.
final class P256Key: SigningKey, @unchecked Sendable {
    // Only read after construction; signing with one EC_KEY from several threads is safe.
    private let key: OpaquePointer
    let algorithm = COSEAlgorithm.es256
    let publicKey: COSEKey
    let pkcs8: [UInt8]

    private init(key: OpaquePointer, point: [UInt8], pkcs8: [UInt8]) {
        self.key = key
        publicKey = .ec2P256(x: Array(point[1...32]), y: Array(point[33...64]))
        self.pkcs8 = pkcs8
    }

    deinit { credemu_p256_free(key) }

    /// A fresh key pair, its PKCS#8 assembled here in OpenSSL's layout. Its scalar is drawn in the C target, which
    /// hands out one made ahead when `SignAhead` has one ready.
    static func generate() throws(SigningError) -> P256Key {
        var scalar = [UInt8](repeating: 0, count: 32), point = [UInt8](repeating: 0, count: 65)
        defer { scalar.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        guard let key = credemu_p256_new(&scalar, &point) else { throw SigningError(.keyGeneration, "ES256 key generation failed.") }
        return P256Key(key: key, point: point, pkcs8: OpenSSLKey.p256PKCS8(scalar: scalar, point: point))
    }

    /// A key pair from its parts, checked by `KeyCheck.p256` (the point on the curve and the scalar's).
    static func importParts(scalar: [UInt8], point: [UInt8], pkcs8: [UInt8]) throws(SigningError) -> P256Key {
        try KeyCheck.p256(scalar: scalar, point: point)
        guard let key = credemu_p256_import(scalar, point) else {
            throw SigningError(.invalidKey, "The P-256 private key is not a valid key pair (its public point is not on the curve).")
        }
        return P256Key(key: key, point: point, pkcs8: pkcs8)
    }

    func sign(_ message: [UInt8]) throws(SigningError) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 72)
        let length = credemu_p256_sign(key, message, message.count, &signature)
        guard length > 0 else { throw SigningError(.signing, "ES256 signing failed.") }
        signature.removeLast(72 - length)
        return signature
    }
}
