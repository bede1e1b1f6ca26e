import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest

/// Full packed (WebAuthn L3 §8.2) and fido-u2f (§8.6) attestation objects signed by a test CA's batch key, decoded
/// and verified as an RP would, the signature checked by the `openssl` tool against the batch certificate's key.
final class AttestationStatementTests: XCTestCase {
    /// "YubiKey 5 Series with NFC" in FIDO MDS3 (Yubico's AAGUID list,
    /// https://support.yubico.com/hc/en-us/articles/360016648959).
    static let aaguid = AAGUID.parse("2fc0579f-8113-47ea-b116-bb5a8db9202a")!
    static let rpIDHash = Digest.sha256(Array("example.com".utf8))
    static let clientDataHash = Digest.sha256(Array(#"{"type":"webauthn.create","challenge":"AQID","origin":"https://example.com"}"#.utf8))

    override func setUpWithError() throws {
        try XCTSkipIf(OpenSSLCommand.path == nil, "the openssl tool is not installed")
    }

    func testPackedFullAttestationVerifiesWithTheBatchCertificatesKey() throws {
        let root = try AttestationCA.make()
        let batch = try root.issueBatch(aaguid: Self.aaguid, vendor: "Yubico AB", transports: [.usb, .nfc])
        let credential = try SigningKeys.generate(.es256)
        let credentialID = SecureRandom.bytes(32)
        let authData = AuthenticatorData(rpIDHash: Self.rpIDHash, flags: [.userPresent, .userVerified], signCount: 1,
                                         attestedCredentialData: .init(aaguid: Self.aaguid, credentialID: credentialID,
                                                                       publicKey: credential.publicKey)).bytes
        let signature = try batch.sign(authData + Self.clientDataHash)
        let object = AttestationObject(authenticatorData: authData, statement: .packed(algorithm: .es256, signature: signature, x5c: batch.x5c))
        XCTAssertEqual(object.fmt, "packed")

        // The RP's side: decode, then §8.2's verification procedure for x5c.
        let decoded = try CBOR.decode(object.encoded)
        XCTAssertEqual(decoded["fmt"]?.textValue, "packed")
        XCTAssertEqual(decoded["authData"]?.bytesValue, authData)
        let statement = try XCTUnwrap(decoded["attStmt"]?.mapValue)
        XCTAssertEqual(statement.map { $0.0.textValue }, ["alg", "sig", "x5c"], "canonical key order (CTAP2 §8: shorter, then bytewise)")
        XCTAssertEqual(decoded["attStmt"]?["alg"]?.intValue, -7)
        let x5c = try XCTUnwrap(decoded["attStmt"]?["x5c"].flatMap { value -> [CBOR]? in if case let .array(a) = value { return a } else { return nil } })
        XCTAssertEqual(x5c.count, 1, "the batch certificate alone; the RP trusts the root")
        let certificate = try XCTUnwrap(x5c[0].bytesValue)
        let sig = try XCTUnwrap(decoded["attStmt"]?["sig"]?.bytesValue)
        let parsed = try AuthenticatorData(bytes: authData)
        XCTAssertEqual(parsed.attestedCredentialData?.aaguid, Self.aaguid)

        let openssl = OpenSSLCommand()
        XCTAssertTrue(try openssl.verifiesSignature(sig, over: authData + Self.clientDataHash, byKeyOf: certificate))
        XCTAssertTrue(try openssl.verifies(certificate, root: root.certificate, at: 1_800_000_000).ok)
        // The certificate's AAGUID extension matches authData's (§8.2.1), as a hex dump of the DER.
        let described = try openssl.describe(certificate: certificate).text
        XCTAssertTrue(described.contains("1.3.6.1.4.1.45724.1.1.4"), described)
        var tampered = authData
        tampered[33] ^= 1
        XCTAssertFalse(try openssl.verifiesSignature(sig, over: tampered + Self.clientDataHash, byKeyOf: certificate))
        XCTAssertFalse(try openssl.verifiesSignature(sig, over: authData + Self.clientDataHash, byKeyOf: root.certificate))
    }

    func testFidoU2FStatementVerifiesPerSection8_6() throws {
        let root = try AttestationCA.make()
        let batch = try root.issueBatch(aaguid: [UInt8](repeating: 0, count: 16), vendor: "Example", transports: [.usb])
        let credential = try SigningKeys.generate(.es256)
        let credentialID = SecureRandom.bytes(64)
        let data = try XCTUnwrap(AttestationObject.fidoU2FVerificationData(rpIDHash: Self.rpIDHash, clientDataHash: Self.clientDataHash,
                                                                             credentialID: credentialID, publicKey: credential.publicKey))
        // publicKeyU2F taken another way: the uncompressed point that ends the key's SubjectPublicKeyInfo.
        let point = Array(credential.subjectPublicKeyInfo.suffix(65))
        XCTAssertEqual(point.first, 0x04)
        XCTAssertEqual(data, [0x00] + Self.rpIDHash + Self.clientDataHash + credentialID + point)

        let authData = AuthenticatorData(rpIDHash: Self.rpIDHash, flags: [.userPresent], signCount: 0,
                                         attestedCredentialData: .init(aaguid: [UInt8](repeating: 0, count: 16), credentialID: credentialID,
                                                                       publicKey: credential.publicKey)).bytes
        let object = AttestationObject(authenticatorData: authData, statement: .fidoU2F(signature: try batch.sign(data), x5c: batch.x5c))
        XCTAssertEqual(object.fmt, "fido-u2f")
        let decoded = try CBOR.decode(object.encoded)
        XCTAssertEqual(decoded["fmt"]?.textValue, "fido-u2f")
        let statement = try XCTUnwrap(decoded["attStmt"]?.mapValue)
        XCTAssertEqual(statement.map { $0.0.textValue }, ["sig", "x5c"])
        let sig = try XCTUnwrap(decoded["attStmt"]?["sig"]?.bytesValue)
        // The RP rebuilds verificationData from authData, as §8.6 has it.
        let parsed = try AuthenticatorData(bytes: authData)
        let acd = try XCTUnwrap(parsed.attestedCredentialData)
        let rebuilt = try XCTUnwrap(AttestationObject.fidoU2FVerificationData(rpIDHash: parsed.rpIDHash, clientDataHash: Self.clientDataHash,
                                                                                credentialID: acd.credentialID, publicKey: acd.publicKey))
        let openssl = OpenSSLCommand()
        XCTAssertTrue(try openssl.verifiesSignature(sig, over: rebuilt, byKeyOf: batch.certificate))
        XCTAssertFalse(try openssl.verifiesSignature(sig, over: Array(rebuilt.dropFirst()), byKeyOf: batch.certificate))
    }

    func testFidoU2FVerificationDataNeedsAP256KeyAndAU2FSizedCredentialID() throws {
        let p256 = try SigningKeys.generate(.es256).publicKey
        let ed25519 = try SigningKeys.generate(.edDSA).publicKey
        XCTAssertNil(AttestationObject.fidoU2FVerificationData(rpIDHash: Self.rpIDHash, clientDataHash: Self.clientDataHash,
                                                               credentialID: [1], publicKey: ed25519))
        XCTAssertNil(AttestationObject.fidoU2FVerificationData(rpIDHash: Self.rpIDHash, clientDataHash: Self.clientDataHash,
                                                               credentialID: [UInt8](repeating: 1, count: 256), publicKey: p256))
        XCTAssertNil(AttestationObject.fidoU2FVerificationData(rpIDHash: [1], clientDataHash: Self.clientDataHash,
                                                               credentialID: [1], publicKey: p256))
        XCTAssertEqual(AttestationObject.fidoU2FVerificationData(rpIDHash: Self.rpIDHash, clientDataHash: Self.clientDataHash,
                                                                 credentialID: [UInt8](repeating: 1, count: 255), publicKey: p256)?.count,
                       1 + 32 + 32 + 255 + 65)
    }
}
