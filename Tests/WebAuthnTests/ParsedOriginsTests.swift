import XCTest
@testable import WebAuthn

/// `Origin.parsed` keeps what it parsed: the same answer as a fresh parse, only for strings that parse, and never
/// more than its limit.
final class ParsedOriginsTests: XCTestCase {
    func testARememberedOriginAnswersAsAFreshParseWithItsSerialization() throws {
        // A port with a leading zero parses to a serialization that differs from the string given.
        for text in ["https://login.example.com", "http://localhost:8080", "https://example.com:08443",
                     "android:apk-key-hash:" + Base64URL.encode([UInt8](repeating: 7, count: 32))] {
            let first = try Origin.parsed(text)
            let again = try Origin.parsed(text)
            XCTAssertEqual(first.origin, again.origin, text)
            XCTAssertEqual(again.serialized, again.origin.description, text)
            XCTAssertEqual(try Origin(text), first.origin, text)
        }
        XCTAssertEqual(try Origin.parsed("https://example.com:08443").serialized, "https://example.com:8443")
    }

    func testAnOriginThatFailsIsRefusedEveryTimeAndNotKept() {
        for _ in 0..<2 {
            for bad in ["https://example.com:443", "http://example.com", "https://Example.com", "https://a/b"] {
                XCTAssertThrowsError(try Origin.parsed(bad), bad)
                XCTAssertNil(ParsedOrigins.shared.lookup(bad), bad)
            }
        }
    }

    func testTheKeptOriginsNeverPassTheirLimit() throws {
        for i in 0..<(ParsedOrigins.limit + 10) {
            let text = "https://host\(i).example.com"
            XCTAssertEqual(try Origin.parsed(text).serialized, text)
            XCTAssertLessThanOrEqual(ParsedOrigins.shared.count, ParsedOrigins.limit)
        }
        // Emptied when full, and filled again from the parse.
        XCTAssertEqual(try Origin.parsed("https://host0.example.com").origin, try Origin("https://host0.example.com"))
    }
}
