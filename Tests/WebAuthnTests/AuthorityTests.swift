import XCTest
@testable import WebAuthn

/// The one host-and-port parser that origins, allowed page origins and the Host check share.
final class AuthorityTests: XCTestCase {
    func testHostsAndPortsSplitAsAnOriginOrAHostHeaderWritesThem() {
        XCTAssertEqual(Authority("example.com").map { "\($0.host) \(String(describing: $0.port))" }, "example.com nil")
        XCTAssertEqual(Authority("localhost:8765")?.port, 8765)
        XCTAssertEqual(Authority("[::1]:80").map { String($0.host) }, "[::1]")
        XCTAssertEqual(Authority("[::1]")?.port, nil)
        XCTAssertEqual(Authority("a.test:08000")?.portText, "08000", "a leading zero is kept for callers that refuse it")
    }

    func testAnythingButHostAndPortIsRefused() {
        for bad in ["", ":80", "host:", "a:b:c", "host:99999", "host:123456", "[::1", "[::1]x", "[::1]:", "host:8a"] {
            XCTAssertNil(Authority(bad), bad)
        }
    }

    func testOriginsUseItAndRefuseWhatItRefuses() {
        XCTAssertEqual(try Origin("https://[::1]:8443").description, "https://[::1]:8443")
        XCTAssertThrowsError(try Origin("https://example.com:443"), "no browser serializes the default port") {
            XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError)
            XCTAssertTrue(($0 as? WebAuthnError)?.message.contains("'https://example.com'") == true, "\($0)")
        }
        for bad in ["https://a:b:443", "https://example.com:0", "https://:443", "https://example.com:"] {
            XCTAssertThrowsError(try Origin(bad), bad)
        }
    }
}
