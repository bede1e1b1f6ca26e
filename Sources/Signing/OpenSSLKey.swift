import Foundation
import COpenSSL
import CSodium
import WebAuthn

/// An OpenSSL `EVP_PKEY`: RSA for RS256, and P-256 keys in a PKCS#8 layout other than the usual one (`P256Key`
/// holds the rest); Ed25519 keys read from PKCS#8 are handed to libsodium.
final class OpenSSLKey: SigningKey, @unchecked Sendable {
    // The EVP_PKEY is only read after construction; OpenSSL allows concurrent signing with one key.
    private let pkey: OpaquePointer
    let algorithm: COSEAlgorithm
    let publicKey: COSEKey
    let pkcs8: [UInt8]

    private init(pkey: OpaquePointer, algorithm: COSEAlgorithm, pkcs8: [UInt8]?) throws(SigningError) {
        self.pkey = pkey
        self.algorithm = algorithm
        switch algorithm {
        case .es256:
            publicKey = .ec2P256(x: try OpenSSLKey.bnParam(pkey, "qx", pad: 32), y: try OpenSSLKey.bnParam(pkey, "qy", pad: 32))
        case .rs256:
            publicKey = .rsa(n: try OpenSSLKey.bnParam(pkey, "n", pad: nil), e: try OpenSSLKey.bnParam(pkey, "e", pad: nil))
        case .edDSA:
            throw SigningError(.invalidKey, "Ed25519 keys are held by libsodium")
        }
        if let pkcs8 { self.pkcs8 = pkcs8 } else { self.pkcs8 = try OpenSSLKey.exportPKCS8(pkey) }
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Fetched once: implicit fetches by name on every signature cost more than the signature's hashing.
    nonisolated(unsafe) static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    static func generateRSA(bits: Int32) throws(SigningError) -> OpenSSLKey {
        try generate(name: "RSA", algorithm: .rs256) { ctx in EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits) }
    }

