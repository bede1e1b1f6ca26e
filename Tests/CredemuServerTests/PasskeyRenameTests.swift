import CredemuEngine
import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuServer

/// `PATCH /profiles/{p}/passkeys/{id}` with `userName` / `displayName` (issue 24.2): the user's rename, one change a
/// request, every bad body a 400 naming what is wrong with the vault unchanged, another RP's passkey a page's 404.
final class PasskeyRenameTests: XCTestCase {
    static let page = "http://localhost:8000"

    func request(_ method: String, _ path: String, _ body: String = "", origin: String? = nil) -> HTTPRequest {
        var headers = ["host": "127.0.0.1:8765"]
        if method != "GET" && !body.isEmpty { headers["content-type"] = "application/json" }
        if let origin { headers["origin"] = origin }
        return HTTPRequest(method: method, path: path, query: [:], headers: headers, body: Array(body.utf8), bodyTooLarge: false)
    }

    func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    func testARenameIsTheUsersEditAndBadBodiesChangeNothing() throws {
        let (vault, directory) = try makeTestVault()
        _ = directory
        let api = try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init(token: nil, allowedOrigins: [Self.page]))
        let create = api.handle(request("POST", "/profiles/default/credentials/create",
                                        #"{"origin": "https://login.example.com", "options": \#(creationOptionsJSON(algorithms: [-7]))}"#))
        XCTAssertEqual(create.status, 200)
        let path = "/profiles/default/passkeys/" + (try json(create)["id"]?.stringValue ?? "")
        let before = try json(api.handle(request("GET", path)))

        let long = String(repeating: "a", count: 1025)
        for body in ["{}", #"{"userName": ""}"#, #"{"userName": "\#(long)"}"#, #"{"displayName": "\#(long)"}"#, #"{"userName": "a\u0000b"}"#,
                     #"{"userName": 7}"#, #"{"hidden": true, "userName": "x"}"#, #"{"userName": "x", "name": "y"}"#] {
            let response = api.handle(request("PATCH", path, body))
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(try json(response)["error"]?["name"], "TypeError", body)
        }
        // Unicode's control category, not only C0 and DEL (issue 31.9): NEL, the C1 range's ends, in either name.
        for body in [#"{"userName": "a\u0085b"}"#, #"{"userName": "\u0080"}"#, #"{"displayName": "x\u009fy"}"#, #"{"displayName": "\u007f"}"#] {
            let response = api.handle(request("PATCH", path, body))
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(try json(response)["error"]?["name"], "TypeError", body)
        }
        XCTAssertEqual(api.handle(request("PATCH", "/profiles/default/passkeys/AAAAAAAAAAAAAAAAAAAAAA", #"{"userName": "x"}"#)).status, 404)
        XCTAssertEqual(api.handle(request("PATCH", path, #"{"userName": "x"}"#, origin: Self.page)).status, 404, "another RP's passkey is not the page's")
        XCTAssertEqual(try json(api.handle(request("GET", path))), before, "nothing changed")

        let renamed = api.handle(request("PATCH", path, #"{"userName": "work alice", "displayName": "Alice at work"}"#))
        XCTAssertEqual(renamed.status, 200, String(decoding: renamed.body, as: UTF8.self))
        XCTAssertEqual(try json(renamed)["userName"], "work alice")
        XCTAssertEqual(try json(renamed)["displayName"], "Alice at work")
        XCTAssertEqual(try json(renamed)["editedByUser"], true)
        XCTAssertEqual(try json(api.handle(request("PATCH", path, #"{"displayName": "A"}"#)))["userName"], "work alice", "a name left out is kept")
        let events = try json(api.handle(HTTPRequest(method: "GET", path: "/profiles/default/events", query: ["kind": "vault"],
                                                     headers: ["host": "127.0.0.1:8765"], body: [], bodyTooLarge: false)))["events"]?.arrayValue ?? []
        XCTAssertEqual(events.map { $0["outcome"]?.stringValue }, ["renamed", "renamed"])
    }
}
