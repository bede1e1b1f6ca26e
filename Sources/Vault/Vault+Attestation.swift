import Foundation
import Signing
import WebAuthn

/// The vault's test attestation CA: one self-signed root for the whole vault, made on first need, and one batch
/// key and certificate per authenticator model (AAGUID) under it, so every security-key registration in a vault
/// chains to the one root an RP is told to trust.
///
/// Private keys are sealed as passkeys' are, with associated data naming the row and the SHA-256 of its
/// certificate, so a certificate changed in the file (they are stored in the clear) leaves its key unopenable
/// and the vault reports itself damaged instead of signing under a certificate it did not make.
extension Vault {
    /// The batch for `aaguid`, made with the root when the vault has none yet. The first call for a model fixes
    /// its certificate: a later call with another vendor, country or transports gets the stored batch.
    ///
    /// Creation is one transaction (`BEGIN IMMEDIATE`) that inserts with `INSERT OR IGNORE` and reads the row
    /// back, so processes racing on one vault all end up with the same root and batch.
    public func attestationBatch(aaguid: [UInt8], vendor: String, country: String = "US",
                                 transports: U2FTransports = []) throws(VaultError) -> AttestationBatch {
        guard aaguid.count == 16 else { throw VaultError(.invalidInput, "An AAGUID is 16 bytes, not \(aaguid.count).") }
        return try locked { () throws(VaultError) in
            if let batch = connection.attestationBatches[aaguid] { return batch }
            // Rows made inside a caller's transaction are only known once it commits: those are not remembered.
            let commits = !db.inTransaction
            let (root, batch) = try db.transaction { () throws(VaultError) -> (AttestationCA, AttestationBatch) in
                let root = try storedOrNewRoot()
                if let batch = try storedBatch(aaguid) { return (root, batch) }
                let made = try Vault.signing { () throws(SigningError) in
                    try root.issueBatch(aaguid: aaguid, vendor: vendor, country: country, transports: transports)
                }
                let sealed = box.seal(made.key.pkcs8, context: Vault.batchContext(aaguid, made.certificate))
                try db.query(Vault.insertAttestationBatchSQL,
                             [.blob(aaguid), .text(vendor), .blob(sealed), .blob(made.certificate), .int(Date().vaultMillis)])
                guard let batch = try storedBatch(aaguid) else { throw VaultError(.storage, "The attestation batch was not stored.") }
                return (root, batch)
            }
            if commits {
                connection.attestationRoot = root
                connection.attestationBatches[aaguid] = batch
            }
            return batch
        }
    }

    /// The vault's root certificate (DER), made when the vault has none yet: what an RP trusts for this vault's
    /// security keys.
    public func attestationRoot() throws(VaultError) -> [UInt8] {
        try locked { () throws(VaultError) in
            if let root = connection.attestationRoot { return root.certificate }
            let commits = !db.inTransaction
            let root = try db.transaction { () throws(VaultError) in try storedOrNewRoot() }
            if commits { connection.attestationRoot = root }
            return root.certificate
        }
    }

    /// The stored root, or a new one stored now; call inside a transaction.
    private func storedOrNewRoot() throws(VaultError) -> AttestationCA {
        if let root = try storedRoot() { return root }
        let made = try Vault.signing { () throws(SigningError) in try AttestationCA.make() }
        let sealed = box.seal(made.key.pkcs8, context: Vault.rootContext(made.certificate))
        try db.query(Vault.insertAttestationRootSQL, [.blob(sealed), .blob(made.certificate), .int(Date().vaultMillis)])
        guard let root = try storedRoot() else { throw VaultError(.storage, "The attestation root was not stored.") }
        return root
    }

    private func storedRoot() throws(VaultError) -> AttestationCA? {
        guard let (sealed, certificate) = try sealedRow(Vault.attestationRootSQL, []) else { return nil }
        guard let pkcs8 = box.open(sealed, context: Vault.rootContext(certificate)) else { throw Vault.damaged("root") }
        do { return try AttestationCA(privateKey: pkcs8, certificate: certificate) } catch { throw Vault.damaged("root") }
    }

    private func storedBatch(_ aaguid: [UInt8]) throws(VaultError) -> AttestationBatch? {
        guard let (sealed, certificate) = try sealedRow(Vault.attestationBatchSQL, [.blob(aaguid)]) else { return nil }
        let what = "batch for AAGUID \(AAGUID.format(aaguid))"
        guard let pkcs8 = box.open(sealed, context: Vault.batchContext(aaguid, certificate)) else { throw Vault.damaged(what) }
        do { return try AttestationBatch(aaguid: aaguid, privateKey: pkcs8, certificate: certificate) } catch { throw Vault.damaged(what) }
    }

    /// The sealed private key and the certificate `sql` selects, if there is a row.
    private func sealedRow(_ sql: String, _ bindings: [SQLValue]) throws(VaultError) -> ([UInt8], [UInt8])? {
        var found: ([UInt8], [UInt8])?
        try db.query(sql, bindings) { row in found = (row.blob(0), row.blob(1)) }
        return found
    }

    /// A certificate that cannot be made: a name out of bounds is the caller's (`invalidInput`), anything else OpenSSL's.
    private static func signing<T>(_ body: () throws(SigningError) -> T) throws(VaultError) -> T {
        do { return try body() } catch {
            throw VaultError(error.code == .certificate ? .invalidInput : .storage, "Attestation: \(error.message)")
        }
    }

    private static func damaged(_ what: String) -> VaultError {
        VaultError(.corrupt, "The attestation \(what) does not open with its certificate: the vault is damaged.")
    }

    static func rootContext(_ certificate: [UInt8]) -> String { "attestationRoot:" + Hex.encode(Digest.sha256(certificate)) }
    static func batchContext(_ aaguid: [UInt8], _ certificate: [UInt8]) -> String {
        "attestationBatch:" + Hex.encode(aaguid) + ":" + Hex.encode(Digest.sha256(certificate))
    }

    static let attestationRootSQL = "SELECT private_key, certificate FROM attestation_root WHERE id = 1"
    static let insertAttestationRootSQL = "INSERT OR IGNORE INTO attestation_root (id, private_key, certificate, created_at) VALUES (1, ?, ?, ?)"
    static let attestationBatchSQL = "SELECT private_key, certificate FROM attestation_batches WHERE aaguid = ?"
    static let insertAttestationBatchSQL = """
        INSERT OR IGNORE INTO attestation_batches (aaguid, vendor, private_key, certificate, created_at) VALUES (?, ?, ?, ?, ?)
        """
}
