import WebAuthn

/// A credential private key: it signs, and it exports its PKCS#8 and public forms.
public protocol SigningKey: Sendable {
    var algorithm: COSEAlgorithm { get }
    /// The public key as COSE_Key, for attested credential data.
    var publicKey: COSEKey { get }
    /// The private key as DER PKCS#8 (RFC 5208 / RFC 5958); imported keys give back the bytes they came from.
    var pkcs8: [UInt8] { get }
    /// Signs `message` as the algorithm requires: ECDSA DER signatures for ES256, raw for EdDSA, PKCS#1 v1.5 for RS256.
    func sign(_ message: [UInt8]) throws(SigningError) -> [UInt8]
}

extension SigningKey {
    /// DER SubjectPublicKeyInfo, as `getPublicKey()` returns it.
    public var subjectPublicKeyInfo: [UInt8] { publicKey.subjectPublicKeyInfo }
}

/// Makes and reads credential keys of the three supported algorithms.
public enum SigningKeys {
    /// A fresh key pair.
    public static func generate(_ algorithm: COSEAlgorithm) throws(SigningError) -> any SigningKey {
        switch algorithm {
        case .es256: return try P256Key.generate()
        case .rs256: return try OpenSSLKey.generateRSA(bits: 2048)
        case .edDSA: return try Ed25519Key.generate()
        }
    }

    /// Reads a DER PKCS#8 private key, checked as a library checks a key it imports (`KeyCheck`: a P-256 point is
    /// the scalar's, an RSA modulus 2048 to 4096 bits with a usable exponent): every key from outside (WebDriver's
    /// Add Credential, a fixture) comes in here or through `publicKey(pkcs8:)`. With `expecting`, a key of another
    /// algorithm is an error.
    public static func importPKCS8(_ der: [UInt8], expecting: COSEAlgorithm? = nil) throws(SigningError) -> any SigningKey {
        let key = try OpenSSLKey.importPKCS8(der)
        if let expecting, key.algorithm != expecting {
            throw SigningError(.algorithmMismatch, "The private key is \(key.algorithm.name), not \(expecting.name).")
        }
        return key
    }

    /// The public key of a DER PKCS#8 private key, checked as `importPKCS8` checks it, without keeping a key
    /// to sign with: what a fixture import needs of each record. A P-256 key in the usual layout costs the pair
    /// check (about 5 µs) instead of building an OpenSSL key (about 20 µs, most of it setting up the curve).
    public static func publicKey(pkcs8 der: [UInt8], expecting: COSEAlgorithm? = nil) throws(SigningError) -> COSEKey {
        if let (scalar, point) = OpenSSLKey.p256Parts(der) {
            if let expecting, expecting != .es256 {
                throw SigningError(.algorithmMismatch, "The private key is ES256, not \(expecting.name).")
            }
            try KeyCheck.p256(scalar: scalar, point: point)
            return .ec2P256(x: Array(point[1...32]), y: Array(point[33...64]))
        }
        return try importPKCS8(der, expecting: expecting).publicKey
    }
}
