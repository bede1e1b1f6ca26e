import CredemuEngine
import CredemuOperations
import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import CredemuServer

/// Playwright's `BrowserContext.credentials` on a profile (issue 33.1): `POST` and `GET /profiles/{p}/credentials`,
/// the operator's alone, every bad body a named 4xx with the vault unchanged, real keys and real SQLite.
final class PlaywrightCredentialRoutesTests: XCTestCase {
    static let page = "http://localhost:8000"
    static let playwrightKeys: Set<String> = ["id", "rpId", "userHandle", "privateKey", "publicKey", "signCount"]

    func makeAPI() throws -> (APIServer, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        return (try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init(token: nil, allowedOrigins: [Self.page])), directory)
    }

    func request(_ method: String, _ path: String, _ body: String = "", query: [String: String] = [:], origin: String? = nil) -> HTTPRequest {
        var headers = ["host": "127.0.0.1:8765"]
        if method != "GET" { headers["content-type"] = "application/json" }
        if let origin { headers["origin"] = origin }
        return HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array(body.utf8), bodyTooLarge: false)
    }

    func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    /// A get's answer, read as an RP reads the JSON a page posts.
    func assertion(_ response: HTTPResponse) throws -> AuthenticationResponse {
        let answer = try json(response)
        func bytes(_ value: JSONValue?) throws -> [UInt8] { try XCTUnwrap(Base64URL.decode(value?.stringValue ?? "")) }
        return AuthenticationResponse(credentialID: try bytes(answer["rawId"]), clientDataJSON: try bytes(answer["response"]?["clientDataJSON"]),
                                      authenticatorData: try bytes(answer["response"]?["authenticatorData"]),
                                      signature: try bytes(answer["response"]?["signature"]), userHandle: nil)
    }

    func credentials(_ api: APIServer, _ profile: String = "default", query: [String: String] = [:]) throws -> [JSONValue] {
        let response = api.handle(request("GET", "/profiles/\(profile)/credentials", query: query))
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
        return try json(response)["credentials"]?.arrayValue ?? []
    }

    func create(_ api: APIServer, _ body: JSONValue, profile: String = "default") throws -> HTTPResponse {
        api.handle(request("POST", "/profiles/\(profile)/credentials", body.serialized()))
    }

    /// Playwright's four import members of a real key.
    func imported(_ key: any SigningKey, rpID: String = "example.com", id: [UInt8] = Array(repeating: 9, count: 16),
                  signCount: Int = 0) -> [(String, JSONValue)] {
        [("rpId", .string(rpID)), ("id", .string(Base64URL.encode(id))), ("userHandle", .string(Base64URL.encode(Array("user-9".utf8)))),
         ("privateKey", .string(Base64URL.encode(key.pkcs8))), ("publicKey", .string(Base64URL.encode(key.subjectPublicKeyInfo))),
         ("signCount", .number(Double(signCount)))]
    }

    func testOnlyRPIDMakesAFreshP256PasskeyInPlaywrightsSixMembers() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let response = try create(api, .object([("rpId", "example.com")]))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        let made = try json(response)
        XCTAssertEqual(Set((made.objectValue ?? []).map(\.0)), Self.playwrightKeys)
        XCTAssertEqual(Base64URL.decode(made["id"]?.stringValue ?? "")?.count, 16)
        XCTAssertEqual(Base64URL.decode(made["userHandle"]?.stringValue ?? "")?.count, 16)
        XCTAssertEqual(made["signCount"], 0)
        let key = try SigningKeys.importPKCS8(XCTUnwrap(Base64URL.decode(made["privateKey"]?.stringValue ?? "")))
        XCTAssertEqual(key.algorithm, .es256)
        XCTAssertEqual(made["publicKey"]?.stringValue, Base64URL.encode(key.subjectPublicKeyInfo), "the SPKI is the private key's")
        XCTAssertEqual(try credentials(api), [made], "get gives back what create made, private key and all")
        let listing = try json(api.handle(request("GET", "/profiles/default/passkeys/" + (made["id"]?.stringValue ?? ""))))
        XCTAssertEqual(listing["discoverable"], true)
        XCTAssertEqual(listing["userName"], made["userHandle"], "the user name defaults to the user handle in base64url")
    }

    func testAllFourImportAKnownCredentialThatSignsAsItsKey() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let key = try SigningKeys.generate(.es256)
        let response = try create(api, .object(imported(key) + [("userName", "alice")]))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        XCTAssertEqual(try json(response)["privateKey"]?.stringValue, Base64URL.encode(key.pkcs8))
        let challenge = Array(repeating: UInt8(5), count: 32)
        let get = api.handle(request("POST", "/profiles/default/credentials/get",
                                     #"{"origin": "https://login.example.com", "options": \#(requestOptionsJSON(challenge: challenge))}"#))
        XCTAssertEqual(get.status, 200, String(decoding: get.body, as: UTF8.self))
        let answer = try assertion(get)
        XCTAssertEqual(answer.credentialID, Array(repeating: 9, count: 16))
        _ = try RPCheck.assertion(answer, publicKey: key.publicKey, challenge: challenge, origin: "https://login.example.com", rpID: "example.com")
    }

    func testEveryBadBodyIsANamed400AndLeavesTheVaultUnchanged() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let key = try SigningKeys.generate(.es256), other = try SigningKeys.generate(.es256)
        let full = imported(key)
        func without(_ name: String) -> JSONValue { .object(full.filter { $0.0 != name }) }
        func with(_ name: String, _ value: JSONValue) -> JSONValue { .object(full.map { $0.0 == name ? (name, value) : $0 }) }
        let bodies: [(JSONValue, String)] = [
            (.object([]), "rpId"),
            (.array([]), "must be an object"),
            (.object([("rpId", "Example.COM")]), "rpId"),
            (.object([("rpId", "127.0.0.1")]), "rpId"),
            (.object([("rpId", "example.com"), ("id", "AAAA")]), "userHandle"),
            (without("publicKey"), "publicKey"),
            (without("privateKey"), "privateKey"),
            (without("id"), "id"),
            (without("userHandle"), "userHandle"),
            (with("publicKey", .string(Base64URL.encode(other.subjectPublicKeyInfo))), "not the private key's public key"),
            (with("privateKey", .string(Base64URL.encode(try HostileKeys.p256WithAnotherKeysPoint()))), "privateKey"),
            (with("privateKey", "not base64url!"), "privateKey"),
            (with("id", .string(Base64URL.encode(Array(repeating: 1, count: 1024)))), "id"),
            (with("userHandle", .string(Base64URL.encode(Array(repeating: 1, count: 65)))), "userHandle"),
            (with("signCount", -1), "signCount"),
            (with("signCount", 4_294_967_296), "signCount"),
            (with("signCount", .number(1.5)), "signCount"),
            (with("signCount", "3"), "signCount"),
            (.object(full + [("isResident", true)]), "isResident"),
            (.object(full + [("userName", "")]), "userName"),
            (.object(full + [("displayName", "a\u{85}b")]), "displayName"),
        ]
        for (body, why) in bodies {
            let response = try create(api, body)
            XCTAssertEqual(response.status, 400, "\(body.serialized()): \(String(decoding: response.body, as: UTF8.self))")
            XCTAssertEqual(try json(response)["error"]?["name"], "TypeError", body.serialized())
            XCTAssertTrue(try json(response)["error"]?["message"]?.stringValue?.contains(why) ?? false,
                          "\(why) in \(String(decoding: response.body, as: UTF8.self))")
        }
        XCTAssertEqual(api.handle(request("POST", "/profiles/default/credentials", "{not json")).status, 400)
        XCTAssertEqual(try create(api, .object([("rpId", "example.com")]), profile: "nobody").status, 404)
        XCTAssertEqual(try credentials(api), [], "no refused body stored anything")
        XCTAssertEqual(api.handle(request("GET", "/profiles/default/events", query: ["kind": "vault"])).body,
                       Array(#"{"events":[]}"#.utf8))
    }

    func testACredentialIDTheVaultHoldsIsA409AndTheFirstStays() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let key = try SigningKeys.generate(.es256)
        XCTAssertEqual(try create(api, .object(imported(key))).status, 201)
        let before = try credentials(api)
        let again = try create(api, .object(imported(try SigningKeys.generate(.es256))))
        XCTAssertEqual(again.status, 409)
        XCTAssertEqual(try json(again)["error"]?["name"], "Conflict")
        XCTAssertEqual(try credentials(api), before)
    }

    func testAPageCannotReachEitherRoute() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let post = api.handle(request("POST", "/profiles/default/credentials", #"{"rpId": "localhost"}"#, origin: Self.page))
        XCTAssertEqual(post.status, 403)
        XCTAssertEqual(api.handle(request("GET", "/profiles/default/credentials", origin: Self.page)).status, 403)
        XCTAssertEqual(try credentials(api), [])
    }

    func testGetFiltersByRPIDAndIDInCreationOrder() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        var made: [JSONValue] = []
        for rp in ["a.example", "b.example", "a.example"] {
            made.append(try json(try create(api, .object([("rpId", .string(rp))]))))
        }
        XCTAssertEqual(Set(try credentials(api).map { $0["id"]?.stringValue ?? "" }), Set(made.map { $0["id"]?.stringValue ?? "" }))
        XCTAssertEqual(Set(try credentials(api, query: ["rpId": "a.example"]).map { $0["id"]?.stringValue ?? "" }),
                       [made[0]["id"]?.stringValue ?? "", made[2]["id"]?.stringValue ?? ""])
        XCTAssertEqual(try credentials(api, query: ["id": made[1]["id"]?.stringValue ?? ""]), [made[1]])
        XCTAssertEqual(try credentials(api, query: ["id": made[1]["id"]?.stringValue ?? "", "rpId": "a.example"]), [])
        XCTAssertEqual(try credentials(api, query: ["rpId": "c.example"]), [])
        let bad = api.handle(request("GET", "/profiles/default/credentials", query: ["id": "%%"]))
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(api.handle(request("GET", "/profiles/nobody/credentials")).status, 404)
        // Playwright's delete(id) is the passkey route.
        XCTAssertEqual(api.handle(request("DELETE", "/profiles/default/passkeys/" + (made[1]["id"]?.stringValue ?? ""))).status, 200)
        XCTAssertEqual(try credentials(api).count, 2)
    }

    /// The point of answering Playwright's surface with a pack: GPM's counter stays zero, a security key's counts.
    func testAGPMProfilesCounterStaysZeroWhereASecurityKeysIncrements() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        XCTAssertEqual(api.handle(request("POST", "/profiles", #"{"name": "gpm1", "pack": "gpm"}"#)).status, 201)
        XCTAssertEqual(api.handle(request("POST", "/profiles", #"{"name": "key1", "pack": "security-key"}"#)).status, 201)
        for (profile, expected) in [("gpm1", UInt32(0)), ("key1", UInt32(8))] {
            let key = try SigningKeys.generate(.es256)
            let made = try create(api, .object(imported(key, id: Array(profile.utf8) + Array(repeating: 1, count: 12), signCount: 7)), profile: profile)
            XCTAssertEqual(made.status, 201, String(decoding: made.body, as: UTF8.self))
            XCTAssertEqual(try json(made)["signCount"], .number(Double(profile == "gpm1" ? 0 : 7)))
            let get = api.handle(request("POST", "/profiles/\(profile)/credentials/get",
                                         #"{"origin": "https://login.example.com", "options": \#(requestOptionsJSON())}"#))
            XCTAssertEqual(get.status, 200, String(decoding: get.body, as: UTF8.self))
            let authData = try AuthenticatorData(bytes: try assertion(get).authenticatorData)
            XCTAssertEqual(authData.signCount, expected, profile)
            XCTAssertEqual(try credentials(api, profile)[0]["signCount"], .number(Double(expected)), profile)
        }
    }
}
