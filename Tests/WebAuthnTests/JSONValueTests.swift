import WebAuthn
import XCTest

final class JSONValueTests: XCTestCase {
    func testMemberSpansAreTheTopLevelMembersValuesAsWrittenTheLastOfANameWinning() throws {
        let text = Array(#"{ "a" : [1, {"b": 2}] , "body":{"x": "y\"z"},"body" :  {"k":1} , "n":null}"#.utf8)
        let (value, spans) = try text.withUnsafeBufferPointer { try JSONValue.parseWithMemberSpans($0) }
        XCTAssertEqual(value, try JSONValue.parse(text))
        XCTAssertEqual(Set(spans.keys), ["a", "body", "n"], "top-level members only")
        for (name, span) in spans {
            XCTAssertEqual(try JSONValue.parse(Array(text[span])), value[name], name)
        }
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
}
