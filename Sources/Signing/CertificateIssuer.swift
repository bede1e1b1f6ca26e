import CX509
import WebAuthn

/// Issues X.509 v3 certificates through the `CX509` C target: a random serial and one fixed validity.
enum CertificateIssuer {
    /// 2024-01-01T00:00:00Z: before any date a test is likely to set its virtual clock to.
    static let notBefore: Int64 = 1_704_067_200
    /// 2049-12-31T23:59:59Z, the last time UTCTime can write (RFC 5280 §4.1.2.5): a clock set decades ahead still verifies.
    static let notAfter: Int64 = 2_524_607_999

    /// A certificate for `subjectKey` under `name`, signed by `issuerKey`: self-signed when `issuerCertificate`
    /// is nil (then `issuerKey` is the subject's), else under that certificate's subject name.
    static func issue(name: CertificateName, subjectKey: COSEKey, issuerKey: any SigningKey, issuerCertificate: [UInt8]?,
                      authority: Bool, extensions: [[UInt8]]) throws(SigningError) -> [UInt8] {
        let spki = subjectKey.subjectPublicKeyInfo
        let issuerPKCS8 = issuerKey.pkcs8
        let issuerDER = issuerCertificate ?? []
        let serial = randomSerial()
        let extensionList = extensions.isEmpty ? [] : DER.sequence(extensions.flatMap { $0 })
        var length = 0
        let der = credemu_x509_issue(name.country, name.country.utf8.count,
                                     name.organization, name.organization.utf8.count,
                                     name.organizationalUnit, name.organizationalUnit.utf8.count,
                                     name.commonName, name.commonName.utf8.count,
                                     spki, spki.count, issuerPKCS8, issuerPKCS8.count, issuerDER, issuerDER.count,
                                     serial, serial.count, notBefore, notAfter, authority ? 1 : 0,
                                     extensionList, extensionList.count, &length)
        guard let der else { throw OpenSSLKey.failure(.certificate, "issuing the certificate \"\(name.commonName)\"") }
        defer { credemu_x509_free(der) }
        return Array(UnsafeBufferPointer(start: der, count: length))
    }

    /// 16 random bytes, positive and with no leading zero byte (RFC 5280 §4.1.2.2: at most 20 octets; the
    /// CA/Browser Forum asks for 64 bits of randomness at least).
    static func randomSerial() -> [UInt8] {
        var serial = SecureRandom.bytes(16)
        serial[0] = serial[0] & 0x7F | 0x40
        return serial
    }
}
