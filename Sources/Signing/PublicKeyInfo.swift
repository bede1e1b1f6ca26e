import COpenSSL
import CSodium
import WebAuthn

extension COSEKey {
    /// DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) for this key: what `getPublicKey()` returns.
    public var subjectPublicKeyInfo: [UInt8] {
        switch self {
        case let .ec2P256(x, y):
            // id-ecPublicKey with prime256v1, then the uncompressed point.
            let prefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08,
                                   0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04]
            return prefix + x + y
        case let .okpEd25519(x):
            return [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + x
        case let .rsa(n, e):
            let rsaKey = DER.sequence(DER.integer(n) + DER.integer(e))
            let algorithm = DER.sequence([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00])
            return DER.sequence(algorithm + DER.tagged(0x03, [0x00] + rsaKey))
        }
    }

    /// Checks `signature` over `message`, as an RP verifies an assertion or a packed self-attestation.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        if case let .okpEd25519(x) = self {
            guard Sodium.ready, signature.count == Int(crypto_sign_BYTES) else { return false }
            return crypto_sign_verify_detached(signature, message, UInt64(message.count), x) == 0
        }
        let spki = subjectPublicKeyInfo
        let pkey: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let pkey else { ERR_clear_error(); return false }
        defer { EVP_PKEY_free(pkey) }
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestVerifyInit(md, nil, OpenSSLKey.sha256, nil, pkey) == 1 else { ERR_clear_error(); return false }
        let ok = EVP_DigestVerify(md, signature, signature.count, message, message.count) == 1
        ERR_clear_error()
        return ok
    }
}

/// The few DER encodings an RSA SubjectPublicKeyInfo needs.
enum DER {
    static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var bytes: [UInt8] = []
        var v = n
        while v > 0 { bytes.insert(UInt8(v & 0xFF), at: 0); v >>= 8 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func tagged(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }
    static func sequence(_ content: [UInt8]) -> [UInt8] { tagged(0x30, content) }

    /// A non-negative INTEGER from big-endian magnitude bytes.
    static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var m = Array(magnitude.drop(while: { $0 == 0 }))
        if m.isEmpty { m = [0] }
        if m[0] & 0x80 != 0 { m.insert(0, at: 0) }
        return tagged(0x02, m)
    }
}
