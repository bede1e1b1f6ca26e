import CredemuEngine
import CredemuOperations
import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuServer

/// Every route's caller scope, enforced by the front door before any handler runs: tried for every route of the
/// table and every kind of caller.
final class RouteScopeTests: XCTestCase {
    static let allowed = "https://a.example"
    static let token = "s3cret"

    /// The kinds of caller the front door tells apart, with the headers each sends.
    enum Caller: CaseIterable {
        case noOrigin, console, allowedPage, foreignPage
        var headers: [String: String] {
            switch self {
            case .noOrigin: return [:]
            case .console: return ["origin": "http://127.0.0.1:8765"]
            case .allowedPage: return ["origin": RouteScopeTests.allowed]
            case .foreignPage: return ["origin": "https://evil.example"]
            }
        }
        /// Whether the front door lets this caller reach a route of `scope`.
        func reaches(_ scope: RouteScope) -> Bool {
            switch (self, scope) {
            case (_, .public): return true
            case (.noOrigin, _): return true
            case (.console, .page), (.console, .operator): return true
            case (.allowedPage, .page): return true
            default: return false
            }
        }
    }

    func makeAPI(token: String? = nil) throws -> (APIServer, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        let api = try APIServer(vault: vault, registry: try PolicyRegistry(),
                                configuration: .init(token: token, allowedOrigins: [RouteScopeTests.allowed]))
        return (api, directory)
    }

    /// A request for the route with every parameter naming nothing that exists, so a handler that runs only
    /// refuses (404, 400) and the vault is unchanged.
    func request(_ route: Route, _ caller: Caller, authorization: String? = nil) -> HTTPRequest {
        let path = route.template.split(separator: "/").map { $0.hasPrefix("{") ? "zz-none" : String($0) }.joined(separator: "/")
        var headers = ["host": "127.0.0.1:8765", "content-type": "application/json"].merging(caller.headers) { $1 }
        if let authorization { headers["authorization"] = authorization }
        return HTTPRequest(method: route.method, path: "/" + path, query: [:], headers: headers, body: Array("{}".utf8), bodyTooLarge: false)
    }

    /// Whether the front door refused the request before its handler (its own 401 and 403 bodies).
    static func refusedAtTheDoor(_ response: HTTPResponse) throws -> Bool {
        guard response.status == 401 || response.status == 403 else { return false }
        let error = try JSONValue.parse(response.body)["error"]
        return ["Unauthorized", "Forbidden", "PageTokenOutsidePage"].contains(error?["name"]?.stringValue ?? "")
    }

    func testEveryRouteAdmitsExactlyTheCallersItsScopeNames() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let before = try api.operations.listProfiles()
        for route in APIServer.routes {
            for caller in Caller.allCases {
                let response = api.handle(request(route, caller))
                XCTAssertEqual(!(try Self.refusedAtTheDoor(response)), caller.reaches(route.scope),
                               "\(route.method) \(route.template) for \(caller): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
            }
        }
        XCTAssertEqual(try api.operations.listProfiles(), before, "no caller changed the vault")
    }

    func testWithATokenAPageTokenOpensOnlyItsOwnTargetsPageRoutes() throws {
        let (api, _d) = try makeAPI(token: RouteScopeTests.token)
        _ = _d
        let own = { (kind: CeremonyTarget.Kind) in "Bearer " + PageToken.derive(from: RouteScopeTests.token, kind: kind, name: "zz-none") }
        let other = "Bearer " + PageToken.derive(from: RouteScopeTests.token, kind: .profile, name: "someone-else")
        let guessed = "Bearer " + PageToken.derive(from: "not-the-token", kind: .profile, name: "zz-none")
        for route in APIServer.routes where route.scope != .public {
            for caller in [Caller.noOrigin, .console, .allowedPage] where caller.reaches(route.scope) {
                XCTAssertFalse(try Self.refusedAtTheDoor(api.handle(request(route, caller, authorization: "Bearer " + RouteScopeTests.token))),
                               "the server's token opens \(route.template)")
                XCTAssertTrue(try Self.refusedAtTheDoor(api.handle(request(route, caller))), "no token: \(route.template)")
                XCTAssertTrue(try Self.refusedAtTheDoor(api.handle(request(route, caller, authorization: guessed))), "a guessed token: \(route.template)")
                XCTAssertTrue(try Self.refusedAtTheDoor(api.handle(request(route, caller, authorization: other))), "another profile's page token: \(route.template)")
                for kind in CeremonyTarget.Kind.allCases {
                    // Only for a page: the token is in the page, and gives no more than the page has (issue 31).
                    let opens = route.scope == .page && route.targetKind == kind && caller == .allowedPage
                    XCTAssertEqual(!(try Self.refusedAtTheDoor(api.handle(request(route, caller, authorization: own(kind))))), opens,
                                   "a \(kind) page token on \(route.method) \(route.template)")
                }
            }
        }
    }

