import CredemuEngine
import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuServer

/// The device routes in-process: the answering account in `X-Credemu-Provider`, and which device requests may wait.
final class DeviceRoutesTests: XCTestCase {
    func makeAPI() throws -> (APIServer, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        return (try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init(token: nil, allowedOrigins: [])), directory)
    }

    func request(_ method: String, _ path: String, _ body: String = "") -> HTTPRequest {
        var headers = ["host": "127.0.0.1:8765"]
        if method != "GET" { headers["content-type"] = "application/json" }
        return HTTPRequest(method: method, path: path, query: [:], headers: headers, body: Array(body.utf8), bodyTooLarge: false)
    }

    func header(_ response: HTTPResponse, _ name: String) -> String? { response.headers.first { $0.0 == name }?.1 }

    func testADeviceCreateNamesTheAccountThatAnsweredIt() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        XCTAssertEqual(api.handle(request("POST", "/profiles", #"{"name": "bw", "pack": "bitwarden"}"#)).status, 201)
        let made = api.handle(request("POST", "/devices", #"{"name": "laptop", "providers": ["default", "bw"]}"#))
        XCTAssertEqual(made.status, 201, String(decoding: made.body, as: UTF8.self))
        let create = api.handle(request("POST", "/devices/laptop/credentials/create",
                                        #"{"origin": "https://login.example.com", "options": \#(creationOptionsJSON(algorithms: [-7]))}"#))
        XCTAssertEqual(create.status, 200, String(decoding: create.body, as: UTF8.self))
        XCTAssertEqual(header(create, "X-Credemu-Provider"), "bw")
        let signal = api.handle(request("POST", "/devices/laptop/signals/unknown",
                                        #"{"origin": "https://login.example.com", "options": {"rpId": "example.com", "credentialId": "AAAA"}}"#))
        XCTAssertEqual(signal.status, 200)
        XCTAssertEqual(header(signal, "X-Credemu-Provider"), "default", "signals reach the browser's own manager only")
        XCTAssertEqual(api.handle(request("DELETE", "/profiles/bw")).status, 409)
        XCTAssertEqual(api.handle(request("POST", "/devices/ghost/credentials/get", #"{"origin": "https://login.example.com", "options": {}}"#)).status, 404)
    }

    func testADeviceConditionalGetOrAHeldAccountMayWait() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        XCTAssertEqual(api.handle(request("POST", "/devices", #"{"name": "phone", "platform": "chrome-android", "providers": ["default"]}"#)).status, 201)
        XCTAssertTrue(api.mayBlock(request("POST", "/devices/phone/credentials/get", #"{"mediation": "conditional"}"#)))
        let modal = request("POST", "/devices/phone/credentials/create", "{}")
        XCTAssertFalse(api.mayBlock(modal))
        XCTAssertEqual(api.handle(request("POST", "/profiles/default/holds", "{}")).status, 201)
        XCTAssertTrue(api.mayBlock(modal), "a hold on one of the device's accounts")
        XCTAssertFalse(api.mayBlock(request("POST", "/devices/phone/signals/unknown", "{}")))
        XCTAssertFalse(api.mayBlock(request("POST", "/devices/ghost/credentials/create", "{}")))
    }
}
