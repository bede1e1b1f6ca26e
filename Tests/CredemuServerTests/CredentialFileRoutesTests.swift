import CredemuEngine
import CredemuOperations
import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import CredemuServer

/// A profile's credentials as a file over HTTP (`GET /profiles/{p}/export`, `POST /profiles/{p}/import`): the CLI's
/// `vault export/import --format` through the same operations, the operator's alone, a secret only when asked for,
/// every refusal a named 4xx with the vault unchanged; real keys and real SQLite.
final class CredentialFileRoutesTests: XCTestCase {
    static let page = "http://localhost:8000"

    func makeAPI() throws -> (APIServer, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        return (try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init(token: nil, allowedOrigins: [Self.page])), directory)
    }

    func request(_ method: String, _ path: String, _ body: String = "", query: [String: String] = [:], origin: String? = nil,
                 contentType: String? = "application/json") -> HTTPRequest {
        var headers = ["host": "127.0.0.1:8765"]
        if method != "GET", let contentType { headers["content-type"] = contentType }
        if let origin { headers["origin"] = origin }
        return HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array(body.utf8), bodyTooLarge: false)
    }

    func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }
    func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    /// A passkey made by Playwright's `credentials.create` route, and the profile's passkeys as the API lists them.
    func seed(_ api: APIServer, profile: String = "default") throws -> String {
        let made = api.handle(request("POST", "/profiles/\(profile)/credentials", #"{"rpId": "example.com"}"#))
        XCTAssertEqual(made.status, 201, text(made))
        return try json(made)["id"]?.stringValue ?? ""
    }

    func passkeys(_ api: APIServer, _ profile: String = "default") throws -> JSONValue {
        try json(api.handle(request("GET", "/profiles/\(profile)/passkeys")))
    }

    func export(_ api: APIServer, _ format: String, secrets: Bool?, profile: String = "default") -> HTTPResponse {
        var query = ["format": format]
        if let secrets { query["includeSecrets"] = secrets ? "true" : "false" }
        return api.handle(request("GET", "/profiles/\(profile)/export", query: query))
    }

    func importing(_ api: APIServer, _ body: JSONValue, profile: String = "default") -> HTTPResponse {
        api.handle(request("POST", "/profiles/\(profile)/import", body.serialized()))
    }

    func testACXFDocumentLeavesOutItsSecretsUnlessAskedAndMovesAPasskeyToAnotherVaultThatSignsIn() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let id = try seed(api)
        let plain = export(api, "cxf", secrets: nil)
        XCTAssertEqual(plain.status, 200, text(plain))
        XCTAssertEqual(try json(plain)["includesSecrets"], false)
        XCTAssertFalse(text(plain).contains("\"key\""), "no private key without includeSecrets: \(text(plain))")
        let full = export(api, "cxf", secrets: true)
        XCTAssertEqual(full.status, 200, text(full))
        let document = try XCTUnwrap(json(full)["document"])
        XCTAssertTrue(document.serialized().contains("\"key\""))

        let (other, _e) = try makeAPI()
        _ = _e
        XCTAssertEqual(other.handle(request("POST", "/profiles", #"{"name": "mac", "pack": "apple"}"#)).status, 201)
        let imported = importing(other, .object([("format", "cxf"), ("document", document)]), profile: "mac")
        XCTAssertEqual(imported.status, 200, text(imported))
        XCTAssertEqual(try json(imported)["imported"]?["passkeys"], 1)
        XCTAssertEqual(try passkeys(other, "mac")["passkeys"]?.arrayValue?.first?["credentialId"]?.stringValue, id)
        let get = other.handle(request("POST", "/profiles/mac/credentials/get",
                                       #"{"origin": "https://login.example.com", "options": \#(requestOptionsJSON(challenge: Array(repeating: 5, count: 32)))}"#))
        XCTAssertEqual(get.status, 200, text(get))
        XCTAssertEqual(try json(get)["id"]?.stringValue, id, "the imported passkey signs in with its credential ID")
        XCTAssertEqual(importing(other, .object([("format", "cxf"), ("document", document)]), profile: "mac").status, 409,
                       "a credential ID the profile holds is a conflict")
    }

    func testAPlaywrightOrWebDriverFileIsRefusedWithoutIncludeSecretsAndRoundTrips() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let id = try seed(api)
        for format in ["playwright", "webdriver"] {
            for secrets in [nil, false] as [Bool?] {
                let refused = export(api, format, secrets: secrets)
                XCTAssertEqual(refused.status, 400, text(refused))
                XCTAssertEqual(try json(refused)["error"]?["name"], "TypeError")
                XCTAssertTrue(text(refused).contains("includeSecrets"), text(refused))
            }
            let file = export(api, format, secrets: true)
            XCTAssertEqual(file.status, 200, text(file))
            let list = try XCTUnwrap(json(file)["document"])
            XCTAssertEqual(list.arrayValue?.count, 1)
            XCTAssertNotNil(list.arrayValue?.first?["privateKey"]?.stringValue)
            let (other, _e) = try makeAPI()
            _ = _e
            let imported = importing(other, .object([("format", .string(format)), ("document", list)]))
            XCTAssertEqual(imported.status, 200, text(imported))
            XCTAssertEqual(try passkeys(other)["passkeys"]?.arrayValue?.first?["credentialId"]?.stringValue, id)
        }
    }

    func testEveryRefusedImportIsANamedErrorAndLeavesTheVaultUnchanged() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        _ = try seed(api)
        let before = try passkeys(api)
        // The profile's own document with its key cut short: the import check refuses it by the member's path.
        let document = try XCTUnwrap(json(export(api, "cxf", secrets: true))["document"])
        let key = try XCTUnwrap(document["accounts"]?.arrayValue?.first?["items"]?.arrayValue?.first?["credentials"]?.arrayValue?.first?["key"]?.stringValue)
        let badKey = try JSONValue.parse(Array(document.serialized().replacingOccurrences(of: key, with: String(key.dropLast(8))).utf8))
        let cases: [(String, JSONValue, Int, String)] = [
            ("no format", .object([("document", .object([]))]), 400, "body.format"),
            ("an unknown format", .object([("format", "fixture"), ("document", .object([]))]), 400, "body.format must be one of playwright, webdriver, cxf"),
            ("no document", .object([("format", "cxf")]), 400, "body.document is required"),
            ("an unknown member", .object([("format", "cxf"), ("document", .object([])), ("bogus", 1)]), 400, "bogus"),
            ("a CXF key that is not PKCS#8", .object([("format", "cxf"), ("document", badKey)]), 400, "cxf.accounts[0].items[0].credentials[0].key"),
            ("a Playwright list of one thing", .object([("format", "playwright"), ("document", .array([.number(1)]))]), 400, "file.credentials[0]"),
        ]
        for (what, body, status, named) in cases {
            let refused = importing(api, body)
            XCTAssertEqual(refused.status, status, "\(what): \(text(refused))")
            XCTAssertTrue(text(refused).contains(named), "\(what): \(text(refused))")
            XCTAssertEqual(try passkeys(api), before, "\(what) left the vault unchanged")
        }
        let plain = importing(api, .object([("format", "cxf"), ("document", .object([]))]))
        XCTAssertEqual(plain.status, 400)
        let notJSON = api.handle(request("POST", "/profiles/default/import", #"{"format": "cxf", "document": {}}"#, contentType: "text/plain"))
        XCTAssertEqual(notJSON.status, 415, text(notJSON))
        XCTAssertEqual(export(api, "fixture", secrets: true).status, 400)
        XCTAssertEqual(export(api, "cxf", secrets: true, profile: "nobody").status, 404)
        XCTAssertEqual(try passkeys(api), before)
    }

    func testAPageReachesNeitherRouteEvenForItsOwnOrigin() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        _ = try seed(api)
        let before = try passkeys(api)
        let out = api.handle(request("GET", "/profiles/default/export", query: ["format": "cxf", "includeSecrets": "true"], origin: Self.page))
        XCTAssertEqual(out.status, 403, text(out))
        XCTAssertFalse(text(out).contains("\"key\""))
        let document = try json(export(api, "cxf", secrets: true))["document"] ?? .null
        let into = api.handle(request("POST", "/profiles/default/import", JSONValue.object([("format", "cxf"), ("document", document)]).serialized(), origin: Self.page))
        XCTAssertEqual(into.status, 403, text(into))
        XCTAssertEqual(try passkeys(api), before)
    }
}
