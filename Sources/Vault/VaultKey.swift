import CSodium
import Foundation
import Signing

/// Where the vault key comes from.
public enum VaultKeySource: Sendable {
    /// Derived from a passphrase with Argon2id (libsodium `crypto_pwhash`, interactive limits); the salt and
    /// limits are stored in the vault.
    case passphrase(String)
    /// 32 random bytes in a file, created with mode 0600 (whatever the umask) when the vault is created.
    case keyFile(path: String)
    /// A raw 32-byte key, for tests and benchmarks that want no key file.
    case raw([UInt8])

    var kind: String {
        switch self {
        case .passphrase: return "passphrase"
        case .keyFile: return "keyfile"
        case .raw: return "raw"
        }
    }
}

enum VaultKeyDerivation {
    static func argon2id(_ passphrase: String, salt: [UInt8], opsLimit: UInt64, memLimit: Int) throws(VaultError) -> [UInt8] {
        SodiumLibrary.ensureInitialized()
        var key = [UInt8](repeating: 0, count: SecretBox.keyLength)
        let rc = crypto_pwhash(&key, UInt64(key.count), passphrase, UInt64(passphrase.utf8.count), salt,
                               opsLimit, memLimit, crypto_pwhash_ALG_ARGON2ID13)
        guard rc == 0 else { throw VaultError(.storage, "Argon2id key derivation failed (out of memory?).") }
        return key
    }

    static var interactiveOps: UInt64 { UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE) }
    static var interactiveMem: Int { Int(crypto_pwhash_MEMLIMIT_INTERACTIVE) }

    /// Reads a key file, refusing one that others can read or that is the wrong size.
    static func readKeyFile(_ path: String) throws(VaultError) -> [UInt8] {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
            throw VaultError(.keyUnavailable, "The key file \(path) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 on it.")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VaultError(.keyUnavailable, "The vault's key file \(path) is missing or unreadable; without it the vault cannot be opened.")
        }
        guard data.count == SecretBox.keyLength else {
            throw VaultError(.keyUnavailable, "The key file \(path) holds \(data.count) bytes; a vault key file holds \(SecretBox.keyLength).")
        }
        return Array(data)
    }

    /// The key in a new key file at `path`, mode 0600, made whole before it appears (`VaultFiles`); when another
    /// process put one there first, that one's key. An existing key file is never overwritten.
    static func createKeyFile(_ path: String) throws(VaultError) -> [UInt8] {
        let key = SecureRandom.bytes(SecretBox.keyLength)
        let (temporary, fd) = try VaultFiles.makeTemporary(beside: path)
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, key.count) }
        close(fd)
        guard written == key.count else {
            unlink(temporary)
            throw VaultError(.storage, "Cannot write the key file \(path).")
        }
        return try VaultFiles.publish(temporary, as: path) ? key : readKeyFile(path)
    }
}
