import CSodium
import Signing

/// XChaCha20-Poly1305 (IETF) under the vault key: a random 24-byte nonce, then ciphertext and tag.
///
/// The associated data binds each ciphertext to the row it belongs to, so a secret copied into another row
/// does not decrypt there.
struct SecretBox {
    let key: [UInt8]

    static let keyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    func seal(_ plaintext: [UInt8], context: String) -> [UInt8] {
        // The nonce, then the ciphertext and tag, in one buffer.
        var out = [UInt8](repeating: 0, count: SecretBox.nonceLength + plaintext.count + SecretBox.tagLength)
        out.replaceSubrange(0..<SecretBox.nonceLength, with: SecureRandom.bytes(SecretBox.nonceLength))
        var context = context
        context.withUTF8 { ad in
            out.withUnsafeMutableBufferPointer { buffer in
                let nonce = UnsafePointer(buffer.baseAddress!)
                var outLength: UInt64 = 0
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(buffer.baseAddress! + SecretBox.nonceLength, &outLength, plaintext,
                                                               UInt64(plaintext.count), ad.baseAddress, UInt64(ad.count), nil, nonce, key)
            }
        }
        return out
    }

    func open(_ box: [UInt8], context: String) -> [UInt8]? {
        guard box.count >= SecretBox.nonceLength + SecretBox.tagLength else { return nil }
        let nonce = Array(box[0..<SecretBox.nonceLength])
        let ciphertext = Array(box[SecretBox.nonceLength...])
        let ad = Array(context.utf8)
        var out = [UInt8](repeating: 0, count: ciphertext.count - SecretBox.tagLength)
        var outLength: UInt64 = 0
        let rc = crypto_aead_xchacha20poly1305_ietf_decrypt(&out, &outLength, nil, ciphertext, UInt64(ciphertext.count),
                                                            ad, UInt64(ad.count), nonce, key)
        return rc == 0 ? out : nil
    }
}
