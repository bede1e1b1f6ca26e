import WebAuthn

/// A batch attestation key and its certificate under an `AttestationCA`: what signs a security key's packed or
/// fido-u2f attestation statements, for one authenticator model (AAGUID).
public struct AttestationBatch: Sendable {
    /// WebAuthn L3 §8.2.1: Subject-OU is this literal string.
    public static let organizationalUnit = "Authenticator Attestation"

    /// The CN: names the model, since one root serves every model of a vault.
    static func commonName(_ aaguid: [UInt8]) -> String { "credemu Batch " + AAGUID.format(aaguid) }

    public let aaguid: [UInt8]
    /// Its P-256 key (ES256, through `P256Key`'s fast path when it came from `issueBatch` or the usual PKCS#8 layout).
    public let key: any SigningKey
    /// The DER certificate, signed by the root.
    public let certificate: [UInt8]

    init(aaguid: [UInt8], key: any SigningKey, certificate: [UInt8]) {
        self.aaguid = aaguid
        self.key = key
        self.certificate = certificate
    }

    /// A stored batch: its PKCS#8 private key (ES256) and its certificate, as `issueBatch` gave them.
    public init(aaguid: [UInt8], privateKey pkcs8: [UInt8], certificate: [UInt8]) throws(SigningError) {
        guard aaguid.count == 16 else { throw SigningError(.certificate, "An AAGUID is 16 bytes, not \(aaguid.count).") }
        self.init(aaguid: aaguid, key: try SigningKeys.importPKCS8(pkcs8, expecting: .es256), certificate: certificate)
    }

    /// The statement's `x5c`: the batch certificate alone; RPs trust the root (WebAuthn L3 §8.2), which
    /// `Vault.attestationRoot()` gives them.
    public var x5c: [[UInt8]] { [certificate] }

    /// ES256 over `message`: the signature of a packed (authData || clientDataHash) or fido-u2f statement.
    public func sign(_ message: [UInt8]) throws(SigningError) -> [UInt8] { try key.sign(message) }
}
