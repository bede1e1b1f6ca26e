@testable import CredemuProbe
import XCTest

/// The probe's cookie jar keys cookies by name, domain and path and sends back what a browser would.
final class CookieJarTests: XCTestCase {
    let site = try! HTTPURL("http://rp.example:8000/account/login")

    func testACookieSetAgainReplacesItsValueAndKeepsItsPlace() throws {
        var jar = CookieJar()
        try jar.store("a=1; Path=/", from: site)
        try jar.store("b=2; Path=/", from: site)
        try jar.store("a=3; Path=/", from: site)
        XCTAssertEqual(jar.count, 2)
        XCTAssertEqual(jar.header(for: site), "a=3; b=2")
    }

    func testOneNameOnTwoPathsIsTwoCookiesAndTheLongerPathComesFirst() throws {
        var jar = CookieJar()
        try jar.store("s=root; Path=/", from: site)
        try jar.store("s=deep; Path=/account", from: site)
        XCTAssertEqual(jar.count, 2)
        XCTAssertEqual(jar.header(for: site), "s=deep; s=root")
        XCTAssertEqual(jar.header(for: try HTTPURL("http://rp.example:8000/other")), "s=root")
        XCTAssertEqual(jar.header(for: try HTTPURL("http://rp.example:8000/accounts")), "s=root")
    }

    func testWithoutAPathTheCookieBelongsToTheRequestsDirectory() throws {
        var jar = CookieJar()
        try jar.store("d=1", from: site)
        XCTAssertEqual(jar.value("d", for: try HTTPURL("http://rp.example:8000/account/other")), "1")
        XCTAssertNil(jar.value("d", for: try HTTPURL("http://rp.example:8000/")))
    }

    func testMaxAgeZeroOrLessRemovesTheCookie() throws {
        var jar = CookieJar()
        try jar.store("a=1; Path=/", from: site)
        try jar.store("a=; Path=/; Max-Age=0", from: site)
        XCTAssertEqual(jar.count, 0)
        try jar.store("b=1; Path=/", from: site)
        try jar.store("b=; Path=/; Max-Age=-99999999999999999999999", from: site)
        try jar.store("c=1; Path=/; Max-Age=99999999999999999999999", from: site)
        try jar.store("d=1; Path=/; Max-Age=soon", from: site)
        XCTAssertEqual(jar.header(for: site), "c=1; d=1")
    }

    func testACookieForAnotherDomainIsIgnoredAndAParentDomainCoversSubdomains() throws {
        var jar = CookieJar()
        let sub = try HTTPURL("http://login.rp.example/")
        try jar.store("evil=1; Domain=other.example", from: sub)
        try jar.store("parent=1; Domain=.RP.example; Path=/", from: sub)
        try jar.store("host=1; Path=/", from: sub)
        XCTAssertEqual(jar.count, 2)
        XCTAssertEqual(jar.header(for: try HTTPURL("http://rp.example/")), "parent=1")
        XCTAssertEqual(jar.header(for: try HTTPURL("http://api.login.rp.example/")), "parent=1")
        XCTAssertEqual(jar.header(for: sub), "parent=1; host=1")
        // An address matches only itself.
        try jar.store("ip=1; Domain=0.0.1; Path=/", from: try HTTPURL("http://127.0.0.1/"))
        XCTAssertNil(jar.header(for: try HTTPURL("http://127.0.0.1/")))
    }

    func testTheJarHoldsAtMostItsCountAndEachCookieAtMostItsSize() throws {
        var jar = CookieJar()
        for n in 0..<HTTPLimits.standard.cookieCount { try jar.store("c\(n)=v; Path=/", from: site) }
        try jar.store("c0=again; Path=/", from: site)
        XCTAssertThrowsError(try jar.store("one-more=v; Path=/", from: site)) { XCTAssertEqual(($0 as? ProbeError)?.kind, .cookieOverLimit) }
        var empty = CookieJar()
        let name = String(repeating: "n", count: 96)
        XCTAssertNoThrow(try empty.store(name + "=" + String(repeating: "v", count: 4000), from: site))
        XCTAssertThrowsError(try empty.store(name + "=" + String(repeating: "v", count: 4001), from: site)) {
            XCTAssertEqual(($0 as? ProbeError)?.kind, .cookieOverLimit)
        }
    }

    func testValuelessOrNamelessCookiesAreIgnored() throws {
        var jar = CookieJar()
        for header in ["", ";", "novalue", "=v", " =v", "; a=b"] { try jar.store(header, from: site) }
        XCTAssertEqual(jar.count, 0)
    }
}
