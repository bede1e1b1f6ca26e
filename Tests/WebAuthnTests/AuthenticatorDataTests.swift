import XCTest
@testable import WebAuthn

final class AuthenticatorDataTests: XCTestCase {
    let rpIDHash = [UInt8](repeating: 0xAB, count: 32)
    let key = COSEKey.okpEd25519(x: [UInt8](repeating: 0x11, count: 32))

    func testLayoutOfAssertionAuthenticatorData() {
        let data = AuthenticatorData(rpIDHash: rpIDHash, flags: [.userPresent, .userVerified, .backupEligible, .backedUp], signCount: 0x01020304)
        XCTAssertEqual(data.bytes.count, 37)
        XCTAssertEqual(Array(data.bytes[0..<32]), rpIDHash)
        XCTAssertEqual(data.bytes[32], 0x1D)
        XCTAssertEqual(Array(data.bytes[33..<37]), [1, 2, 3, 4])
    }

    func testLayoutOfAttestedCredentialData() {
        let aaguid = (0..<16).map { UInt8($0) }
        let credentialID = [UInt8](repeating: 0xCC, count: 16)
        let data = AuthenticatorData(rpIDHash: rpIDHash, flags: [.backupEligible], signCount: 0,
                                     attestedCredentialData: .init(aaguid: aaguid, credentialID: credentialID, publicKey: key))
        let bytes = data.bytes
        XCTAssertEqual(bytes[32], 0x48, "BE and AT, no UP: the flags of a conditional create")
        XCTAssertEqual(Array(bytes[37..<53]), aaguid)
        XCTAssertEqual(Array(bytes[53..<55]), [0x00, 0x10])
        XCTAssertEqual(Array(bytes[55..<71]), credentialID)
        XCTAssertEqual(Array(bytes[71...]), key.encoded)
        XCTAssertEqual(try AuthenticatorData(bytes: bytes), data)
    }

    func testParsingRefusesTrailingBytesAndTruncation() {
        let bytes = AuthenticatorData(rpIDHash: rpIDHash, flags: [.userPresent], signCount: 1).bytes
        XCTAssertThrowsError(try AuthenticatorData(bytes: bytes + [0]))
        XCTAssertThrowsError(try AuthenticatorData(bytes: Array(bytes.dropLast())))
        var withAT = bytes
        withAT[32] |= 0x40
        XCTAssertThrowsError(try AuthenticatorData(bytes: withAT))
    }

    func testExtensionsSetTheEDFlagAndRoundTrip() throws {
        let ext = CBOR.map([(.text("credProtect"), .unsigned(2))])
        let data = AuthenticatorData(rpIDHash: rpIDHash, flags: [.userPresent], signCount: 0, extensions: ext)
        XCTAssertTrue(data.flags.contains(.extensionData))
        XCTAssertEqual(try AuthenticatorData(bytes: data.bytes).extensions, ext)
    }
}

final class COSEKeyTests: XCTestCase {
    func testEC2P256Encoding() {
        let x = [UInt8](repeating: 1, count: 32), y = [UInt8](repeating: 2, count: 32)
        let encoded = COSEKey.ec2P256(x: x, y: y).encoded
        XCTAssertEqual(hexString(Array(encoded[0..<10])), "a5010203262001215820")
        XCTAssertEqual(Array(encoded[10..<42]), x)
        XCTAssertEqual(hexString(Array(encoded[42..<45])), "225820")
        XCTAssertEqual(Array(encoded[45...]), y)
    }

    func testOKPEd25519Encoding() {
        let x = [UInt8](repeating: 3, count: 32)
        XCTAssertEqual(hexString(COSEKey.okpEd25519(x: x).encoded), "a4010103272006215820" + hexString(x))
    }

    func testRSAEncoding() {
        let n = [UInt8](repeating: 0xC5, count: 256), e: [UInt8] = [1, 0, 1]
        let encoded = COSEKey.rsa(n: n, e: e).encoded
        XCTAssertEqual(hexString(Array(encoded[0..<11])), "a401030339010020590100")
        XCTAssertEqual(hexString(Array(encoded.suffix(5))), "2143010001")
    }

    func testDecodingRoundTripsAndRefusesWrongParameters() throws {
        for key in [COSEKey.ec2P256(x: [UInt8](repeating: 1, count: 32), y: [UInt8](repeating: 2, count: 32)),
                    .okpEd25519(x: [UInt8](repeating: 3, count: 32)), .rsa(n: [UInt8](repeating: 0xC5, count: 256), e: [1, 0, 1])] {
            XCTAssertEqual(try COSEKey(cbor: CBOR.decode(key.encoded)), key)
        }
        let badCurve = CBOR.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(2)),
                                 (.int(-2), .bytes([UInt8](repeating: 1, count: 32))), (.int(-3), .bytes([UInt8](repeating: 1, count: 32)))])
        XCTAssertThrowsError(try COSEKey(cbor: badCurve))
        XCTAssertThrowsError(try COSEKey(cbor: .map([(.int(1), .int(2)), (.int(3), .int(-35))])))
    }

    func testP256KeysFixedLayoutIsItsCanonicalCBOR() throws {
        let p256 = COSEKey.ec2P256(x: (0..<32).map { UInt8($0) }, y: (32..<64).map { UInt8($0) })
        XCTAssertEqual(p256.encoded, p256.cbor.encoded())
        XCTAssertEqual(try COSEKey(cbor: try CBOR.decode(p256.encoded)), p256)
        var appended: [UInt8] = [0x99]
        p256.encode(into: &appended)
        XCTAssertEqual(appended, [0x99] + p256.cbor.encoded())
    }

    func testNoneAttestationObjectsFixedLayoutIsItsCanonicalCBOR() {
        for length in [37, 23, 24, 255, 256, 300] {
            let object = AttestationObject(authenticatorData: [UInt8](repeating: 0x5A, count: length), statement: .none)
            XCTAssertEqual(object.encoded, object.cbor.encoded(), "authData of \(length) bytes")
        }
        let packed = AttestationObject(authenticatorData: [1, 2, 3], statement: .packedSelf(algorithm: .es256, signature: [4, 5]))
        XCTAssertEqual(packed.encoded, packed.cbor.encoded())
    }
}
