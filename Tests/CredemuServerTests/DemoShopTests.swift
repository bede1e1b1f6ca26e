import CredemuEngine
import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuServer

/// The demo shop verifies what credemu answers as a real RP does: real ceremonies of a GPM profile, through the
/// API, then the shop's own checks, each tried with the input an attacker (or a broken provider) would send.
final class DemoShopTests: XCTestCase {
    var api: APIServer!
    var directory: TemporaryDirectory!
    let shop = DemoShop(port: 41234)

    override func setUpWithError() throws {
        let (vault, directory) = try makeTestVault()
        self.directory = directory
        api = try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init())
        XCTAssertEqual(try call("POST", "/profiles/default/passwords", ["origin": .string(shop.origin), "username": .string(DemoShop.username),
                                                                        "password": .string(shop.password)]).status, 201)
    }

    func call(_ method: String, _ path: String, _ body: [String: JSONValue]) throws -> (status: Int, body: JSONValue) {
        let bytes = Array(JSONValue.object(body.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }).serialized().utf8)
        let response = api.handle(HTTPRequest(method: method, path: path, query: [:], headers: ["host": "127.0.0.1:8765", "content-type": "application/json"],
                                              body: bytes, bodyTooLarge: false))
        return (response.status, try JSONValue.parse(response.body))
    }

    /// A password sign-in, then the browser's create for the shop's options (conditional or modal), as toJSON() gives it.
    func registration(conditional: Bool, origin: String? = nil) throws -> (session: String, credential: JSONValue) {
        let (session, _) = try shop.signIn(username: DemoShop.username, password: shop.password)
        let options = try shop.creationOptions(session: session, conditional: conditional)
        var body: [String: JSONValue] = ["origin": .string(origin ?? shop.origin), "options": options]
        if conditional {
            XCTAssertEqual(try call("POST", "/profiles/default/autofill", ["origin": .string(shop.origin), "submit": true]).status, 200)
            body["mediation"] = "conditional"
        }
        let (status, credential) = try call("POST", "/profiles/default/credentials/create", body)
        XCTAssertEqual(status, 200, credential.serialized())
        return (session, credential)
    }

    func assertRefused(_ name: String, _ work: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try work(), file: file, line: line) { error in
            XCTAssertEqual((error as? DemoError)?.name, name, "\(error)", file: file, line: line)
        }
    }

    func testTheShopAcceptsTheAutomaticUpgradesUPAndUVZeroAndSignsInWithThePasskey() throws {
        let (session, credential) = try registration(conditional: true)
        let (passkey, conditional) = try shop.register(session: session, credential)
        XCTAssertTrue(conditional)
        XCTAssertFalse(passkey.flags.contains(.userPresent))
        XCTAssertFalse(passkey.flags.contains(.userVerified))

        let options = shop.requestOptions()
        let (status, assertion) = try call("POST", "/profiles/default/credentials/get", ["origin": .string(shop.origin), "options": options])
        XCTAssertEqual(status, 200, assertion.serialized())
        let (signedIn, used, _) = try shop.signIn(assertion)
        XCTAssertEqual(used.id, passkey.id)
        XCTAssertEqual(try shop.account(signedIn)["signedInWith"]?.stringValue, "passkey")
        // The same assertion again answers no challenge: each is good once.
        assertRefused("UnknownChallenge") { _ = try self.shop.signIn(assertion) }
    }

    func testARegistrationWithUPZeroIsRefusedWhereTheShopAskedForAModalCreate() throws {
        let (session, credential) = try registration(conditional: true)
        // The shop asked for a modal create meanwhile: the silent registration answers the conditional challenge,
        // which the modal one superseded.
        _ = try shop.creationOptions(session: session, conditional: false)
        assertRefused("UnknownChallenge") { _ = try self.shop.register(session: session, credential) }
        // A modal create's challenge answered by a registration without user presence (UP flipped to 0).
        let options = try shop.creationOptions(session: session, conditional: false)
        let (status, modal) = try call("POST", "/profiles/default/credentials/create", ["origin": .string(shop.origin), "options": options])
        XCTAssertEqual(status, 200, modal.serialized())
        assertRefused("UserNotPresent") { _ = try self.shop.register(session: session, try Self.withoutUserPresence(modal)) }
    }

    func testARegistrationMadeForAnotherOriginOrAfterSignOutChangesNothing() throws {
        let (session, credential) = try registration(conditional: false, origin: "http://localhost:9")
        assertRefused("WrongOrigin") { _ = try self.shop.register(session: session, credential) }
        let (other, good) = try registration(conditional: false)
        shop.signOut(other)
        assertRefused("SignedOut") { _ = try self.shop.register(session: other, good) }
        let (fresh, _) = try shop.signIn(username: DemoShop.username, password: shop.password)
        XCTAssertEqual(try shop.account(fresh)["passkeys"]?.arrayValue?.count, 0)
    }

    func testAnAssertionWhoseSignatureOrRPIDHashIsForgedIsRefused() throws {
        let (session, credential) = try registration(conditional: false)
        _ = try shop.register(session: session, credential)
        for (name, forge) in [("BadSignature", { (a: JSONValue) in Self.editing(a, "signature") { $0[$0.count - 3] ^= 1 } }),
                              ("WrongRPIDHash", { (a: JSONValue) in Self.editing(a, "authenticatorData") { $0[0] ^= 1 } })] {
            let (_, assertion) = try call("POST", "/profiles/default/credentials/get", ["origin": .string(shop.origin), "options": shop.requestOptions()])
            assertRefused(name) { _ = try self.shop.signIn(forge(assertion)) }
        }
    }

    func testAWrongPasswordOpensNoSessionAndSessionsAreBounded() throws {
        assertRefused("WrongPassword") { _ = try self.shop.signIn(username: DemoShop.username, password: self.shop.password + "x") }
        let (first, _) = try shop.signIn(username: DemoShop.username, password: shop.password)
        for _ in 0..<DemoShop.sessionLimit { _ = try shop.signIn(username: DemoShop.username, password: shop.password) }
        assertRefused("SignedOut") { _ = try self.shop.account(first) }
    }

    func testTheShopsDoorRefusesOtherOriginsOtherMediaTypesAndOversizedBodies() throws {
        let hosts = HostCheck(bindAddress: "127.0.0.1", allowed: [])
        let wiring = DemoShop.Wiring(api: "http://127.0.0.1:8765", profile: "default")
        func post(_ headers: [String: String], _ body: String, tooLarge: Bool = false) throws -> (Int, String?) {
            let response = shop.handle(HTTPRequest(method: "POST", path: "/api/signin", query: [:],
                                                   headers: ["host": "localhost:41234"].merging(headers) { $1 }, body: Array(body.utf8), bodyTooLarge: tooLarge),
                                       hosts: hosts, wiring: wiring)
            return (response.status, try JSONValue.parse(response.body)["error"]?["name"]?.stringValue)
        }
        let own = ["origin": shop.origin, "content-type": "application/json"]
        XCTAssertEqual(try post(["origin": "https://evil.example", "content-type": "application/json"], "{}").1, "CrossOriginRequest")
        XCTAssertEqual(try post(["origin": shop.origin, "content-type": "text/plain"], "{}").1, "UnsupportedMediaType")
        XCTAssertEqual(try post(own, "", tooLarge: true).1, "PayloadTooLarge")
        XCTAssertEqual(try post(own, "[[[[[[[[[[1]]]]]]]]]]").1, "BadJSON")
        XCTAssertEqual(try post(own, #"{"username": 1}"#).1, "BadRequest")
        XCTAssertEqual(try post(["host": "rebound.example"].merging(own) { $1 }, "{}").0, 403)
        let page = shop.handle(HTTPRequest(method: "GET", path: "/", query: [:], headers: ["host": "localhost:41234"], body: [], bodyTooLarge: false),
                               hosts: hosts, wiring: wiring)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(String(decoding: page.body, as: UTF8.self).contains(#"<script src="http://127.0.0.1:8765/shim.js?profile=default"></script>"#))
        XCTAssertTrue(page.headers.contains { $0 == ("Content-Security-Policy", DemoShop.policy(api: wiring.api)) })
    }

    func testPOSTDemoIsRefusedByNameWhereTheServerDoesNotOfferIt() throws {
        let (status, body) = try call("POST", "/demo", [:])
        XCTAssertEqual(status, 409)
        XCTAssertEqual(body["error"]?["name"]?.stringValue, "DemoUnavailable")
        let tokened = try APIServer(vault: try makeTestVault().0, registry: try PolicyRegistry(), configuration: .init(token: "t"))
        tokened.offerDemo(host: "127.0.0.1", apiPort: 8765, preferredPort: 0)
        XCTAssertEqual(tokened.demo.json["available"], false)
        api.offerDemo(host: "10.0.0.1", apiPort: 8765, preferredPort: 0)
        XCTAssertEqual(api.demo.json["available"], false)
    }

    // MARK: forging

    static func editing(_ credential: JSONValue, _ field: String, _ change: (inout [UInt8]) -> Void) -> JSONValue {
        var bytes = Base64URL.decode(credential["response"]?[field]?.stringValue ?? "") ?? []
        change(&bytes)
        return credential.setting("response", (credential["response"] ?? .null).setting(field, .string(Base64URL.encode(bytes))))
    }

    /// The registration with its authenticator data's UP bit cleared (attestation "none" signs nothing over it).
    static func withoutUserPresence(_ credential: JSONValue) throws -> JSONValue {
        let object = try CBOR.decode(Base64URL.decode(credential["response"]?["attestationObject"]?.stringValue ?? "") ?? [])
        var authData = object["authData"]?.bytesValue ?? []
        authData[32] &= ~AuthenticatorData.Flags.userPresent.rawValue
        let edited = CBOR.map((object.mapValue ?? []).map { $0.0 == .text("authData") ? ($0.0, .bytes(authData)) : $0 })
        return credential.setting("response", (credential["response"] ?? .null).setting("attestationObject", .string(Base64URL.encode(edited.encoded()))))
    }
}
