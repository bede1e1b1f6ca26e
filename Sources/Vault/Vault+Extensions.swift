import Foundation
import WebAuthn

/// What WebAuthn extensions keep per credential: the PRF secret (WebAuthn L3 §10.1.4) and the large blob
/// (§10.1.5), each sealed with associated data naming the credential, so a secret copied into another row does
/// not open there.
extension Vault {
    /// The passkey's PRF secret, or nil when it has none yet (a passkey imported without one).
    public func prfSecret(for credentialID: [UInt8]) throws(VaultError) -> [UInt8]? {
        try openSealed(Vault.prfSecretSQL, credentialID, context: Vault.prfContext(credentialID), what: "PRF secret")
    }

    /// Gives a passkey that has none its PRF secret; returns the secret it has afterwards (an earlier one wins).
    public func ensurePRFSecret(_ secret: [UInt8], for credentialID: [UInt8]) throws(VaultError) -> [UInt8] {
        let sealed = box.seal(secret, context: Vault.prfContext(credentialID))
        try locked { () throws(VaultError) in
            try db.query(Vault.setPRFSecretSQL, [.blob(sealed), .blob(credentialID), .text(profile)])
        }
        guard let stored = try prfSecret(for: credentialID) else {
            throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).")
        }
        return stored
    }

    /// The most a large blob may hold: GPM's enclave refuses writes over 8 KiB (`MAX_LARGE_BLOB_LEN` in
    /// chromium third_party/cloud_authenticator/processor/src/passkeys.rs); credemu keeps that bound for every
    /// provider, so no request grows the vault without end.
    public static let largeBlobLimit = 8 * 1024

    /// The passkey's large blob, or nil when none was written.
    public func largeBlob(for credentialID: [UInt8]) throws(VaultError) -> [UInt8]? {
        try openSealed(Vault.largeBlobSQL, credentialID, context: Vault.largeBlobContext(credentialID), what: "large blob")
    }

    /// The one sealed value `sql` selects for a passkey of the profile, opened; nil when there is none.
    private func openSealed(_ sql: String, _ credentialID: [UInt8], context: String, what: String) throws(VaultError) -> [UInt8]? {
        let sealed: [UInt8]? = try locked { () throws(VaultError) in
            var found: [UInt8]?
            try db.query(sql, [.blob(credentialID), .text(profile)]) { row in found = row.optionalBlob(0) }
            return found
        }
        guard let sealed else { return nil }
        guard let plain = box.open(sealed, context: context) else {
            throw VaultError(.corrupt, "The \(what) of passkey \(Base64URL.encode(credentialID)) does not decrypt: the vault is damaged.")
        }
        return plain
    }

    /// Stores (or replaces) a passkey's large blob; the passkey must be the profile's.
    public func setLargeBlob(_ blob: [UInt8], for credentialID: [UInt8]) throws(VaultError) {
        guard blob.count <= Vault.largeBlobLimit else { throw VaultError(.invalidInput, "A large blob holds at most \(Vault.largeBlobLimit) bytes.") }
        let sealed = box.seal(blob, context: Vault.largeBlobContext(credentialID))
        try locked { () throws(VaultError) in
            try db.query(Vault.setLargeBlobSQL, [.blob(credentialID), .text(profile), .blob(sealed)])
            guard db.changes == 1 else { throw VaultError(.notFound, "No passkey with credential ID \(Base64URL.encode(credentialID)).") }
        }
    }

    // MARK: CTAP 2.1 credential state (migration 8)

    /// The most a credBlob holds: CTAP 2.1 §12.2's least `maxCredBlobLength`, 32 bytes, which credemu's keys report.
    public static let credBlobLimit = 32

    /// Records a new credential's credProtect level (1 to 3) and credBlob, either optional; the credential need not
    /// be in `passkeys` yet (a held vault stages it).
    public func setCredentialExtensions(_ credentialID: [UInt8], credProtect: Int?, credBlob: [UInt8]?) throws(VaultError) {
        guard credProtect != nil || credBlob != nil else { return }
        if let level = credProtect, !(1...3).contains(level) { throw VaultError(.invalidInput, "A credProtect level is 1, 2 or 3.") }
        if let credBlob, credBlob.count > Vault.credBlobLimit { throw VaultError(.invalidInput, "A credBlob holds at most \(Vault.credBlobLimit) bytes.") }
        let sealed: SQLValue = credBlob.map { .blob(box.seal($0, context: Vault.credBlobContext(credentialID))) } ?? .null
        try locked { () throws(VaultError) in
            try db.query(Vault.setCredentialExtensionsSQL, [.blob(credentialID), .text(profile), credProtect.map { .int(Int64($0)) } ?? .null, sealed])
        }
    }

    /// A credential's credProtect level (1 when none was set) and its credBlob (nil when none was stored).
    public func credentialExtensions(_ credentialID: [UInt8]) throws(VaultError) -> (credProtect: Int, credBlob: [UInt8]?) {
        let row: (Int, [UInt8]?)? = try locked { () throws(VaultError) in
            var found: (Int, [UInt8]?)?
            try db.query(Vault.credentialExtensionsSQL, [.blob(credentialID), .text(profile)]) { row in
                found = (Int(row.optionalInt(0) ?? 1), row.optionalBlob(1))
            }
            return found
        }
        guard let (level, sealed) = row else { return (1, nil) }
        guard let sealed else { return (level, nil) }
        guard let blob = box.open(sealed, context: Vault.credBlobContext(credentialID)) else {
            throw VaultError(.corrupt, "The credBlob of passkey \(Base64URL.encode(credentialID)) does not decrypt: the vault is damaged.")
        }
        return (level, blob)
    }

    static let setCredentialExtensionsSQL = """
        INSERT INTO credential_extensions (credential_id, profile, cred_protect, cred_blob) VALUES (?1, ?2, ?3, ?4)         ON CONFLICT (credential_id, profile) DO UPDATE SET cred_protect = excluded.cred_protect, cred_blob = excluded.cred_blob
        """
    static let credentialExtensionsSQL = "SELECT cred_protect, cred_blob FROM credential_extensions WHERE credential_id = ? AND profile = ?"
    static func credBlobContext(_ credentialID: [UInt8]) -> String { "credBlob:" + Base64URL.encode(credentialID) }

    static let prfSecretSQL = "SELECT prf_secret FROM passkeys WHERE credential_id = ? AND profile = ?"
    static let setPRFSecretSQL = "UPDATE passkeys SET prf_secret = ? WHERE credential_id = ? AND profile = ? AND prf_secret IS NULL"
    static let largeBlobSQL = "SELECT blob FROM large_blobs WHERE credential_id = ? AND profile = ?"
    /// Only for a passkey of the profile: the SELECT finds it by its key.
    static let setLargeBlobSQL = """
        INSERT INTO large_blobs (credential_id, profile, blob) SELECT credential_id, profile, ?3 FROM passkeys \
        WHERE credential_id = ?1 AND profile = ?2 ON CONFLICT (credential_id, profile) DO UPDATE SET blob = excluded.blob
        """

    static func prfContext(_ credentialID: [UInt8]) -> String { "prf:" + Base64URL.encode(credentialID) }
    static func largeBlobContext(_ credentialID: [UInt8]) -> String { "largeBlob:" + Base64URL.encode(credentialID) }
}
