import XCTest
@testable import WebAuthn

func hex(_ s: String) -> [UInt8] { Hex.decode(s)! }

func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

final class CBORTests: XCTestCase {
    /// RFC 8949 Appendix A: (encoding, value). All are in preferred serialization, so they re-encode exactly.
    let appendixA: [(String, CBOR)] = [
        ("00", .unsigned(0)), ("01", .unsigned(1)), ("0a", .unsigned(10)), ("17", .unsigned(23)), ("1818", .unsigned(24)),
        ("1819", .unsigned(25)), ("1864", .unsigned(100)), ("1903e8", .unsigned(1000)), ("1a000f4240", .unsigned(1_000_000)),
        ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)), ("1bffffffffffffffff", .unsigned(18_446_744_073_709_551_615)),
        ("c249010000000000000000", .tagged(2, .bytes(hex("010000000000000000")))),
        ("3bffffffffffffffff", .negative(18_446_744_073_709_551_615)),
        ("c349010000000000000000", .tagged(3, .bytes(hex("010000000000000000")))),
        ("20", .int(-1)), ("29", .int(-10)), ("3863", .int(-100)), ("3903e7", .int(-1000)),
        ("f90000", .float(0.0)), ("f98000", .float(-0.0)), ("f93c00", .float(1.0)), ("fb3ff199999999999a", .float(1.1)),
        ("f93e00", .float(1.5)), ("f97bff", .float(65504.0)), ("fa47c35000", .float(100000.0)),
        ("fa7f7fffff", .float(3.4028234663852886e+38)), ("fb7e37e43c8800759c", .float(1.0e+300)),
        ("f90001", .float(5.960464477539063e-8)), ("f90400", .float(0.00006103515625)), ("f9c400", .float(-4.0)),
        ("fbc010666666666666", .float(-4.1)), ("f97c00", .float(.infinity)), ("f97e00", .float(.nan)), ("f9fc00", .float(-.infinity)),
        ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null), ("f7", .undefined), ("f0", .simple(16)), ("f8ff", .simple(255)),
        ("c074323031332d30332d32315432303a30343a30305a", .tagged(0, .text("2013-03-21T20:04:00Z"))),
        ("c11a514b67b0", .tagged(1, .unsigned(1_363_896_240))), ("c1fb41d452d9ec200000", .tagged(1, .float(1363896240.5))),
        ("d74401020304", .tagged(23, .bytes(hex("01020304")))), ("d818456449455446", .tagged(24, .bytes(hex("6449455446")))),
        ("d82076687474703a2f2f7777772e6578616d706c652e636f6d", .tagged(32, .text("http://www.example.com"))),
        ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])), ("60", .text("")), ("6161", .text("a")),
        ("6449455446", .text("IETF")), ("62225c", .text("\"\\")), ("62c3bc", .text("\u{00fc}")), ("63e6b0b4", .text("\u{6c34}")),
        ("64f0908591", .text("\u{10151}")), ("80", .array([])), ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
        ("8301820203820405", .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", .array((1...25).map { .unsigned(UInt64($0)) })),
        ("a0", .map([])), ("a201020304", .map([(.unsigned(1), .unsigned(2)), (.unsigned(3), .unsigned(4))])),
        ("a26161016162820203", .map([(.text("a"), .unsigned(1)), (.text("b"), .array([.unsigned(2), .unsigned(3)]))])),
        ("826161a161626163", .array([.text("a"), .map([(.text("b"), .text("c"))])])),
        ("a56161614161626142616361436164614461656145",
         .map(["a", "b", "c", "d", "e"].map { (.text($0), .text($0.uppercased())) })),
    ]

    /// Appendix A items that are well formed but not in preferred form: (encoding, value, preferred encoding).
    let appendixANonPreferred: [(String, CBOR, String)] = [
        ("fa7f800000", .float(.infinity), "f97c00"), ("fa7fc00000", .float(.nan), "f97e00"), ("faff800000", .float(-.infinity), "f9fc00"),
        ("fb7ff0000000000000", .float(.infinity), "f97c00"), ("fb7ff8000000000000", .float(.nan), "f97e00"),
        ("fbfff0000000000000", .float(-.infinity), "f9fc00"),
        ("5f42010243030405ff", .bytes([1, 2, 3, 4, 5]), "450102030405"),
        ("7f657374726561646d696e67ff", .text("streaming"), "6973747265616d696e67"),
        ("9fff", .array([]), "80"),
        ("9f018202039f0405ffff", .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]), "8301820203820405"),
        ("83018202039f0405ff", .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]), "8301820203820405"),
        ("bf61610161629f0203ffff", .map([(.text("a"), .unsigned(1)), (.text("b"), .array([.unsigned(2), .unsigned(3)]))]), "a26161016162820203"),
    ]

    func testAppendixAVectorsDecodeAndReencodeExactly() throws {
        for (encoding, value) in appendixA {
            let decoded = try CBOR.decode(hex(encoding), options: .lenient)
            XCTAssertEqual(decoded, value, "decoding \(encoding)")
            XCTAssertEqual(hexString(value.encoded()), encoding, "encoding \(value)")
        }
    }

    func testAppendixAStrictDecoderAcceptsEveryPreferredVector() throws {
        for (encoding, value) in appendixA {
            XCTAssertEqual(try CBOR.decode(hex(encoding)), value, encoding)
        }
    }

    func testAppendixANonPreferredVectorsDecodeLenientlyAndReencodePreferred() throws {
        for (encoding, value, preferred) in appendixANonPreferred {
            XCTAssertEqual(try CBOR.decode(hex(encoding), options: .lenient), value, encoding)
            XCTAssertEqual(hexString(value.encoded()), preferred, encoding)
        }
        let funAmt = try CBOR.decode(hex("bf6346756ef563416d7421ff"), options: .lenient)
        XCTAssertEqual(funAmt["Fun"], .bool(true))
        XCTAssertEqual(funAmt["Amt"], .int(-2))
    }

    func testStrictDecoderRefusesIndefiniteLength() {
        XCTAssertThrowsError(try CBOR.decode(hex("9fff"))) { XCTAssertTrue("\($0)".contains("indefinite")) }
    }

    func testStrictDecoderRefusesNonShortestIntegers() {
        XCTAssertThrowsError(try CBOR.decode(hex("1817")))
        XCTAssertThrowsError(try CBOR.decode(hex("190017")))
        XCTAssertThrowsError(try CBOR.decode(hex("5801ff")))
    }

    func testDecoderRefusesTrailingBytesTruncationAndDuplicateKeys() {
        XCTAssertThrowsError(try CBOR.decode(hex("0000")))
        XCTAssertThrowsError(try CBOR.decode(hex("440102")))
        XCTAssertThrowsError(try CBOR.decode(hex("a201020103")))
        XCTAssertThrowsError(try CBOR.decode(hex("62c328")))  // invalid UTF-8
        XCTAssertThrowsError(try CBOR.decode(hex("1c")))      // reserved additional information
        XCTAssertThrowsError(try CBOR.decode([]))
    }

    func testDecoderEnforcesDepthAndSizeLimits() {
        let deep = [UInt8](repeating: 0x81, count: 40) + [0x00]
        XCTAssertThrowsError(try CBOR.decode(deep)) { XCTAssertTrue("\($0)".contains("nested deeper")) }
        XCTAssertNoThrow(try CBOR.decode(deep, options: .init(maxDepth: 41)))
        let big = CBOR.bytes([UInt8](repeating: 0, count: 2000)).encoded()
        XCTAssertThrowsError(try CBOR.decode(big, options: .init(maxInputSize: 1000)))
        // A huge declared length must not allocate: it is refused before reading.
        XCTAssertThrowsError(try CBOR.decode(hex("9b00000000ffffffff")))
        XCTAssertThrowsError(try CBOR.decode(hex("5b00000000ffffffff")))
    }

    func testMapsEncodeInCTAP2CanonicalKeyOrder() {
        let map = CBOR.map([(.text("authData"), .unsigned(3)), (.int(-1), .unsigned(4)), (.text("fmt"), .unsigned(1)),
                            (.unsigned(10), .unsigned(0)), (.unsigned(1), .unsigned(5)), (.text("attStmt"), .unsigned(2))])
        // Keys sorted by encoded bytes: shorter first, then bytewise: 01, 0a, 20, "fmt", "attStmt", "authData".
        XCTAssertEqual(hexString(map.encoded()), "a6" + "0105" + "0a00" + "2004" + "63666d7401" + "6761747453746d7402" + "68617574684461746103")

        // Out of order only at its last key, with an unordered map nested inside an ordered entry.
        let late = CBOR.map([(.unsigned(1), .unsigned(1)), (.unsigned(2), .map([(.unsigned(5), .null), (.unsigned(4), .null)])),
                             (.unsigned(0), .unsigned(0))])
        XCTAssertEqual(hexString(late.encoded()), "a3" + "0000" + "0101" + "02" + "a2" + "04f6" + "05f6")
    }

    func testRoundTripOfNestedStructures() throws {
        let value = CBOR.map([(.text("a"), .array([.bytes([1, 2]), .null, .bool(true), .int(-500), .tagged(42, .text("x"))]))])
        XCTAssertEqual(try CBOR.decode(value.encoded()), value)
    }
}
