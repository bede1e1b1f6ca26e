import XCTest
@testable import WebAuthn

final class Base64URLTests: XCTestCase {
    func testRFC4648VectorsInTheURLAlphabetWithoutPadding() {
        let vectors: [(String, String)] = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
                                           ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8))
        }
    }

    func testURLAlphabetReplacesPlusAndSlash() {
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF]), "-_8")
        XCTAssertEqual(Base64URL.decode("-_8"), [0xFB, 0xFF])
    }

    func testDecodingRefusesPaddingStandardAlphabetWhitespaceAndBadLengths() {
        for bad in ["Zg==", "Zm8=", "+/8", "Zm9 v", "Zm9v\n", "Z", "Zm9vY", "é", "Zm9v!"] {
            XCTAssertNil(Base64URL.decode(bad), bad)
        }
    }

    func testDecodingRefusesNonZeroTrailingBitsSoEncodingIsUnique() {
        XCTAssertEqual(Base64URL.decode("Zg"), [0x66])
        XCTAssertNil(Base64URL.decode("Zh"))
        XCTAssertNil(Base64URL.decode("Zm9"))
        XCTAssertEqual(Base64URL.decode("Zm8"), [0x66, 0x6F])
    }

    func testRoundTripOfEveryByteAndLength() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + length) & 0xFF) }
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
        }
    }

    func testNamedFieldDecodeThrowsTypeError() {
        XCTAssertThrowsError(try Base64URL.decode("a+b", field: "credentialId")) { error in
            XCTAssertEqual((error as? WebAuthnError)?.name, .typeError)
            XCTAssertEqual((error as? WebAuthnError)?.message, "Invalid base64url string for credentialId.")
        }
    }
}
