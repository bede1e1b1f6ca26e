import Foundation
import WebAuthn
import XCTest
@testable import CredemuServer

/// The route table is the API: the OpenAPI document describes exactly its routes, and the guards follow from it.
final class RouteTableTests: XCTestCase {
    func testTheRouteTableAndTheOpenAPIDocumentNameTheSameRoutes() throws {
        let document = try JSONValue.parse(Array(try XCTUnwrap(APIServer.bundled("openapi.json"))))
        var documented: Set<String> = []
        for (path, item) in document["paths"]?.objectValue ?? [] {
            for (method, _) in item.objectValue ?? [] where ["get", "post", "patch", "delete", "put"].contains(method) {
                documented.insert("\(method.uppercased()) \(path)")
            }
        }
        let routed = Set(APIServer.routes.map { "\($0.method) \($0.template)" })
        XCTAssertEqual(routed.subtracting(documented), [], "routes the OpenAPI document does not describe")
        XCTAssertEqual(documented.subtracting(routed), [], "documented routes the server does not serve")
        XCTAssertEqual(routed.count, APIServer.routes.count, "no route is in the table twice")
    }

    func testTheOpenAPIDocumentMarksTheRoutesAChannelMayReachAndTheyAreTheShimsOwn() throws {
        let document = try JSONValue.parse(Array(try XCTUnwrap(APIServer.bundled("openapi.json"))))
        for route in APIServer.routes {
            let operation = document["paths"]?[route.template]?[route.method.lowercased()]
            XCTAssertEqual(operation?["x-credemu-relayed"]?.boolValue ?? false, route.relayed, "\(route.method) \(route.template)")
        }
        let tails = Set(APIServer.routes.filter(\.relayed).map { "\($0.method) " + String($0.template.drop { $0 != "}" }.dropFirst()) })
        XCTAssertEqual(tails, ["POST /credentials/create", "POST /credentials/get", "POST /ceremonies/{id}/abort", "POST /signals/{kind}",
                               "GET /capabilities", "POST /passwords", "POST /passwords/use", "POST /autofill"])
        XCTAssertEqual(APIServer.routes.filter(\.relayed).count, 2 * tails.count, "on both targets")
    }

    func testTheCeremonyRoutesAndScenarioRunsAreTheOnesThatMayWait() {
        XCTAssertEqual(APIServer.blockingTails, ["/credentials/create", "/credentials/get"])
        XCTAssertEqual(APIServer.blockingPaths, ["/channels", "/scenarios/run"],
                       "a scenario run and a channel's opening (which waits for the DevTools connection) never take a pool thread")
    }

    func testTemplatesMatchWholeSegmentsOnly() throws {
        let route = try XCTUnwrap(APIServer.routes.first { $0.template == "/profiles/{profile}/passkeys/{id}" })
        XCTAssertEqual(route.match(["profiles", "alice", "passkeys", "AAAA"]), ["alice", "AAAA"])
        XCTAssertNil(route.match(["profiles", "alice", "passkeys"]))
        XCTAssertNil(route.match(["profiles", "alice", "passwords", "AAAA"]))
        XCTAssertNil(route.match(["profiles", "alice", "passkeys", "AAAA", "x"]))
    }

    func testAPathsSegmentsAreItsNonEmptyPartsBetweenSlashes() {
        func segments(_ path: String) -> [String] {
            HTTPRequest(method: "GET", path: path, query: [:], headers: [:], body: [], bodyTooLarge: false).segments
        }
        XCTAssertEqual(segments("/profiles/default/credentials/get"), ["profiles", "default", "credentials", "get"])
        XCTAssertEqual(segments("//profiles//a/"), ["profiles", "a"])
        XCTAssertEqual(segments("profiles"), ["profiles"])
        XCTAssertEqual(segments("/"), [])
        XCTAssertEqual(segments(""), [])
        XCTAssertEqual(segments("/\u{e9}t\u{e9}/x\u{301}/a%2Fb/.."), ["\u{e9}t\u{e9}", "x\u{301}", "a%2Fb", ".."])
        for path in ["/a/b/c", "///", "/a//b", "/" + String(repeating: "x/", count: 40)] {
            XCTAssertEqual(segments(path), path.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }, path)
        }
    }

    func testHostNamesAreParsedStrictly() {
        XCTAssertEqual(HostCheck.name("LocalHost:8765"), "localhost")
        XCTAssertEqual(HostCheck.name("[::1]:80"), "[::1]")
        XCTAssertEqual(HostCheck.name("127.0.0.1"), "127.0.0.1")
        for bad in ["", "a:b:c", "host:99999", "host:", ":80", "a b", "user@host", "host/x", "[::1", "[::1]x"] {
            XCTAssertNil(HostCheck.name(bad), bad)
        }
        XCTAssertTrue(HostCheck.isLoopbackName("127.255.0.1"))
        XCTAssertTrue(HostCheck.isLoopbackName("app.localhost"))
        for name in ["127.0.0.1.evil.example", "localhost.evil.example", "128.0.0.1", "127.0.0.256", "0177.0.0.1", "0.0.0.0"] {
            XCTAssertFalse(HostCheck.isLoopbackName(name), name)
        }
    }
}
