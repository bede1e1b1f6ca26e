import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import Signing

/// The test attestation CA and its batch certificates, read back by the `openssl` tool: WebAuthn L3 §8.2.1's
/// requirements, the chain, the validity window and the refusals.
final class AttestationCertificateTests: XCTestCase {
    /// "YubiKey 5 Series with NFC" in FIDO MDS3 (Yubico's AAGUID list,
    /// https://support.yubico.com/hc/en-us/articles/360016648959).
    static let aaguid = AAGUID.parse("2fc0579f-8113-47ea-b116-bb5a8db9202a")!

    override func setUpWithError() throws {
        try XCTSkipIf(OpenSSLCommand.path == nil, "the openssl tool is not installed")
    }

    func testBatchCertificateHasThePackedAttestationSubjectVersionAndBasicConstraints() throws {
        let batch = try AttestationCA.make().issueBatch(aaguid: Self.aaguid, vendor: "Yubico AB", country: "SE")
        let (text, subject) = try OpenSSLCommand().describe(certificate: batch.certificate)
        XCTAssertEqual(subject, "subject=CN=credemu Batch 2fc0579f-8113-47ea-b116-bb5a8db9202a,OU=Authenticator Attestation,O=Yubico AB,C=SE")
        XCTAssertTrue(text.contains("Version: 3 (0x2)"), text)
        XCTAssertTrue(text.contains("Issuer: C = US, O = credemu, CN = credemu Test Attestation Root CA"), text)
        XCTAssertTrue(text.contains("X509v3 Basic Constraints: critical\n                CA:FALSE"), text)
        XCTAssertTrue(text.contains("Public Key Algorithm: id-ecPublicKey") && text.contains("NIST CURVE: P-256"), text)
        XCTAssertTrue(text.contains("Signature Algorithm: ecdsa-with-SHA256"), text)
        XCTAssertTrue(text.contains("Not Before: Jan  1 00:00:00 2024 GMT"), text)
        XCTAssertTrue(text.contains("Not After : Dec 31 23:59:59 2049 GMT"), text)
    }

