import CredemuTestSupport
import Foundation
import XCTest
@testable import Vault

/// A password's site, the key of Chromium's public-suffix match (`IsPublicSuffixDomainMatch`: same scheme, same
/// registrable domain with private registries, same port), and the vault's lookup by it.
final class PasswordSiteTests: XCTestCase {
    func testTheSiteIsSchemeRegistrableDomainAndPort() {
        XCTAssertEqual(PasswordSite.of("https://login.example.com"), "https://example.com")
        XCTAssertEqual(PasswordSite.of("https://example.com"), "https://example.com")
        XCTAssertEqual(PasswordSite.of("https://a.b.example.co.uk"), "https://example.co.uk")
        XCTAssertEqual(PasswordSite.of("https://shop.example.com:8443"), "https://example.com:8443")
        // A private registry's entries are sites of their own (INCLUDE_PRIVATE_REGISTRIES).
        XCTAssertEqual(PasswordSite.of("https://alice.github.io"), "https://alice.github.io")
        XCTAssertNotEqual(PasswordSite.of("https://alice.github.io"), PasswordSite.of("https://bob.github.io"))
        // Chromium's google.com exception: accounts and myaccount match each other, no other google.com host does.
        XCTAssertEqual(PasswordSite.of("https://accounts.google.com"), PasswordSite.of("https://myaccount.google.com"))
        XCTAssertNil(PasswordSite.of("https://mail.google.com"))
    }

    func testARealmWithNoListedRegistrableDomainMatchesExactlyOnly() {
        for realm in ["http://localhost:8080", "http://app.localhost", "https://127.0.0.1", "https://co.uk", "https://github.io",
                      "android://aGFzaA@com.example.app", "not a realm", ""] {
            XCTAssertNil(PasswordSite.of(realm), realm)
        }
    }

    func testSameSiteLookupFindsEveryPublicSuffixMatchAndNothingElse() throws {
        let (vault, _) = try makeTestVault()
        let at = Date(vaultMillis: 1000)
        for (origin, user) in [("https://login.example.com", "alice"), ("https://example.com", "bob"), ("https://example.com:8443", "carol"),
                               ("https://example.net", "dave"), ("https://login.example.com", "erin"), ("http://localhost:8080", "frank")] {
            try vault.savePassword(origin: origin, username: user, password: "pw", at: at)
        }
        XCTAssertEqual(try vault.passwords(sameSiteAs: "https://www.example.com").map { "\($0.origin) \($0.username)" },
                       ["https://example.com bob", "https://login.example.com alice", "https://login.example.com erin"])
        XCTAssertEqual(try vault.passwords(sameSiteAs: "https://example.com:8443").map(\.username), ["carol"])
        XCTAssertEqual(try vault.passwords(sameSiteAs: "http://localhost:8080").map(\.username), ["frank"], "no site: the exact realm")
        XCTAssertEqual(try vault.passwords(sameSiteAs: "http://localhost:9090"), [])
        XCTAssertEqual(try vault.scoped(to: "other").passwords(sameSiteAs: "https://example.com"), [], "another profile's passwords")
    }

    func testTheSQLFunctionAnswersAsPasswordSiteAndNullForWhatIsNotText() throws {
        let (vault, _) = try makeTestVault()
        let answers: [String?] = try vault.locked { () throws(VaultError) in
            var out: [String?] = []
            try vault.db.query("SELECT credemu_password_site('https://login.example.com'), credemu_password_site(NULL), credemu_password_site(x'00ff'), credemu_password_site(42), credemu_password_site('http://localhost')") { row in
                out = (0..<5).map { row.optionalText(Int32($0)) }
            }
            return out
        }
        XCTAssertEqual(answers, ["https://example.com", nil, nil, nil, nil])
    }
}