    private static func generate(name: String, algorithm: COSEAlgorithm,
                                 configure: (OpaquePointer?) -> Int32) throws(SigningError) -> OpenSSLKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, name, nil) else { throw failure(.keyGeneration, "EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, configure(ctx) == 1, EVP_PKEY_generate(ctx, &pkey) == 1, let pkey else {
            throw failure(.keyGeneration, "\(algorithm.name) key generation")
        }
        return try OpenSSLKey(pkey: pkey, algorithm: algorithm, pkcs8: nil)
    }

    /// Reads PKCS#8, checked by `KeyCheck`; an Ed25519 key comes back as an `Ed25519Key` holding the same bytes.
    static func importPKCS8(_ der: [UInt8]) throws(SigningError) -> any SigningKey {
        if let (scalar, point) = p256Parts(der) { return try P256Key.importParts(scalar: scalar, point: point, pkcs8: der) }
        return try importDecoding(der)
    }

    /// Any PKCS#8 through OpenSSL's decoder, then `KeyCheck`.
    static func importDecoding(_ der: [UInt8]) throws(SigningError) -> any SigningKey {
        var pkey: OpaquePointer?
        der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            if let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) {
                // Trailing bytes after the structure mean this is not a single PKCS#8 key.
                if cursor == buffer.baseAddress! + buffer.count { pkey = EVP_PKCS82PKEY(info) }
                PKCS8_PRIV_KEY_INFO_free(info)
            }
        }
        guard let pkey else {
            ERR_clear_error()
            throw SigningError(.invalidKey, "The private key is not valid DER PKCS#8.")
        }
        switch EVP_PKEY_get_base_id(pkey) {
        case EVP_PKEY_EC:
            var group = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(pkey, "group", &group, group.count, &length) == 1,
                  cString(group) == "prime256v1" else {
                EVP_PKEY_free(pkey)
                throw SigningError(.invalidKey, "The EC private key is not on P-256; ES256 needs P-256.")
            }
            // OpenSSL derives a point the ECPrivateKey leaves out, and checks neither a given one nor the scalar.
            let key = try OpenSSLKey(pkey: pkey, algorithm: .es256, pkcs8: der)
            guard case let .ec2P256(x, y) = key.publicKey else { throw SigningError(.invalidKey, "The EC key has no P-256 point.") }
            try KeyCheck.p256(scalar: try bnParam(pkey, "priv", pad: 32), point: [0x04] + x + y)
            return key
        case EVP_PKEY_RSA:
            let key = try OpenSSLKey(pkey: pkey, algorithm: .rs256, pkcs8: der)
            try KeyCheck.rsa(key)
            return key
        case EVP_PKEY_ED25519:
            var seed = [UInt8](repeating: 0, count: 32)
            var length = 32
            let ok = EVP_PKEY_get_raw_private_key(pkey, &seed, &length) == 1 && length == 32
            EVP_PKEY_free(pkey)
            guard ok else { throw SigningError(.invalidKey, "The Ed25519 private key could not be read.") }
            return try Ed25519Key(seed: seed, pkcs8: der)
        default:
            EVP_PKEY_free(pkey)
            throw SigningError(.invalidKey, "The private key's type is not P-256, RSA or Ed25519.")
        }
    }

    func sign(_ message: [UInt8]) throws(SigningError) -> [UInt8] {
        guard let md = EVP_MD_CTX_new() else { throw OpenSSLKey.failure(.signing, "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestSignInit(md, nil, OpenSSLKey.sha256, nil, pkey) == 1 else {
            throw OpenSSLKey.failure(.signing, "EVP_DigestSignInit")
        }
        var length = 0
        guard EVP_DigestSign(md, nil, &length, message, message.count) == 1 else { throw OpenSSLKey.failure(.signing, "EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(md, &signature, &length, message, message.count) == 1 else {
            throw OpenSSLKey.failure(.signing, "EVP_DigestSign")
        }
        signature.removeLast(signature.count - length)
        return signature
    }

    private static func bnParam(_ pkey: OpaquePointer, _ name: String, pad: Int32?) throws(SigningError) -> [UInt8] {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else { throw failure(.invalidKey, "reading \(name)") }
        defer { BN_free(bn) }
        let size = pad ?? (BN_num_bits(bn) + 7) / 8
        var out = [UInt8](repeating: 0, count: Int(size))
        guard BN_bn2binpad(bn, &out, size) == size else { throw failure(.invalidKey, "encoding \(name)") }
        return out
    }

    /// The scalar and the uncompressed point of a P-256 key in exactly the layout `p256PKCS8` writes, which is
    /// also OpenSSL's (no parameters inside the ECPrivateKey, the public point present); nil for any other
    /// bytes, which take OpenSSL's decoder.
    static func p256Parts(_ der: [UInt8]) -> (scalar: [UInt8], point: [UInt8])? {
        guard der.count == 138, der[73] == 0x04, der[0..<36].elementsEqual(p256Layout[0..<36]),
              der[68..<73].elementsEqual(p256Layout[68..<73]) else { return nil }
        return (Array(der[36..<68]), Array(der[73..<138]))
    }

    /// `p256PKCS8`'s bytes around the scalar (36..<68) and the point (73..<138).
    static let p256Layout = p256PKCS8Encoded(scalar: [UInt8](repeating: 0, count: 32), point: [UInt8](repeating: 0, count: 65))

    /// RFC 5208 PrivateKeyInfo around an RFC 5915 ECPrivateKey (version 1, the scalar, the public point): the
    /// scalar and the point copied into `p256Layout` (every new key's, so the DER is encoded once).
    static func p256PKCS8(scalar: [UInt8], point: [UInt8]) -> [UInt8] {
        precondition(scalar.count == 32 && point.count == 65)
        var out = p256Layout
        out.withUnsafeMutableBufferPointer { buffer in
            scalar.withUnsafeBufferPointer { (buffer.baseAddress! + 36).update(from: $0.baseAddress!, count: 32) }
            point.withUnsafeBufferPointer { (buffer.baseAddress! + 73).update(from: $0.baseAddress!, count: 65) }
        }
        return out
    }

    static func p256PKCS8Encoded(scalar: [UInt8], point: [UInt8]) -> [UInt8] {
        let ecPrivateKey = DER.sequence([0x02, 0x01, 0x01] + DER.tagged(0x04, scalar) + DER.tagged(0xA1, DER.tagged(0x03, [0x00] + point)))
        let algorithm = DER.sequence([0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07])
        return DER.sequence([0x02, 0x01, 0x00] + algorithm + DER.tagged(0x04, ecPrivateKey))
    }

    private static func exportPKCS8(_ pkey: OpaquePointer) throws(SigningError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(pkey) else { throw failure(.invalidKey, "EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw failure(.invalidKey, "i2d_PKCS8_PRIV_KEY_INFO") }
        var out = [UInt8](repeating: 0, count: Int(length))
        out.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
        }
        return out
    }

    static func failure(_ code: SigningError.Code, _ what: String) -> SigningError {
        let err = ERR_get_error()
        ERR_clear_error()
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(err, &buffer, buffer.count)
        return SigningError(code, "OpenSSL: \(what) failed (\(cString(buffer))).")
    }
}

/// A NUL-terminated C buffer as a String.
func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
