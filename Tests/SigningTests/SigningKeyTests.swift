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

    /// P-256 PKCS#8 in the usual layout skips OpenSSL's decoder; the key it gives is the decoder's.
    func testP256FastImportGivesTheDecodersKeyAndRefusesAPointOffTheCurve() throws {
        for _ in 0..<20 {
            let key = try SigningKeys.generate(.es256)
            XCTAssertNotNil(OpenSSLKey.p256Parts(key.pkcs8), "credemu's own layout takes the fast path")
            let fast = try OpenSSLKey.importPKCS8(key.pkcs8)
            let decoded = try OpenSSLKey.importDecoding(key.pkcs8)
            XCTAssertEqual(fast.publicKey, decoded.publicKey)
            XCTAssertEqual(fast.publicKey, key.publicKey)
            XCTAssertEqual(fast.pkcs8, key.pkcs8)
            XCTAssertTrue(decoded.publicKey.verify(signature: try fast.sign([5]), message: [5]))
        }
        // One byte of the point changed: no longer on the curve, refused as the decoder refuses it.
        var bad = try SigningKeys.generate(.es256).pkcs8
        bad[bad.count - 1] ^= 0x01
        XCTAssertNotNil(OpenSSLKey.p256Parts(bad))
        XCTAssertThrowsError(try SigningKeys.importPKCS8(bad)) { XCTAssertEqual(($0 as? SigningError)?.code, .invalidKey) }
        XCTAssertThrowsError(try OpenSSLKey.importDecoding(bad))
        // Another layout (the parameters repeated inside the ECPrivateKey) is left to the decoder.
        XCTAssertNil(OpenSSLKey.p256Parts(try SigningKeys.generate(.es256).pkcs8.dropLast()))
    }

    /// The C target's import refuses a scalar of zero or at least the group order, whatever the point.
    func testP256ImportRefusesAScalarOutOfRange() throws {
        let key = try SigningKeys.generate(.es256)
        guard let (_, point) = OpenSSLKey.p256Parts(key.pkcs8) else { return XCTFail("credemu's layout") }
        let order = Hex.decode("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")!
        for scalar in [[UInt8](repeating: 0, count: 32), order, [UInt8](repeating: 0xFF, count: 32)] {
            XCTAssertThrowsError(try SigningKeys.importPKCS8(OpenSSLKey.p256PKCS8(scalar: scalar, point: point))) {
                XCTAssertEqual(($0 as? SigningError)?.code, .invalidKey)
            }
        }
    }

    /// One key signs from several threads at once (the server's key cache shares keys across requests).
    func testOneP256KeySignsFromManyThreadsAtOnce() throws {
        let key = try SigningKeys.generate(.es256)
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<200 {
                let message = [UInt8(thread), UInt8(i & 0xFF)]
                guard let signature = try? key.sign(message), key.publicKey.verify(signature: signature, message: message) else {
                    failures.add()
                    return
                }
            }
        }
        XCTAssertEqual(failures.count, 0)
    }

    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func add() { lock.lock(); value += 1; lock.unlock() }
        var count: Int { lock.lock(); defer { lock.unlock() }; return value }
    }

    /// What a fixture import checks of a key: the same as a full import, at a fraction of the cost.
    func testPublicKeyOfPKCS8ChecksWhatImportChecks() throws {
        for algorithm in COSEAlgorithm.allCases {
            let key = try SigningKeys.generate(algorithm)
            XCTAssertEqual(try SigningKeys.publicKey(pkcs8: key.pkcs8, expecting: algorithm), key.publicKey)
            let other: COSEAlgorithm = algorithm == .es256 ? .edDSA : .es256
            XCTAssertThrowsError(try SigningKeys.publicKey(pkcs8: key.pkcs8, expecting: other)) { error in
                XCTAssertEqual((error as? SigningError)?.code, .algorithmMismatch)
                XCTAssertEqual((error as? SigningError)?.message, "The private key is \(algorithm.name), not \(other.name).")
            }
        }
        var bad = try SigningKeys.generate(.es256).pkcs8
        bad[bad.count - 1] ^= 0x01
        XCTAssertThrowsError(try SigningKeys.publicKey(pkcs8: bad)) { XCTAssertEqual(($0 as? SigningError)?.code, .invalidKey) }
        // Both refuse a scalar of zero or the group order (`KeyCheck`), whichever way the bytes are read.
        let point = Array(try SigningKeys.generate(.es256).pkcs8[73..<138])
        for scalar in [[UInt8](repeating: 0, count: 32), Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!] {
            let der = OpenSSLKey.p256PKCS8(scalar: scalar, point: point)
            XCTAssertThrowsError(try SigningKeys.publicKey(pkcs8: der))
            XCTAssertThrowsError(try OpenSSLKey.importDecoding(der))
        }
    }

    func testANewP256KeysPKCS8IsTheEncodingOfItsParts() throws {
        for _ in 0..<20 {
            let scalar = SecureRandom.bytes(32), point = [0x04] + SecureRandom.bytes(64)
            XCTAssertEqual(OpenSSLKey.p256PKCS8(scalar: scalar, point: point), OpenSSLKey.p256PKCS8Encoded(scalar: scalar, point: point))
        }
        let key = try SigningKeys.generate(.es256)
        XCTAssertEqual(try OpenSSLKey.importDecoding(key.pkcs8).publicKey, key.publicKey, "OpenSSL's decoder reads it")
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

    func testDigestIsSHA256OfEmptyShortLongAndNonContiguousInput() {
        // FIPS 180-2's examples: "abc", the two-block message, a million "a"; and the empty input.
        XCTAssertEqual(Hex.encode(Digest.sha256(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(Hex.encode(Digest.sha256([UInt8]())),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(Hex.encode(Digest.sha256(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        XCTAssertEqual(Hex.encode(Digest.sha256(million)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // A slice, and a collection with no contiguous storage, hash as their bytes do.
        XCTAssertEqual(Digest.sha256(million[10..<500]), Digest.sha256(Array(million[10..<500])))
        XCTAssertEqual(Digest.sha256("abc".utf8), Digest.sha256(Array("abc".utf8)))
    }
}
