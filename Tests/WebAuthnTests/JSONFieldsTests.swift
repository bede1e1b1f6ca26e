import XCTest
@testable import WebAuthn

final class JSONFieldsTests: XCTestCase {
    struct Refusal: JSONFieldFailure, Equatable {
        var message: String
        static func invalidField(_ message: String) -> Refusal { Refusal(message: message) }
    }

    func fields(_ text: String) throws -> JSONFields<Refusal> {
        try JSONFields<Refusal>(try JSONValue.parse(text), path: "config")
    }

    func refusal(_ body: () throws -> Any?) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? Refusal)?.message ?? "not a Refusal: \(error)"
        }
    }

    func testIntegerRefusesHugeFractionalAndOutOfRangeNumbersWithoutTrapping() throws {
        let f = try fields(#"{"huge": 1e300, "tiny": -1e300, "half": 1.5, "eleven": 11, "minus": -1, "ten": 10, "two63": 9223372036854775808}"#)
        for key in ["huge", "tiny", "half", "eleven", "minus"] {
            XCTAssertEqual(refusal { try f.integer(key, in: 0...10) }?.hasPrefix("config.\(key) must be an integer from 0 to 10, not "), true, key)
        }
        XCTAssertEqual(refusal { try f.integer("half", in: 0...10) }, "config.half must be an integer from 0 to 10, not 1.5.")
        XCTAssertEqual(try f.integer("ten", in: 0...10), 10)
        XCTAssertEqual(try f.integer("missing", in: 0...10), nil)
        for key in ["huge", "tiny", "two63"] {
            XCTAssertNotNil(refusal { try f.integer(key, in: Int64.min...Int64.max) }, "\(key) is outside Int64 itself")
        }
        XCTAssertEqual(try fields(#"{"n": -9223372036854775808}"#).integer("n", in: Int64.min...Int64.max), Int64.min)
        XCTAssertEqual(refusal { try f.integer("ten", in: 11...12) }, "config.ten must be an integer from 11 to 12, not 10.")
    }

    func testWrongTypesMissingMembersAndUnknownMembersNameTheirPath() throws {
        let f = try fields(#"{"name": 5, "list": ["a", 2], "inner": {"extra": true}, "nothing": null, "items": [{}, 3]}"#)
        XCTAssertEqual(refusal { try f.string("name") }, "config.name must be a string, not number.")
        XCTAssertEqual(refusal { try f.integer("list", in: 0...1) }, "config.list must be a number, not array.")
        XCTAssertEqual(refusal { try f.strings("list") }, "config.list[1] must be a string, not number.")
        XCTAssertEqual(refusal { try f.requiredString("nothing") }, "config.nothing is required.", "null counts as absent")
        XCTAssertEqual(refusal { try f.requiredObject("inner").onlyKeys(["kept"]) }, "config.inner has an unknown member \"extra\".")
        XCTAssertEqual(refusal { try f.objects("items") }, "config.items[1] must be an object, not number.")
        XCTAssertEqual(refusal { try f.onlyKeys(["name", "list", "inner", "nothing", "items"]) }, nil)
        XCTAssertEqual(refusal { try JSONFields<Refusal>(.array([]), path: "config") }, "config must be an object, not array.")
    }

    func testOptionsReaderFailuresAreTypeErrors() {
        XCTAssertThrowsError(try OptionsReader(.object([("challenge", "A+Q")]), path: "publicKey").base64URL("challenge")) {
            XCTAssertEqual($0 as? WebAuthnError, .typeError("Invalid base64url string for publicKey.challenge."))
        }
    }
}
