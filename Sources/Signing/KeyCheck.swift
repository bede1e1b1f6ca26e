import CP256
import WebAuthn

/// The check every PKCS#8 private key passes on its way in (`SigningKeys.importPKCS8`, `SigningKeys.publicKey(pkcs8:)`):
/// what a library checks of a key it imports, so no key is kept that cannot sign, signs what its public key does not
/// verify, or signs slowly. OpenSSL 3's decoder checks none of this.
///
/// Chrome's virtual authenticator imports through BoringSSL (`crypto::keypair::PrivateKey::FromPrivateKeyInfo`):
/// `EC_KEY_parse_private_key` runs `EC_KEY_check_key` (the point is on the curve and is scalar·G, the point derived
/// when the key leaves it out), and `RSA_parse_private_key` runs `RSA_check_key` (e odd, 2 to 33 bits; n at most
/// 16,384 bits). credemu's RSA upper bound is its own and lower: a 16,384-bit signature costs seconds of CPU, and the
/// FIDO Registry of Predefined Values names RSA keys of 2048 bits alone (ALG_KEY_RSA_2048_RAW, _DER). Ed25519
/// needs nothing here: OpenSSL 3.0 reads PKCS#8 v1 only, so the public key always comes from the seed.
enum KeyCheck {
    /// RS256 moduli credemu takes: 2048 (the usual floor, and what it generates) to 4096 bits (about 3 ms a signature).
    static let rsaModulusBits = 2048...4096
    /// Public exponents as BoringSSL bounds them (`kMaxExponentBits` = 33): at least 3 (odd and over 1).
    static let rsaExponentBits = 2...33

    /// Refuses a P-256 scalar out of 1..n-1, or a point that is off the curve or not the scalar's (one fixed-base
    /// multiplication, about 5 µs).
    static func p256(scalar: [UInt8], point: [UInt8]) throws(SigningError) {
        guard scalar.count == 32, point.count == 65 else { throw SigningError(.invalidKey, "A P-256 key is a 32-byte scalar and a 65-byte point.") }
        switch credemu_p256_check(scalar, point) {
        case CREDEMU_P256_KEY_PAIR: return
        case CREDEMU_P256_SCALAR_OUT_OF_RANGE:
            throw SigningError(.invalidKey, "The P-256 private key's scalar is not in 1 to n-1.")
        case CREDEMU_P256_POINT_NOT_ON_CURVE:
            throw SigningError(.invalidKey, "The P-256 private key is not a valid key pair (its public point is not on the curve).")
        case CREDEMU_P256_POINT_NOT_THE_SCALARS:
            throw SigningError(.invalidKey, "The P-256 private key's public point is not its scalar times G: it is another key's, so no signature would verify.")
        default:
            throw SigningError(.library, "The P-256 key check failed in OpenSSL.")
        }
    }

    /// Refuses an RSA key whose modulus is outside `rsaModulusBits` or whose exponent is even, 1 or over 33 bits, and
    /// then one whose test signature its public key does not verify (one signature, the size already bounded).
    ///
    /// Not OpenSSL's `RSA_check_key`: its primality tests cost 29 ms at 2048 bits and 210 ms at 4096 (measured here),
    /// more than a signature tells. A key whose CRT values alone are wrong still signs right, through OpenSSL's
    /// fallback to d (a few times as long: bounded by the modulus bound).
    static func rsa(_ key: any SigningKey) throws(SigningError) {
        guard case let .rsa(n, e) = key.publicKey else { return }
        let bits = bitCount(n)
        guard rsaModulusBits.contains(bits) else {
            throw SigningError(.invalidKey, "The RSA private key's modulus is \(bits) bits; credemu takes \(rsaModulusBits.lowerBound) to \(rsaModulusBits.upperBound).")
        }
        guard rsaExponentBits.contains(bitCount(e)), e.last.map({ $0 & 1 == 1 }) == true else {
            throw SigningError(.invalidKey, "The RSA public exponent must be odd, at least 3 and at most \(rsaExponentBits.upperBound) bits.")
        }
        let probe = Array("credemu key check".utf8)
        guard let signature = try? key.sign(probe), key.publicKey.verify(signature: signature, message: probe) else {
            throw SigningError(.invalidKey, "The RSA private key signs what its public key does not verify: its private half is another key's.")
        }
    }

    /// Significant bits of a big-endian magnitude.
    static func bitCount(_ magnitude: [UInt8]) -> Int {
        guard let first = magnitude.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (magnitude.count - first) * 8 - magnitude[first].leadingZeroBitCount
    }
}
