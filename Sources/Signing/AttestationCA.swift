import WebAuthn

/// A test attestation root: a self-signed P-256 CA that issues batch certificates, for RPs to trust.
public struct AttestationCA: Sendable {
    public static let commonName = "credemu Test Attestation Root CA"
    public static let organization = "credemu"

    /// Its P-256 key; signs only certificates.
    public let key: any SigningKey
    /// The DER self-signed certificate (basicConstraints CA:TRUE, keyUsage keyCertSign and cRLSign).
    public let certificate: [UInt8]

    /// A fresh root with a new key.
    public static func make(country: String = "US") throws(SigningError) -> AttestationCA {
        let key = try SigningKeys.generate(.es256)
        let name = try CertificateName(country: country, organization: organization, commonName: commonName)
        let certificate = try CertificateIssuer.issue(name: name, subjectKey: key.publicKey, issuerKey: key, issuerCertificate: nil,
                                                      authority: true, extensions: [])
        return AttestationCA(key: key, certificate: certificate)
    }

    /// A stored root: its PKCS#8 private key (ES256) and its certificate, as `make` gave them.
    public init(privateKey pkcs8: [UInt8], certificate: [UInt8]) throws(SigningError) {
        self.init(key: try SigningKeys.importPKCS8(pkcs8, expecting: .es256), certificate: certificate)
    }

    private init(key: any SigningKey, certificate: [UInt8]) {
        self.key = key
        self.certificate = certificate
    }

    /// A new batch key and its certificate under this root, meeting WebAuthn L3 §8.2.1's packed attestation
    /// certificate requirements: version 3; subject C, O = `vendor`, OU "Authenticator Attestation", CN; basic
    /// constraints CA:FALSE; the AAGUID extension (left out for the all-zero AAGUID of a U2F key, §8.6); and
    /// the FIDO U2F transports extension when `transports` names any.
    public func issueBatch(aaguid: [UInt8], vendor: String, country: String = "US", transports: U2FTransports = []) throws(SigningError) -> AttestationBatch {
        guard aaguid.count == 16 else { throw SigningError(.certificate, "An AAGUID is 16 bytes, not \(aaguid.count).") }
        let name = try CertificateName(country: country, organization: vendor, organizationalUnit: AttestationBatch.organizationalUnit,
                                       commonName: AttestationBatch.commonName(aaguid))
        var extensions: [[UInt8]] = []
        if aaguid.contains(where: { $0 != 0 }) { extensions.append(FIDOCertificateExtensions.aaguid(aaguid)) }
        if !transports.isEmpty { extensions.append(FIDOCertificateExtensions.transports(transports)) }
        let batchKey = try SigningKeys.generate(.es256)
        let certificate = try CertificateIssuer.issue(name: name, subjectKey: batchKey.publicKey, issuerKey: key, issuerCertificate: self.certificate,
                                                      authority: false, extensions: extensions)
        return AttestationBatch(aaguid: aaguid, key: batchKey, certificate: certificate)
    }
}
