@testable import CredemuProbe
import XCTest

/// The probe's URL parser against hostile input: every refusal is `BadURL`, and nothing in a URL reaches the
/// request line or headers but the URL itself.
final class HTTPURLTests: XCTestCase {
    private func assertBad(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try HTTPURL(text), text, file: file, line: line) {
            XCTAssertEqual(($0 as? ProbeError)?.kind, .badURL, file: file, line: line)
        }
    }

    func testPortsOutsideOneTo65535OrNotInASCIIDigitsAreRefused() throws {
        for port in ["0", "65536", "99999999999999999999999", "-1", "+80", "８０", "٨٠", "80 ", "0x50", "1e3", "080080"] {
            assertBad("http://127.0.0.1:\(port)/")
        }
        XCTAssertEqual(try HTTPURL("http://127.0.0.1:65535/").port, 65535)
        XCTAssertEqual(try HTTPURL("http://127.0.0.1:/").port, 80)
        XCTAssertEqual(try HTTPURL("http://127.0.0.1:00080/").port, 80)
    }

    func testHostsAreASCIINamesOrAddressesAndIPv6IsBracketed() throws {
        for text in ["http://ｅｘａｍｐｌｅ.com/", "http://exämple.com/", "http://::1/", "http://[::1]junk/", "http://[::1/", "http://[]/",
                     "http://[fe80::1%25eth0]/", "http://[host]/", "http://a b/", "http://a\u{0}b/", "http://\u{202e}a/",
                     "http://" + String(repeating: "a", count: 254) + "/", "http://a:1:2/", "http://user:pw@rp.example/", "http://",
                     "http:///path", "http://?x", "ftp://rp.example/", "https://rp.example/", "http:/rp.example/", ""] {
            assertBad(text)
        }
        let v6 = try HTTPURL("http://[::FFFF:127.0.0.1]:8443/x")
        XCTAssertEqual(v6.host, "::ffff:127.0.0.1")
        XCTAssertEqual(v6.hostHeader, "[::ffff:127.0.0.1]:8443")
        XCTAssertEqual(try HTTPURL("HTTP://RP.Example/").host, "rp.example")
    }

    func testNothingInAPathReachesTheRequestLineButThePath() throws {
        for path in ["/a b", "/a\r\nX-Injected: 1", "/a\nb", "/\u{7f}", "/é", "/\u{0}"] {
            assertBad("http://rp.example" + path)
        }
        assertBad("http://rp.example/" + String(repeating: "a", count: 9000))
        let url = try HTTPURL("http://rp.example")
        for reference in ["/a\r\nHost: evil", "x y", "/é"] {
            XCTAssertThrowsError(try url.resolving(reference)) { XCTAssertEqual(($0 as? ProbeError)?.kind, .badURL) }
        }
        XCTAssertEqual(try HTTPURL("http://rp.example?x=1#frag").path, "/?x=1")
        XCTAssertEqual(try HTTPURL("http://rp.example#frag").path, "/")
        XCTAssertEqual(try HTTPURL("http://rp.example/fido?v=1").resolving("attestation/options").path, "/fido/attestation/options")
    }

    func testAHugeURLIsRefusedWithAShortMessage() {
        let text = "http://" + String(repeating: "\u{1b}[31m", count: 100_000)
        XCTAssertThrowsError(try HTTPURL(text)) { error in
            let message = "\(error)"
            XCTAssertLessThan(message.utf8.count, 2000)
            XCTAssertFalse(message.unicodeScalars.contains("\u{1b}"))
        }
    }
}