    /// The attacker's request of issue 31: the page token read from a page, sent without an Origin (curl, a script
    /// outside the browser), asking for every saved password in the clear.
    func testAPageTokenWithoutThePagesOriginRevealsNoPassword() throws {
        let (api, _d) = try makeAPI(token: RouteScopeTests.token)
        _ = _d
        _ = try api.operations.savePassword("default", origin: RouteScopeTests.allowed, username: "alice", password: "hunter2")
        let pageToken = "Bearer " + PageToken.derive(from: RouteScopeTests.token, kind: .profile, name: "default")
        for headers in [["authorization": pageToken], ["authorization": pageToken, "origin": "http://127.0.0.1:8765"]] {
            let response = api.handle(HTTPRequest(method: "GET", path: "/profiles/default/passwords", query: ["reveal": "true"],
                                                  headers: ["host": "127.0.0.1:8765"].merging(headers) { $1 }, body: [], bodyTooLarge: false))
            let text = String(decoding: response.body, as: UTF8.self)
            XCTAssertEqual(response.status, 403, text)
            XCTAssertEqual(try JSONValue.parse(response.body)["error"]?["name"], "PageTokenOutsidePage")
            XCTAssertFalse(text.contains("hunter2"))
        }
        // From the page itself the token lists the page's own passwords, never the secrets.
        let page = api.handle(HTTPRequest(method: "GET", path: "/profiles/default/passwords", query: ["reveal": "true"],
                                          headers: ["host": "127.0.0.1:8765", "authorization": pageToken, "origin": RouteScopeTests.allowed],
                                          body: [], bodyTooLarge: false))
        XCTAssertFalse(String(decoding: page.body, as: UTF8.self).contains("hunter2"))
        // The server's own token still reveals them to the test code.
        let operator_ = api.handle(HTTPRequest(method: "GET", path: "/profiles/default/passwords", query: ["reveal": "true"],
                                               headers: ["host": "127.0.0.1:8765", "authorization": "Bearer " + RouteScopeTests.token],
                                               body: [], bodyTooLarge: false))
        XCTAssertTrue(String(decoding: operator_.body, as: UTF8.self).contains("hunter2"))
    }

    func testPageRoutesAreAProfilesOrADevicesAndPublicOnesAreReadOnly() {
        for route in APIServer.routes where route.scope == .page {
            XCTAssertNotNil(route.targetKind, "a page route acts on one profile or device: \(route.template)")
        }
        XCTAssertEqual(Set(APIServer.routes.filter { $0.scope == .public }.map(\.template)),
                       ["/health", "/openapi.json", "/shim.js", "/", "/console.js", "/console.css", "/console.svg"])
        XCTAssertTrue(APIServer.routes.filter { $0.scope == .public }.allSatisfy { $0.method == "GET" })
    }

    func testTheOpenAPIDocumentStatesEachRoutesScope() throws {
        let document = try JSONValue.parse(Array(try XCTUnwrap(APIServer.bundled("openapi.json"))))
        for route in APIServer.routes {
            let operation = document["paths"]?[route.template]?[route.method.lowercased()]
            XCTAssertEqual(operation?["x-credemu-scope"]?.stringValue, route.scope.rawValue, "\(route.method) \(route.template)")
        }
    }

    func testTheShimCarriesAPageTokenNeverTheServersAndA401ForAWrongOne() throws {
        let (api, _d) = try makeAPI(token: RouteScopeTests.token)
        _ = _d
        func shim(_ query: [String: String]) -> HTTPResponse {
            api.handle(HTTPRequest(method: "GET", path: "/shim.js", query: query, headers: ["host": "127.0.0.1:8765"], body: [], bodyTooLarge: false))
        }
        let good = shim(["profile": "default", "token": RouteScopeTests.token])
        XCTAssertEqual(good.status, 200)
        let text = String(decoding: good.body, as: UTF8.self)
        XCTAssertFalse(text.contains(RouteScopeTests.token), "the server's token is never in the script")
        XCTAssertTrue(text.contains(PageToken.derive(from: RouteScopeTests.token, kind: .profile, name: "default")))
        XCTAssertEqual(shim(["profile": "default", "token": "guess"]).status, 401)
        let anonymous = String(decoding: shim(["device": "desk"]).body, as: UTF8.self)
        XCTAssertFalse(anonymous.contains("\"profile\""), "a device's script names no profile")
    }
}
