import CredemuEngine
import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuServer

/// The console at `/`: served with headers that forbid framing, first-party for the API, and the routes it
/// added (hide and restore, revealed passwords, scenario runs) under the front door's rules for other pages.
final class ConsoleTests: XCTestCase {
    static let own = "http://127.0.0.1:8765"
    static let page = "http://localhost:8000"

    func makeAPI(token: String? = nil, origins: Set<String> = []) throws -> (APIServer, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        return (try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init(token: token, allowedOrigins: origins)), directory)
    }

    func request(_ method: String, _ path: String, _ body: String = "", headers: [String: String] = [:]) -> HTTPRequest {
        var all = ["host": "127.0.0.1:8765"]
        if method != "GET" && !body.isEmpty { all["content-type"] = "application/json" }
        all.merge(headers) { $1 }
        return HTTPRequest(method: method, path: path, query: [:], headers: all, body: Array(body.utf8), bodyTooLarge: false)
    }

    func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    func header(_ response: HTTPResponse, _ name: String) -> String? { response.headers.first { $0.0 == name }?.1 }

    func testTheConsoleIsServedAtTheRootWithItsOwnCSPAndNoFraming() throws {
        let (api, _d) = try makeAPI(token: "t0k")
        _ = _d
        for (path, type) in [("/", "text/html; charset=utf-8"), ("/console.js", "application/javascript"), ("/console.css", "text/css"), ("/console.svg", "image/svg+xml")] {
            let response = api.handle(request("GET", path))
            XCTAssertEqual(response.status, 200, path)
            XCTAssertEqual(header(response, "Content-Type"), type)
            XCTAssertEqual(header(response, "X-Frame-Options"), "DENY")
            let csp = try XCTUnwrap(header(response, "Content-Security-Policy"))
            XCTAssertTrue(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'") && !csp.contains("unsafe"), csp)
        }
        let html = String(decoding: api.handle(request("GET", "/")).body, as: UTF8.self)
        XCTAssertTrue(html.contains(#"<script src="/console.js" defer></script>"#))
        XCTAssertEqual(html.components(separatedBy: "<script").count, 2, "one script element, and it has a src: no inline script")
        XCTAssertFalse(html.contains(" onclick=") || html.contains("style="), "no inline handlers or styles (the CSP forbids them)")
        XCTAssertEqual(api.handle(request("GET", "/", headers: ["host": "evil.example"])).status, 403, "the Host check guards the console too")
        XCTAssertEqual(api.handle(request("GET", "/profiles", headers: ["origin": Self.own])).status, 401, "the console needs the token like any caller")
    }

    func testTheConsoleManagesAnyRPsPasskeyAndAnAllowedPageOnlyItsOwn() throws {
        let (api, _d) = try makeAPI(origins: [Self.page])
        _ = _d
        let create = api.handle(request("POST", "/profiles/default/credentials/create",
                                        #"{"origin": "https://login.example.com", "options": \#(creationOptionsJSON(algorithms: [-7]))}"#))
        XCTAssertEqual(create.status, 200)
        let id = try XCTUnwrap(try json(create)["id"]?.stringValue)
        let path = "/profiles/default/passkeys/" + id

        XCTAssertEqual(try json(api.handle(request("GET", "/profiles/default/passkeys", headers: ["origin": Self.page])))["passkeys"]?.arrayValue?.count, 0)
        XCTAssertEqual(api.handle(request("PATCH", path, #"{"hidden": true}"#, headers: ["origin": Self.page])).status, 404, "another RP's passkey is not the page's to hide")
        XCTAssertEqual(api.handle(request("DELETE", path, headers: ["origin": Self.page])).status, 404)
        XCTAssertEqual(api.handle(request("PATCH", path, #"{"hidden": true}"#, headers: ["origin": "https://evil.example"])).status, 403)

        let hidden = api.handle(request("PATCH", path, #"{"hidden": true}"#, headers: ["origin": Self.own]))
        XCTAssertEqual(hidden.status, 200, String(decoding: hidden.body, as: UTF8.self))
        XCTAssertEqual(try json(hidden)["hidden"], true)
        XCTAssertNotEqual(try json(hidden)["hiddenAt"], .null)
        let restored = try json(api.handle(request("PATCH", path, #"{"hidden": false}"#, headers: ["origin": Self.own])))
        XCTAssertEqual(restored["hidden"], false)
        XCTAssertEqual(restored["hiddenAt"], .null)
        let events = try json(api.handle(HTTPRequest(method: "GET", path: "/profiles/default/events", query: ["kind": "vault"],
                                                     headers: ["host": "127.0.0.1:8765"], body: [], bodyTooLarge: false)))["events"]?.arrayValue ?? []
        XCTAssertEqual(events.map { $0["outcome"]?.stringValue }, ["hidden", "restored"])
        XCTAssertEqual(api.handle(request("DELETE", path, headers: ["origin": Self.own])).status, 200)
    }

    func testHideTakesOnlyABooleanAndNamesWhatIsWrong() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let create = api.handle(request("POST", "/profiles/default/credentials/create",
                                        #"{"origin": "https://login.example.com", "options": \#(creationOptionsJSON(algorithms: [-7]))}"#))
        let path = "/profiles/default/passkeys/" + (try json(create)["id"]?.stringValue ?? "")
        for body in ["{}", #"{"hidden": "yes"}"#, #"{"hidden": true, "x": 1}"#, "[]", "{nope"] {
            let response = api.handle(request("PATCH", path, body))
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(try json(response)["error"]?["name"], "TypeError", body)
        }
        XCTAssertEqual(api.handle(request("PATCH", "/profiles/default/passkeys/AAAAAAAAAAAAAAAAAAAAAA", #"{"hidden": true}"#)).status, 404)
        XCTAssertEqual(api.handle(request("PATCH", "/profiles/default/passkeys/not+base64", #"{"hidden": true}"#)).status, 400)
    }

    func testOnlyAFirstPartyCallerMayRevealPasswords() throws {
        let (api, _d) = try makeAPI(origins: [Self.page])
        _ = _d
        XCTAssertEqual(api.handle(request("POST", "/profiles/default/passwords", #"{"origin": "\#(Self.page)", "username": "a", "password": "s3cret"}"#)).status, 201)
        func list(_ origin: String?, reveal: Bool) -> HTTPResponse {
            var headers = ["host": "127.0.0.1:8765"]
            if let origin { headers["origin"] = origin }
            return api.handle(HTTPRequest(method: "GET", path: "/profiles/default/passwords", query: reveal ? ["reveal": "true"] : [:],
                                          headers: headers, body: [], bodyTooLarge: false))
        }
        XCTAssertEqual(try json(list(Self.own, reveal: true))["passwords"]?.arrayValue?.first?["password"], "s3cret")
        XCTAssertNil(try json(list(Self.own, reveal: false))["passwords"]?.arrayValue?.first?["password"])
        let page = list(Self.page, reveal: true)
        XCTAssertEqual(page.status, 403)
        XCTAssertEqual(try json(page)["error"]?["name"], "SecurityError")
        XCTAssertNil(try json(list(Self.page, reveal: false))["passwords"]?.arrayValue?.first?["password"])
    }

    func testAScenarioRunsAcrossPacksAndTooManyColumnsAreRefused() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scenario = try String(contentsOf: root.appendingPathComponent("scenarios/upgrade-with-opt-out.json"), encoding: .utf8)
        let run = api.handle(request("POST", "/scenarios/run", #"{"scenario": \#(scenario), "providers": "gpm,bitwarden"}"#))
        XCTAssertEqual(run.status, 200, String(decoding: run.body, as: UTF8.self))
        let matrix = try json(run)
        XCTAssertEqual(matrix["scenario"], "upgrade-with-opt-out")
        XCTAssertEqual(matrix["providers"]?.arrayValue?.compactMap { $0["pack"]?.stringValue }, ["gpm", "bitwarden"])
        XCTAssertFalse(matrix["steps"]?.arrayValue?.isEmpty ?? true)
        let many = Array(repeating: "gpm", count: 33).joined(separator: ",")
        XCTAssertEqual(api.handle(request("POST", "/scenarios/run", #"{"scenario": \#(scenario), "providers": "\#(many)"}"#)).status, 400)
        XCTAssertEqual(api.handle(request("POST", "/scenarios/run", #"{"scenario": {"format": "other"}}"#)).status, 400)
        XCTAssertEqual(api.handle(request("POST", "/scenarios/run", #"{"scenario": \#(scenario), "providers": "nope"}"#)).status, 422)
        XCTAssertEqual(api.handle(request("POST", "/scenarios/run", #"{"scenario": "text"}"#)).status, 400)
    }

    func testAScenarioRunOverTheLimitsOrOnceTheServerStopsIsRefusedByName() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        func run(steps: Int, times: Int) -> HTTPResponse {
            let step = #"{"do": "create", "times": \#(times)}"#
            let scenario = #"{"format": "credemu-scenario", "version": 1, "name": "x", "title": "x", "steps": [\#(Array(repeating: step, count: steps).joined(separator: ","))]}"#
            return api.handle(request("POST", "/scenarios/run", #"{"scenario": \#(scenario), "providers": "gpm,bitwarden"}"#))
        }
        for (steps, times) in [(101, 1), (11, 100)] {
            let refused = run(steps: steps, times: times)
            XCTAssertEqual(refused.status, 400)
            XCTAssertEqual(try json(refused)["error"]?["name"], "ScenarioTooLarge")
        }
        XCTAssertEqual(run(steps: 2, times: 2).status, 200)
        api.operations.endWaits()
        let stopping = run(steps: 2, times: 2)
        XCTAssertEqual(stopping.status, 503)
        XCTAssertEqual(try json(stopping)["error"]?["name"], "ServerStopping")
    }
}
