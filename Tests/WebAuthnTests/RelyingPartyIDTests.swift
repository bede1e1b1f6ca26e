import XCTest
@testable import WebAuthn

final class RelyingPartyIDTests: XCTestCase {
    /// (origin, RP ID, allowed?)
    let table: [(String, String, Bool)] = [
        ("https://example.com", "example.com", true),
        ("https://login.example.com", "example.com", true),
        ("https://a.b.login.example.com:8443", "login.example.com", true),
        ("https://example.com", "login.example.com", false),
        ("https://login.example.com", "com", false),
        ("https://evil.com", "example.com", false),
        ("https://notexample.com", "example.com", false),
        ("https://alice.github.io", "alice.github.io", true),
        ("https://alice.github.io", "github.io", false),
        ("https://shop.example.co.uk", "example.co.uk", true),
        ("https://shop.example.co.uk", "co.uk", false),
        ("https://example.co.uk", "co.uk", false),
        ("http://localhost:8000", "localhost", true),
        ("http://app.localhost", "localhost", false),  // "localhost" is a top-level label: a public suffix
        ("http://app.localhost", "app.localhost", true),
        ("https://127.0.0.1", "127.0.0.1", false),
        ("https://[::1]", "::1", false),
        ("https://example.com", "EXAMPLE.com", false),
        ("https://example.com", "", false),
        ("https://example.com", "example.com.", false),
    ]

    func testRPIDTable() throws {
        // Twice over: the second pass answers accepted pairs from memory, and must answer the same.
        for (originText, rpID, allowed) in table + table {
            let origin = try Origin(originText)
            if allowed {
                XCTAssertNoThrow(try RelyingPartyID.validate(rpID, for: origin), "\(originText) with \(rpID)")
            } else {
                XCTAssertThrowsError(try RelyingPartyID.validate(rpID, for: origin), "\(originText) with \(rpID)") { error in
                    XCTAssertEqual((error as? WebAuthnError)?.name, .securityError)
                }
            }
        }
    }

    func testDefaultRPIDIsTheEffectiveDomain() throws {
        XCTAssertEqual(try RelyingPartyID.defaultID(for: Origin("https://login.example.com:8443")), "login.example.com")
        XCTAssertThrowsError(try RelyingPartyID.defaultID(for: Origin("https://10.0.0.1"))) {
            XCTAssertEqual(($0 as? WebAuthnError)?.name, .securityError)
        }
    }

    func testOriginsThatAreNotSecureContextsAreSecurityErrors() {
        for bad in ["http://example.com", "ftp://example.com", "https://example.com/path", "example.com", "https://user@example.com",
                    "https://example.com:0", "https://Example.com", "android:apk-key-hash:tooShort", "https://exa_mple.com",
                    "https://example.com?q=1", "https://example.com#top", "https://BÜCHER.example", "https://"] {
            XCTAssertThrowsError(try Origin(bad), bad) { XCTAssertEqual(($0 as? WebAuthnError)?.name, .securityError) }
        }
        for good in ["https://a-b.example.com:8443", "https://[::1]:8443", "http://app.localhost:3000", "https://bücher.example"] {
            XCTAssertNoThrow(try Origin(good), good)
        }
    }

    func testAnOriginWithItsDefaultPortIsATypeErrorAsNoBrowserSerializesOne() throws {
        for unsent in ["https://example.com:443", "http://localhost:80", "http://app.localhost:80"] {
            XCTAssertThrowsError(try Origin(unsent), unsent) { XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError, unsent) }
        }
        XCTAssertEqual(try Origin("https://example.com:80").description, "https://example.com:80")
        XCTAssertEqual(try Origin("https://example.com:8443").description, "https://example.com:8443")
        XCTAssertEqual(try Origin("http://localhost:3000").description, "http://localhost:3000")
    }

    func testAndroidAppOriginsTakeAnyRegistrableRPID() throws {
        let origin = try Origin("android:apk-key-hash:" + Base64URL.encode([UInt8](repeating: 9, count: 32)))
        XCTAssertNoThrow(try RelyingPartyID.validate("example.com", for: origin))
        XCTAssertThrowsError(try RelyingPartyID.validate("co.uk", for: origin))
        XCTAssertThrowsError(try RelyingPartyID.defaultID(for: origin)) { XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError) }
    }

    func testRegistrableDomainIsReadWhileItsInputIsAlive() {
        // libpsl answers with a pointer into the string it was given: the answer must be copied before that string
        // goes. Short hosts (Swift's inline strings, bridged through a temporary), long ones, built ones and
        // substrings, many times over, so that AddressSanitizer (`make sanitize`) sees any read of freed memory.
        var cases: [(host: String, registrable: String)] = [
            ("example.com", "example.com"), ("a.example.com", "example.com"), ("shop.example.co.uk", "example.co.uk"),
            ("alice.github.io", "alice.github.io"), ("x.alice.github.io", "alice.github.io"), ("localhost", "localhost"),
            ("co.uk", "co.uk"),
        ]
        for n in 0..<300 {
            cases.append(("h\(n).example.com", "example.com"))
            cases.append(("service-\(n).login.department.example.co.uk", "example.co.uk"))
            let long = String(repeating: "label\(n % 7).", count: 1 + n % 9) + "rp\(n).example.org"
            cases.append((String(long.dropFirst(7)), "example.org"))
        }
        var answers: [String] = []
        for _ in 0..<3 {
            for (host, registrable) in cases {
                let answer = RelyingPartyID.registrableDomain(host)
                XCTAssertEqual(answer, registrable, host)
                answers.append(answer)
            }
        }
        XCTAssertEqual(answers.count, cases.count * 3)
    }
}
