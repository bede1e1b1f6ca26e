import Foundation
import WebAuthn
import XCTest

final class JSONValueTests: XCTestCase {
    func testMemberSpansAreTheTopLevelMembersValuesAsWrittenTheLastOfANameWinning() throws {
        let text = Array(#"{ "a" : [1, {"b": 2}] , "body":{"x": "y\"z"},"body" :  {"k":1} , "n":null}"#.utf8)
        let (value, spans) = try text.withUnsafeBufferPointer { try JSONValue.parseWithMemberSpans($0) }
        XCTAssertEqual(value, try JSONValue.parse(text))
        XCTAssertEqual(spans.names, ["a", "body", "n"], "top-level members only")
        for name in spans.names {
            XCTAssertEqual(try JSONValue.parse(Array(text[spans[name]!])), value[name], name)
        }
        XCTAssertNil(spans["k"])
        XCTAssertEqual(String(decoding: text[spans["body"]!], as: UTF8.self), #"{"k":1}"#)
        let array = Array("[1,2]".utf8)
        XCTAssertTrue(try array.withUnsafeBufferPointer { try JSONValue.parseWithMemberSpans($0) }.1.isEmpty)
        XCTAssertThrowsError(try Array("{\"a\":1".utf8).withUnsafeBufferPointer { try JSONValue.parseWithMemberSpans($0) })
    }

    func testAStringOfRunsBetweenEscapesReadsAsItsCharacters() throws {
        let original = "{\"id\":\"x\",\"body\":{\"t\":\"a\\\\b\"}}\u{8}\u{c}\n\r\t/é😀" + String(repeating: "run", count: 100) + "\"\\"
        let text = JSONValue.string(original).serialized()
        XCTAssertEqual(try JSONValue.parse(text), .string(original))
        XCTAssertEqual(try JSONValue.parse(#""\u00e9\ud83d\ude00\/""#), .string("é😀/"))
        for bad in [#""a\"#, #""a\q""#, "\"a\u{1}b\\n\"", #""\ud83d""#, #""ab\n"#] {
            XCTAssertThrowsError(try JSONValue.parse(bad), bad)
        }
    }

    func testAnEscapedStringReadsAsFoundationReadsItWhateverItsEscapesAndWhereTheyFall() throws {
        // Pieces as a writer escapes them (Chromium writes a binding's payload so), at every offset and mixed.
        let pieces = [#"\""#, #"\\"#, #"\/"#, #"\n"#, #"\r"#, #"\t"#, #"\b"#, #"\f"#, #"\u0000"#, #"\u00e9"#, #"\u20AC"#,
                      #"\ud83d\ude00"#, "é", "😀", "a", "bc", "{", ":", "0123456789abcdef"]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<3000 {
            let inside = (0..<(round % 40)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let text = "[\"" + inside + "\"]"
            let reference = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String])
            XCTAssertEqual(try JSONValue.parse(text), .array([.string(reference[0])]), text)
            // One string read out of a longer text: the index after its closing quote.
            let bytes = Array(("xx\"" + inside + "\",1").utf8)
            let (read, end) = try bytes.withUnsafeBufferPointer { try JSONValue.string(in: $0, at: 2) }
            XCTAssertEqual(read, reference[0], text)
            XCTAssertEqual(end, bytes.count - 2, text)
        }
        for bad in [#""a\"#, #""\"#, #""\u12""#, #""\ud800\u""#, #""\ud800\"""#, #""\udc00""#, "\"a\\n\u{1}\"", #""\x""#, #""\u00e9"#] {
            XCTAssertThrowsError(try JSONValue.parse(bad), bad)
        }
        XCTAssertThrowsError(try Array("x1".utf8).withUnsafeBufferPointer { try JSONValue.string(in: $0, at: 1) }, "not at a quote")
        XCTAssertThrowsError(try Array("x".utf8).withUnsafeBufferPointer { try JSONValue.string(in: $0, at: 1) }, "past the end")
    }
}

final class JSONStringSerializationTests: XCTestCase {
    /// The escapes RFC 8259 requires, written one byte at a time: the reference the word-at-a-time writer must match.
    static func reference(_ s: String) -> String {
        var out = "\""
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0..<0x20: out += String(format: "\\u%04x", byte)
            default: out.unicodeScalars.append(contentsOf: String(decoding: [byte], as: UTF8.self).unicodeScalars)
            }
        }
        return out + "\""
    }

    func testEveryByteThatNeedsAnEscapeIsEscapedAtEveryOffsetAndNoOtherIs() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{8}", "\u{c}", "\u{0}", "\u{1f}", "\u{1}"]
        let plain: [Character] = ["a", " ", "!", "#", "[", "]", "~", "\u{7f}", "é", "😀", "/", "!"]
        for length in 0...24 {
            for position in 0..<max(length, 1) {
                for special in specials + plain {
                    var characters = (0..<length).map { plain[$0 % plain.count] }
                    if length > 0 { characters[position] = special }
                    let s = String(characters)
                    let written = JSONValue.string(s).serialized()
                    let expected = s.unicodeScalars.allSatisfy { $0.value < 0x80 } ? Self.reference(s) : nil
                    if let expected { XCTAssertEqual(written, expected, "\(Array(s.utf8))") }
                    XCTAssertEqual(try JSONValue.parse(written), .string(s), "\(Array(s.utf8))")
                }
            }
        }
        for byte in UInt8(0)...UInt8(0x7F) {
            let s = String(repeating: "x", count: 9) + String(decoding: [byte], as: UTF8.self) + String(repeating: "y", count: 9)
            XCTAssertEqual(JSONValue.string(s).serialized(), Self.reference(s), "byte \(byte)")
        }
    }

    func testBytesWrittenEscapedMatchTheOneByteReferenceWhereverTheEscapesFallInAWord() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = Array("abcXYZ019-_{}:,[]".utf8) + [0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C, 0x00, 0x01, 0x1F, 0x7F]
        for round in 0..<5000 {
            let bytes = (0..<(round % 70)).map { _ in round % 3 == 0 ? UInt8.random(in: 0...0x7F, using: &generator) : alphabet.randomElement(using: &generator)! }
            var out: [UInt8] = Array("head".utf8)
            bytes.withUnsafeBufferPointer { JSONValue.writeEscaped($0, to: &out) }
            let expected = Self.reference(String(decoding: bytes, as: UTF8.self)).dropFirst().dropLast()
            XCTAssertEqual(String(decoding: out, as: UTF8.self), "head" + expected, "\(bytes)")
        }
    }
}
