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

    func testEveryStringDecodesAsTheOneCharacterAtATimeReadingDoesAndOnlyCanonicalOnes() {
        // The reading the decoder replaced: six bits a character, the leftover bits zero.
        func reference(_ text: String) -> [UInt8]? {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
            guard text.utf8.count % 4 != 1 else { return nil }
            var out: [UInt8] = [], buffer: UInt32 = 0, bits = 0
            for char in text.utf8 {
                guard let value = alphabet.firstIndex(of: char) else { return nil }
                buffer = buffer << 6 | UInt32(value)
                bits += 6
                if bits >= 8 { bits -= 8; out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits))) }
            }
            return bits > 0 && buffer & ((1 << UInt32(bits)) - 1) != 0 ? nil : out
        }
        let characters = Array("AQgwxyz09-_Zzé+/= \u{0}.".unicodeScalars).map(String.init)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20_000 {
            let text = (0..<(round % 23)).map { _ in round % 5 == 0 ? characters.randomElement(using: &generator)! : String(characters[Int.random(in: 0..<11, using: &generator)]) }.joined()
            XCTAssertEqual(Base64URL.decode(text), reference(text), text)
        }
    }

    func testNamedFieldDecodeThrowsTypeError() {
        XCTAssertThrowsError(try Base64URL.decode("a+b", field: "credentialId")) { error in
            XCTAssertEqual((error as? WebAuthnError)?.name, .typeError)
            XCTAssertEqual((error as? WebAuthnError)?.message, "Invalid base64url string for credentialId.")
        }
    }
}
