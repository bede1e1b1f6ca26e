import CredemuTestSupport
import XCTest
@testable import Signing
import WebAuthn

/// Issue 31: keys from outside (WebDriver's Add Credential, a fixture) that a library would refuse, each written as
/// the attacker sends it; both ways in (`importPKCS8` and a fixture's `publicKey(pkcs8:)`) refuse them.
final class KeyImportTests: XCTestCase {
    /// A 4160-bit RSA key, made once: over the 4096-bit bound, and cheap enough to make in a test.
    static let oversizedRSA: [UInt8] = try! OpenSSLKey.generateRSA(bits: 4160).pkcs8
    static let rsa2048: [UInt8] = try! SigningKeys.generate(.rs256).pkcs8

    func assertRefused(_ der: [UInt8], _ fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SigningKeys.importPKCS8(der), file: file, line: line) { error in
            XCTAssertEqual((error as? SigningError)?.code, .invalidKey, "\(error)", file: file, line: line)
            XCTAssertTrue((error as? SigningError)?.message.contains(fragment) == true, "\(error)", file: file, line: line)
        }
        XCTAssertThrowsError(try SigningKeys.publicKey(pkcs8: der), file: file, line: line) { error in
            XCTAssertEqual((error as? SigningError)?.code, .invalidKey, "\(error)", file: file, line: line)
        }
    }

    // MARK: P-256

    /// The order n of P-256's base point (SEC 2 §2.4.2), big-endian: the first scalar out of range.
    static let p256Order = Hex.decode("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")!

    func testImportRefusesP256KeyWhosePointIsNotItsScalarTimesG() throws {
        let hostile = try HostileKeys.p256WithAnotherKeysPoint()
        let scalar = Array(hostile[36..<68]), point = Array(hostile[73..<138])
        // credemu's own layout (the fast path), and OpenSSL's other layout (the curve named inside the ECPrivateKey).
        assertRefused(hostile, "not its scalar")
        let decoded = Self.p256PKCS8(scalar: scalar, point: point, parametersInside: true)
        XCTAssertNil(OpenSSLKey.p256Parts(decoded), "this layout takes OpenSSL's decoder")
        assertRefused(decoded, "not its scalar")
        // A real key in either layout is still taken.
        let real = try SigningKeys.generate(.es256)
        let other = Self.p256PKCS8(scalar: Array(real.pkcs8[36..<68]), point: Array(real.pkcs8[73..<138]), parametersInside: true)
        XCTAssertEqual(try SigningKeys.importPKCS8(other).publicKey, real.publicKey)
    }

    /// RFC 5915 lets the ECPrivateKey leave out its point: it is derived from the scalar, so it is the scalar's.
    func testImportDerivesTheP256PointWhereThePKCS8LeavesItOut() throws {
        let key = try SigningKeys.generate(.es256)
        let der = Self.p256PKCS8(scalar: Array(key.pkcs8[36..<68]), point: nil, parametersInside: false)
        let imported = try SigningKeys.importPKCS8(der, expecting: .es256)
        XCTAssertEqual(imported.publicKey, key.publicKey)
        XCTAssertEqual(try SigningKeys.publicKey(pkcs8: der), key.publicKey)
        XCTAssertTrue(key.publicKey.verify(signature: try imported.sign([4]), message: [4]))
    }

    func testImportRefusesP256ScalarOutOfRangeWithAnyPoint() throws {
        let point = Array(try SigningKeys.generate(.es256).pkcs8[73..<138])
        for scalar in [[UInt8](repeating: 0, count: 32), Self.p256Order] {
            assertRefused(OpenSSLKey.p256PKCS8(scalar: scalar, point: point), "scalar")
        }
    }

    // MARK: RSA

    func testImportRefusesRSAKeyOverTheModulusBound() throws {
        assertRefused(Self.oversizedRSA, "4160 bits")
    }

    func testImportRefusesRSAKeyWithExponentZeroOneOrEven() throws {
        for e: [UInt8] in [[0], [1], [0x01, 0x00, 0x00], [0x01, 0x00, 0x02]] {
            assertRefused(try HostileKeys.rsa(Self.rsa2048, replacing: [2: e]), "exponent")
        }
        XCTAssertEqual(try SigningKeys.importPKCS8(try HostileKeys.rsa(Self.rsa2048, replacing: [2: [0x01, 0x00, 0x01]])).algorithm, .rs256,
                       "the same key with its own e = 65537 is taken")
    }

    /// Another key's private half (d, the primes and the CRT values) under this key's n and e signs what n and e do
    /// not verify.
    func testImportRefusesRSAKeyWhosePrivateHalfIsNotItsPublicHalfs() throws {
        let other = try HostileKeys.rsaFields(try SigningKeys.generate(.rs256).pkcs8)
        let der = try HostileKeys.rsa(Self.rsa2048, replacing: Dictionary(uniqueKeysWithValues: (3...8).map { ($0, other[$0]) }))
        assertRefused(der, "does not verify")
    }

    // MARK: Ed25519

    /// OpenSSL 3.0 reads PKCS#8 v1 only (RFC 5208): a v2 package (RFC 5958) that carries the public key too, right or
    /// wrong, is refused, so the public key always comes from the seed.
    func testImportRefusesEd25519PackageCarryingAPublicKey() throws {
        let key = try SigningKeys.generate(.edDSA)
        guard case let .okpEd25519(x) = key.publicKey else { return XCTFail("Ed25519") }
        let seed = Array(key.pkcs8.suffix(32))
        for publicKey in [x, [UInt8](repeating: 7, count: 32)] {
            let body: [UInt8] = [0x02, 0x01, 0x01, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70] + DER.tagged(0x04, DER.tagged(0x04, seed))
                + DER.tagged(0x81, [0x00] + publicKey)
            XCTAssertThrowsError(try SigningKeys.importPKCS8(DER.sequence(body)))
        }
        XCTAssertEqual(try SigningKeys.importPKCS8(key.pkcs8).publicKey, key.publicKey)
    }

    // MARK: Helpers

    /// P-256 PKCS#8 as other libraries write it: the curve named inside the ECPrivateKey too, or no point.
    static func p256PKCS8(scalar: [UInt8], point: [UInt8]?, parametersInside: Bool) -> [UInt8] {
        let curve: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        var ecPrivateKey: [UInt8] = [0x02, 0x01, 0x01] + DER.tagged(0x04, scalar)
        if parametersInside { ecPrivateKey += DER.tagged(0xA0, curve) }
        if let point { ecPrivateKey += DER.tagged(0xA1, DER.tagged(0x03, [0x00] + point)) }
        let algorithm = DER.sequence([0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01] + curve)
        return DER.sequence([0x02, 0x01, 0x00] + algorithm + DER.tagged(0x04, DER.sequence(ecPrivateKey)))
    }
}
