import CredemuTestSupport
import XCTest
@testable import Signing
import WebAuthn

final class SigningKeyTests: XCTestCase {
    func testEveryAlgorithmSignsWhatItsCOSEKeyVerifies() throws {
        for algorithm in COSEAlgorithm.allCases {
            let key = try SigningKeys.generate(algorithm)
            let message = Array("authData || clientDataHash".utf8)
            let signature = try key.sign(message)
            XCTAssertEqual(key.algorithm, algorithm)
            XCTAssertEqual(key.publicKey.algorithm, algorithm)
            XCTAssertTrue(key.publicKey.verify(signature: signature, message: message), algorithm.name)
            XCTAssertFalse(key.publicKey.verify(signature: signature, message: message + [0]), algorithm.name)
        }
    }

    func testES256SignaturesAreDERAndEd25519Are64Bytes() throws {
        let ec = try SigningKeys.generate(.es256).sign([1, 2, 3])
        XCTAssertEqual(ec.first, 0x30, "ECDSA signatures are DER SEQUENCEs, as WebAuthn §6.5.6 wants")
        XCTAssertEqual(Int(ec[1]) + 2, ec.count)
        XCTAssertEqual(try SigningKeys.generate(.edDSA).sign([1, 2, 3]).count, 64)
    }

    func testPKCS8ExportImportRoundTripsByteForByte() throws {
        for algorithm in COSEAlgorithm.allCases {
            let key = try SigningKeys.generate(algorithm)
            let imported = try SigningKeys.importPKCS8(key.pkcs8, expecting: algorithm)
            XCTAssertEqual(imported.pkcs8, key.pkcs8)
            XCTAssertEqual(imported.publicKey, key.publicKey)
            XCTAssertTrue(key.publicKey.verify(signature: try imported.sign([9]), message: [9]))
        }
    }

    func testImportRefusesGarbageTrailingBytesAndTheWrongAlgorithm() throws {
        XCTAssertThrowsError(try SigningKeys.importPKCS8([0x30, 0x03, 0x02, 0x01, 0x00]))
        let key = try SigningKeys.generate(.es256)
        XCTAssertThrowsError(try SigningKeys.importPKCS8(key.pkcs8 + [0]))
        XCTAssertThrowsError(try SigningKeys.importPKCS8(key.pkcs8, expecting: .edDSA)) { error in
            XCTAssertEqual((error as? SigningError)?.code, .algorithmMismatch)
        }
    }

    func testSubjectPublicKeyInfoMatchesOpenSSLForEveryAlgorithm() throws {
        for algorithm in COSEAlgorithm.allCases {
            let key = try SigningKeys.generate(algorithm)
            // A SubjectPublicKeyInfo built from COSE must be one OpenSSL parses back to the same key:
            // verification goes through d2i_PUBKEY for EC and RSA.
            let spki = key.subjectPublicKeyInfo
            XCTAssertEqual(spki.first, 0x30)
            XCTAssertTrue(key.publicKey.verify(signature: try key.sign([7]), message: [7]))
        }
    }

    func testDigestIsSHA256() {
        XCTAssertEqual(Hex.encode(Digest.sha256(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