    func testAAGUIDExtensionIsAnOctetStringOfTheAAGUIDAndNotCritical() throws {
        let batch = try AttestationCA.make().issueBatch(aaguid: Self.aaguid, vendor: "Yubico AB")
        let (text, _) = try OpenSSLCommand().describe(certificate: batch.certificate)
        // OpenSSL prints an extension it does not know by its OID, "critical" after it when it is, then its value.
        let lines = text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let index = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("1.3.6.1.4.1.45724.1.1.4:") }, text)
        XCTAssertEqual(lines[index], "1.3.6.1.4.1.45724.1.1.4:", "not critical")
        // The extnValue, as DER: OCTET STRING (04), 16 bytes (10), the AAGUID.
        let der = try XCTUnwrap(Self.extensionValue(batch.certificate, oid: FIDOCertificateExtensions.aaguidOID))
        XCTAssertEqual(der, [0x04, 0x10] + Self.aaguid)
        XCTAssertFalse(text.contains("45724.2.1.1"), "no transports were asked for")
    }

    func testTransportsExtensionIsTheU2FBitString() throws {
        let batch = try AttestationCA.make().issueBatch(aaguid: Self.aaguid, vendor: "Yubico AB", transports: [.usb, .nfc])
        // uSB(2) and nFC(3): 0b0011_0000 with four unused bits.
        XCTAssertEqual(Self.extensionValue(batch.certificate, oid: FIDOCertificateExtensions.transportsOID), [0x03, 0x02, 0x04, 0x30])
        XCTAssertEqual(U2FTransports(webAuthnNames: ["usb", "hybrid", "nfc"]), [.usb, .nfc])
        XCTAssertEqual(U2FTransports.bluetoothClassic.bitString, [0x03, 0x02, 0x07, 0x80])
        XCTAssertEqual(U2FTransports.usbInternal.bitString, [0x03, 0x02, 0x03, 0x08])
        XCTAssertEqual(U2FTransports().bitString, [0x03, 0x01, 0x00])
        let (text, _) = try OpenSSLCommand().describe(certificate: batch.certificate)
        XCTAssertTrue(text.contains("1.3.6.1.4.1.45724.2.1.1:"), text)
    }

    func testAllZeroAAGUIDOfAU2FKeyHasNoAAGUIDExtension() throws {
        let batch = try AttestationCA.make().issueBatch(aaguid: [UInt8](repeating: 0, count: 16), vendor: "Example")
        XCTAssertNil(Self.extensionValue(batch.certificate, oid: FIDOCertificateExtensions.aaguidOID))
    }

    func testRootIsASelfSignedCA() throws {
        let root = try AttestationCA.make()
        let openssl = OpenSSLCommand()
        let (text, subject) = try openssl.describe(certificate: root.certificate)
        XCTAssertEqual(subject, "subject=CN=credemu Test Attestation Root CA,O=credemu,C=US")
        XCTAssertTrue(text.contains("X509v3 Basic Constraints: critical\n                CA:TRUE"), text)
        XCTAssertTrue(text.contains("Certificate Sign, CRL Sign"), text)
        XCTAssertTrue(try openssl.verifies(root.certificate, root: root.certificate, at: 1_800_000_000).ok)
    }

    func testBatchChainsToItsRootThroughoutTheValidityWindowAndNotToAnotherRoot() throws {
        let root = try AttestationCA.make()
        let batch = try root.issueBatch(aaguid: Self.aaguid, vendor: "Yubico AB")
        let openssl = OpenSSLCommand()
        // A virtual clock years behind or ahead of today still verifies.
        for time: Int64 in [CertificateIssuer.notBefore, 1_750_000_000, 2_200_000_000, CertificateIssuer.notAfter - 1] {
            let result = try openssl.verifies(batch.certificate, root: root.certificate, at: time)
            XCTAssertTrue(result.ok, "at \(time): \(result.output)")
        }
        let early = try openssl.verifies(batch.certificate, root: root.certificate, at: CertificateIssuer.notBefore - 1)
        XCTAssertFalse(early.ok)
        XCTAssertTrue(early.output.contains("not yet valid"), early.output)
        XCTAssertFalse(try openssl.verifies(batch.certificate, root: root.certificate, at: CertificateIssuer.notAfter + 1).ok)
        let other = try AttestationCA.make()
        XCTAssertFalse(try openssl.verifies(batch.certificate, root: other.certificate, at: 1_750_000_000).ok)
    }

    func testSerialNumbersAreRandomAndPositive() throws {
        let serials = (0..<64).map { _ in CertificateIssuer.randomSerial() }
        XCTAssertEqual(Set(serials).count, 64)
        XCTAssertTrue(serials.allSatisfy { $0.count == 16 && $0[0] & 0x80 == 0 && $0[0] != 0 })
        let root = try AttestationCA.make()
        let a = try OpenSSLCommand().describe(certificate: try root.issueBatch(aaguid: Self.aaguid, vendor: "V").certificate).text
        let b = try OpenSSLCommand().describe(certificate: try root.issueBatch(aaguid: Self.aaguid, vendor: "V").certificate).text
        XCTAssertNotEqual(Self.serial(a), Self.serial(b))
        XCTAssertNotNil(Self.serial(a))
    }

    func testBatchSignsES256VerifiableWithItsCertificateKeyAndAfterReload() throws {
        let batch = try AttestationCA.make().issueBatch(aaguid: Self.aaguid, vendor: "Yubico AB")
        let message = Array("authData || clientDataHash".utf8)
        let openssl = OpenSSLCommand()
        XCTAssertTrue(try openssl.verifiesSignature(try batch.sign(message), over: message, byKeyOf: batch.certificate))
        XCTAssertFalse(try openssl.verifiesSignature(try batch.sign(message), over: message + [0], byKeyOf: batch.certificate))
        let reloaded = try AttestationBatch(aaguid: batch.aaguid, privateKey: batch.key.pkcs8, certificate: batch.certificate)
        XCTAssertTrue(try openssl.verifiesSignature(try reloaded.sign(message), over: message, byKeyOf: reloaded.certificate))
        XCTAssertTrue(reloaded.key is P256Key, "a stored batch key signs on the P-256 fast path")
        XCTAssertEqual(reloaded.x5c, [batch.certificate])
    }

    func testUnacceptableNamesAndAAGUIDsAreRefusedByName() throws {
        let root = try AttestationCA.make()
        let refusals: [() throws -> Void] = [
            { _ = try root.issueBatch(aaguid: Self.aaguid, vendor: "") },
            { _ = try root.issueBatch(aaguid: Self.aaguid, vendor: String(repeating: "v", count: 65)) },
            { _ = try root.issueBatch(aaguid: Self.aaguid, vendor: "Bad\u{0}Vendor") },
            { _ = try root.issueBatch(aaguid: Self.aaguid, vendor: "Bad\nVendor") },
            { _ = try root.issueBatch(aaguid: Self.aaguid, vendor: "V", country: "usa") },
            { _ = try root.issueBatch(aaguid: Self.aaguid, vendor: "V", country: "se") },
            { _ = try root.issueBatch(aaguid: Array(Self.aaguid.prefix(15)), vendor: "V") },
            { _ = try AttestationCA.make(country: "S\u{C9}") },
            { _ = try AttestationBatch(aaguid: [], privateKey: root.key.pkcs8, certificate: root.certificate) },
        ]
        for (index, refusal) in refusals.enumerated() {
            XCTAssertThrowsError(try refusal(), "refusal \(index)") { error in
                XCTAssertEqual((error as? SigningError)?.code, .certificate, "refusal \(index): \(error)")
            }
        }
        // 64 characters, some outside ASCII, are within the bound.
        let wide = String(repeating: "\u{E9}", count: 64)
        let (_, subject) = try OpenSSLCommand().describe(certificate: try root.issueBatch(aaguid: Self.aaguid, vendor: wide).certificate)
        XCTAssertTrue(subject.contains("O=" + wide), subject)
    }

    /// The cut and the bound count one unit (Unicode scalars, as OpenSSL counts): a name cut by `fitting` is always
    /// taken, and the cut keeps a letter with its marks and an emoji sequence whole.
    func testFittingCutsInTheUnitTheBoundCountsAtCharacterBoundaries() throws {
        let root = try AttestationCA.make()
        let decomposed = String(repeating: "e\u{301}", count: 70), family = String(repeating: "\u{1F469}\u{200D}\u{1F467}", count: 30)
        XCTAssertThrowsError(try root.issueBatch(aaguid: Self.aaguid, vendor: String(decomposed.prefix(33))),
                             "33 characters are 66 scalars: over the bound, though under 64 characters")
        XCTAssertEqual(CertificateName.fitting(decomposed), String(repeating: "e\u{301}", count: 32))
        XCTAssertEqual(CertificateName.fitting(family), String(repeating: "\u{1F469}\u{200D}\u{1F467}", count: 21))
        XCTAssertEqual(CertificateName.fitting("Tab\there\u{7}"), "Tabhere")
        XCTAssertEqual(CertificateName.fitting(String(repeating: "v", count: 64)), String(repeating: "v", count: 64))
        for name in [decomposed, family, String(repeating: "\u{1F44D}\u{1F3FD}", count: 70), "Tab\there"] {
            XCTAssertNoThrow(try root.issueBatch(aaguid: Self.aaguid, vendor: CertificateName.fitting(name)), name.debugDescription)
        }
    }

    func testAnIssuerKeyThatIsNotTheIssuerCertificatesIsRefused() throws {
        let root = try AttestationCA.make()
        let stranger = try SigningKeys.generate(.es256)
        let name = try CertificateName(country: "US", organization: "V", organizationalUnit: "Authenticator Attestation", commonName: "x")
        XCTAssertThrowsError(try CertificateIssuer.issue(name: name, subjectKey: stranger.publicKey, issuerKey: stranger,
                                                         issuerCertificate: root.certificate, authority: false, extensions: [])) { error in
            XCTAssertEqual((error as? SigningError)?.code, .certificate)
        }
        // Self-signed with a key that is not the subject's.
        XCTAssertThrowsError(try CertificateIssuer.issue(name: name, subjectKey: root.key.publicKey, issuerKey: stranger,
                                                         issuerCertificate: nil, authority: true, extensions: []))
        // Extensions that are not DER.
        XCTAssertThrowsError(try CertificateIssuer.issue(name: name, subjectKey: stranger.publicKey, issuerKey: root.key,
                                                         issuerCertificate: root.certificate, authority: false, extensions: [[0x30, 0x05, 0x01]]))
    }

    /// The extnValue contents of the extension with `oid`, found in the DER by its OID's bytes.
    static func extensionValue(_ certificate: [UInt8], oid: [UInt8]) -> [UInt8]? {
        let needle = [0x06, UInt8(oid.count)] + oid
        guard let start = (0...(certificate.count - needle.count)).first(where: { Array(certificate[$0..<$0 + needle.count]) == needle }) else {
            return nil
        }
        // Then the OCTET STRING extnValue (no BOOLEAN: these are not critical), short form length.
        let at = start + needle.count
        guard certificate[at] == 0x04, certificate[at + 1] < 0x80 else { return nil }
        return Array(certificate[(at + 2)..<(at + 2 + Int(certificate[at + 1]))])
    }

    /// The serial number line(s) of `openssl x509 -text`.
    static func serial(_ text: String) -> String? {
        guard let range = text.range(of: "Serial Number:") else { return nil }
        return String(text[range.upperBound...].prefix(80))
    }
}
