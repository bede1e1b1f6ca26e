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
