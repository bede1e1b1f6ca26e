import CredemuEngine
import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import CredemuServer

/// The API's routing, guards and error bodies, in-process (the pytest suite drives a real server over HTTP).
final class APIServerTests: XCTestCase {
    func makeAPI(token: String? = nil, origins: Set<String> = [], providers: String? = nil) throws -> (APIServer, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        let api = try APIServer(vault: vault, registry: try PolicyRegistry(directory: providers),
                                configuration: .init(token: token, allowedOrigins: origins))
        return (api, directory)
    }

    /// A request as a loopback client sends it: a loopback Host, and JSON for anything but GET.
    func request(_ method: String, _ path: String, _ body: String = "", headers: [String: String] = [:], tooLarge: Bool = false) -> HTTPRequest {
        var all = ["host": "127.0.0.1:8765"]
        if method != "GET" { all["content-type"] = "application/json" }
        all.merge(headers) { $1 }
        return HTTPRequest(method: method, path: path, query: [:], headers: all, body: Array(body.utf8), bodyTooLarge: tooLarge)
    }

    func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    /// A server waits between requests, so it makes its ES256 setups and keys meanwhile (SignAhead): a registration and
    /// an assertion through the routes take them.
    func testAServersCeremoniesTakeSetupsAndKeysMadeAhead() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let deadline = Date().addingTimeInterval(30)
        while SignAhead.counts.made < 2 * UInt(SignAhead.pool), Date() < deadline { usleep(2_000) }
        let before = SignAhead.counts
        let (create, get) = createThenGet(api)
        XCTAssertEqual(create.status, 200, String(decoding: create.body, as: UTF8.self))
        XCTAssertEqual(get.status, 200)
        XCTAssertGreaterThanOrEqual(SignAhead.counts.taken - before.taken, 2, "the key, and at least the assertion's setup")
    }

    func testUnknownRoutesAndMethods() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        XCTAssertEqual(api.handle(request("GET", "/nope")).status, 404)
        XCTAssertEqual(api.handle(request("DELETE", "/health")).status, 405)
        XCTAssertEqual(api.handle(request("GET", "/profiles/ghost")).status, 404)
        XCTAssertEqual(try json(api.handle(request("GET", "/health")))["status"], "ok")
    }

    func testBadJSONIsATypeErrorAndAnOversizedBodyIs413() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let bad = api.handle(request("POST", "/profiles/default/credentials/create", "{nope"))
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(try json(bad)["error"]?["name"], "TypeError")
        XCTAssertEqual(api.handle(request("POST", "/profiles", "{}", tooLarge: true)).status, 413)
    }

    /// An ES256 registration for the default profile, then an assertion with its credential, through the routes.
    func createThenGet(_ api: APIServer) -> (create: HTTPResponse, get: HTTPResponse) {
        let create = api.handle(request("POST", "/profiles/default/credentials/create",
                                        #"{"origin": "https://login.example.com", "options": \#(creationOptionsJSON(algorithms: [-7]))}"#))
        let id = (try? json(create)["id"]?.stringValue) ?? ""
        let get = api.handle(request("POST", "/profiles/default/credentials/get",
                                     #"{"origin": "https://login.example.com", "options": \#(requestOptionsJSON(allow: [Base64URL.decode(id) ?? []]))}"#))
        return (create, get)
    }

    func testCreateThenGetThroughTheRoutes() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (create, get) = createThenGet(api)
        XCTAssertEqual(create.status, 200, String(decoding: create.body, as: UTF8.self))
        let id = try json(create)["id"]?.stringValue ?? ""
        XCTAssertEqual(get.status, 200)
        XCTAssertEqual(try json(get)["id"]?.stringValue, id)
        let unsupported = api.handle(request("POST", "/profiles/default/credentials/create",
                                             #"{"origin": "https://login.example.com", "options": \#(creationOptionsJSON(algorithms: [-257]))}"#))
        XCTAssertEqual(unsupported.status, 422, "GPM (the default profile) makes ES256 only")
        XCTAssertEqual(try json(unsupported)["error"]?["dialects"]?["apple"]?["code"], .number(1004))
    }

    func testTokenAndCORS() throws {
        let (api, _d) = try makeAPI(token: "t0k", origins: ["http://localhost:8000"])
        _ = _d
        XCTAssertEqual(api.handle(request("GET", "/profiles")).status, 401)
        XCTAssertEqual(api.handle(request("GET", "/profiles", headers: ["authorization": "Bearer t0k"])).status, 200)
        XCTAssertEqual(api.handle(request("GET", "/shim.js")).status, 200)
        let preflight = api.handle(request("OPTIONS", "/profiles/default/credentials/get", headers: ["origin": "http://localhost:8000"]))
        XCTAssertEqual(preflight.status, 204)
        XCTAssertTrue(preflight.headers.contains { $0 == ("Access-Control-Allow-Origin", "http://localhost:8000") })
        XCTAssertEqual(api.handle(request("OPTIONS", "/profiles", headers: ["origin": "https://evil.example"])).status, 403)
    }

    func testAnOriginAllowedWhileServingIsAnsweredAndOnlyCallersThatAreNotPagesMayAllowOne() throws {
        let (api, _d) = try makeAPI(origins: ["http://localhost:8000"])
        _ = _d
        let page = ["origin": "http://localhost:9000"]
        XCTAssertEqual(api.handle(request("GET", "/profiles", headers: page)).status, 403)
        XCTAssertEqual(api.handle(request("POST", "/origins", #"{"origin": "http://localhost:9000"}"#, headers: ["origin": "http://localhost:8000"])).status, 403,
                       "an allowed page cannot allow another")
        let added = api.handle(request("POST", "/origins", #"{"origin": "http://localhost:9000"}"#))
        XCTAssertEqual(added.status, 200)
        XCTAssertEqual(try json(added)["allowedOrigins"], .array(["http://localhost:8000", "http://localhost:9000"]))
        XCTAssertEqual(api.handle(request("GET", "/profiles/default/passkeys", headers: page)).status, 200)
        XCTAssertEqual(api.handle(request("GET", "/profiles", headers: page)).status, 403, "an allowed page reaches page routes only")
        XCTAssertEqual(try json(api.handle(request("GET", "/origins")))["allowedOrigins"], .array(["http://localhost:8000", "http://localhost:9000"]))
        for bad in [#"{"origin": "http://localhost:9000/"}"#, #"{"origin": "HTTP://x"}"#, #"{"origin": "ftp://x"}"#, #"{"origin": "http://X.example"}"#,
                    #"{"origin": "http://x:0"}"#, #"{"origin": "http://x:65536"}"#, #"{"origin": "*"}"#, #"{"origin": "http://"}"#, #"{"origin": 1}"#, "{}"] {
            let refused = api.handle(request("POST", "/origins", bad))
            XCTAssertEqual(refused.status, 400, bad)
            XCTAssertEqual(try json(refused)["error"]?["name"], "TypeError", bad)
        }
        XCTAssertTrue(AllowedOrigins.isSerializedOrigin("https://[::1]:8443"))
        XCTAssertTrue(AllowedOrigins.isSerializedOrigin("http://xn--bcher-kva.example"))
        XCTAssertFalse(AllowedOrigins.isSerializedOrigin("http://a b"))
        for unsent in ["https://a.test:443", "http://a.test:80", "http://a.test:08000"] {
            XCTAssertFalse(AllowedOrigins.isSerializedOrigin(unsent), "no browser sends \(unsent)")
        }
        XCTAssertTrue(AllowedOrigins.isSerializedOrigin("https://a.test:80"))
    }

    func testTheAllowedOriginsAreBounded() {
        let origins = AllowedOrigins([])
        for i in 0..<AllowedOrigins.limit { XCTAssertTrue(origins.insert("http://localhost:\(i + 1)")) }
        XCTAssertTrue(origins.insert("http://localhost:1"), "one already there is no growth")
        XCTAssertFalse(origins.insert("https://one-more.example"))
        XCTAssertFalse(origins.allows("https://one-more.example"))
    }

    func shim(_ api: APIServer, _ query: [String: String]) -> String {
        let response = api.handle(HTTPRequest(method: "GET", path: "/shim.js", query: query, headers: ["host": "127.0.0.1:8765"], body: [],
                                              bodyTooLarge: false))
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Firefox has no signal methods: the shim is told to remove them for such a profile, and only a caller with the token
    /// learns it; serving the shim makes no profile.
    func testTheShimOfAFirefoxProfileIsToldToRemoveTheSignalMethods() throws {
        let (api, _d) = try makeAPI(token: "t0k")
        _ = _d
        let auth = ["authorization": "Bearer t0k"]
        let told = #""signalMethods":false"#
        XCTAssertFalse(shim(api, ["profile": "nobody", "token": "t0k"]).contains(told))
        XCTAssertEqual(api.handle(request("GET", "/profiles/nobody", headers: auth)).status, 404, "serving the shim made no profile")
        XCTAssertEqual(api.handle(request("POST", "/profiles", #"{"name": "fx", "pack": "bitwarden", "platform": "firefox"}"#, headers: auth)).status, 201)
        XCTAssertEqual(api.handle(request("POST", "/profiles", #"{"name": "chrome", "pack": "bitwarden"}"#, headers: auth)).status, 201)
        XCTAssertTrue(shim(api, ["profile": "fx", "token": "t0k"]).contains(told))
        XCTAssertFalse(shim(api, ["profile": "chrome", "token": "t0k"]).contains(told))
        XCTAssertFalse(shim(api, ["profile": "fx"]).contains(told), "not told without the token")
    }

    /// Immediate mediation is in the shim's enum only where the pack's browser has it (`immediateGet.sinceBrowserVersion`
    /// against the profile's browser version), and a provider whose response has no `getPublicKey` of its own
    /// (`response.getPublicKey` absent, a pack from a directory) is told so; both only to a caller with the token.
    func testTheShimIsToldOfImmediateMediationAndAnAbsentGetPublicKeyAsThePacksSay() throws {
        let directory = TemporaryDirectory()
        let keepassxc = try String(contentsOfFile: providersDirectory + "/keepassxc.json", encoding: .utf8)
        let old = keepassxc.replacingOccurrences(of: #""id": "keepassxc""#, with: #""id": "keepassxc-before-2323""#)
            .replacingOccurrences(of: "\"response.getPublicKey\": {\n      \"value\": \"null\"", with: "\"response.getPublicKey\": {\n      \"value\": \"absent\"")
        XCTAssertNotEqual(old.components(separatedBy: "absent").count, keepassxc.components(separatedBy: "absent").count, "the knob was set")
        try old.write(toFile: directory.path + "/old.json", atomically: true, encoding: .utf8)
        let (api, _d) = try makeAPI(token: "t0k", providers: directory.path)
        _ = _d
        let auth = ["authorization": "Bearer t0k"]
        for (name, body) in [("gpm", #"{"name": "gpm", "pack": "gpm"}"#), ("gpm147", #"{"name": "gpm147", "pack": "gpm", "browserVersion": "147"}"#),
                             ("apple", #"{"name": "apple", "pack": "apple", "platform": "macos"}"#),
                             ("fx", #"{"name": "fx", "pack": "bitwarden", "platform": "firefox"}"#),
                             ("kp", #"{"name": "kp", "pack": "keepassxc"}"#), ("old", #"{"name": "old", "pack": "keepassxc-before-2323"}"#)] {
            XCTAssertEqual(api.handle(request("POST", "/profiles", body, headers: auth)).status, 201, name)
        }
        let immediate = #""immediateMediation":true"#, absent = #""publicKeyMethod":"absent""#
        XCTAssertTrue(shim(api, ["profile": "gpm", "token": "t0k"]).contains(immediate))
        for name in ["gpm147", "apple", "fx"] { XCTAssertFalse(shim(api, ["profile": name, "token": "t0k"]).contains(immediate), name) }
        XCTAssertFalse(shim(api, ["profile": "gpm"]).contains(immediate), "not told without the token")
        XCTAssertTrue(shim(api, ["profile": "old", "token": "t0k"]).contains(absent))
        for name in ["kp", "gpm"] { XCTAssertFalse(shim(api, ["profile": name, "token": "t0k"]).contains(absent), name) }
        XCTAssertFalse(shim(api, ["profile": "old"]).contains(absent), "not told without the token")
    }

    /// The autofill's configuration: a driver binding named as a JavaScript identifier, or a 400 naming the member;
    /// the shim's own event only with the debug switch.
    func testTheShimTakesAFillBindingAndTheAutofillEventsSwitch() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        XCTAssertTrue(shim(api, ["fillBinding": "__credemuFill_0a1b"]).contains(#""fillBinding":"__credemuFill_0a1b""#))
        XCTAssertFalse(shim(api, [:]).contains(#""fillBinding""#))
        for bad in ["", "1abc", "a-b", "a;alert(1)", "\u{e9}t\u{e9}", String(repeating: "a", count: 65), "a\"b"] {
            let response = api.handle(HTTPRequest(method: "GET", path: "/shim.js", query: ["fillBinding": bad], headers: ["host": "127.0.0.1:8765"],
                                                  body: [], bodyTooLarge: false))
            XCTAssertEqual(response.status, 400, bad)
            XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("query.fillBinding"), bad)
        }
        XCTAssertTrue(shim(api, ["autofillEvents": "1"]).contains(#""autofillEvents":true"#))
        XCTAssertFalse(shim(api, ["autofillEvents": "0"]).contains(#""autofillEvents""#))
        XCTAssertFalse(shim(api, [:]).contains(#""autofillEvents""#))
    }

    /// The transport's configuration: a channel binding, and for a one-way channel the top-level const that keeps
    /// the reply receiver; each a JavaScript identifier, the receiver only beside a channel and not its name.
    func testTheShimTakesAChannelAndTheConstOfItsReplyReceiver() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let plain = shim(api, [:])
        XCTAssertTrue(plain.hasPrefix("/* credemu browser shim */\n(function (__credemuConfig) {"), "no channel: fetch, and no declaration")
        XCTAssertFalse(plain.contains(#""channel""#))
        let promise = shim(api, ["channel": "__credemuChannel_0a1b"])
        XCTAssertTrue(promise.contains(#""channel":"__credemuChannel_0a1b""#))
        XCTAssertTrue(promise.hasPrefix("/* credemu browser shim */\n(function (__credemuConfig) {"), "a promise-returning channel needs no receiver")
        let oneWay = shim(api, ["channel": "__credemuChannel_0a1b", "channelReply": "__credemuReply_2c3d"])
        XCTAssertTrue(oneWay.hasPrefix("/* credemu browser shim */\nconst __credemuReply_2c3d = (function (__credemuConfig) {"))
        XCTAssertTrue(oneWay.contains(#""channelReply":"__credemuReply_2c3d""#))
        for bad in ["", "1abc", "a-b", "a;alert(1)", "x = 1; const y", String(repeating: "a", count: 65)] {
            for member in ["channel", "channelReply"] {
                var query = ["channel": "__credemuChannel_0a1b", "channelReply": "__credemuReply_2c3d"]
                query[member] = bad
                let response = api.handle(HTTPRequest(method: "GET", path: "/shim.js", query: query, headers: ["host": "127.0.0.1:8765"],
                                                      body: [], bodyTooLarge: false))
                XCTAssertEqual(response.status, 400, "\(member)=\(bad)")
                XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("query.\(member)"), bad)
            }
        }
        for query in [["channelReply": "__credemuReply_2c3d"], ["channel": "same", "channelReply": "same"]] {
            let response = api.handle(HTTPRequest(method: "GET", path: "/shim.js", query: query, headers: ["host": "127.0.0.1:8765"],
                                                  body: [], bodyTooLarge: false))
            XCTAssertEqual(response.status, 400, "\(query)")
            XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("query.channelReply"))
        }
    }

    func testAnArmedHoldMakesTheNextCeremonyWaitAndOthersNot() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let ceremony = request("POST", "/profiles/default/credentials/create", "{}")
        XCTAssertFalse(api.mayBlock(ceremony))
        XCTAssertEqual(api.handle(request("POST", "/profiles/default/holds", #"{"timeoutMs": 50}"#)).status, 201)
        XCTAssertTrue(api.mayBlock(ceremony))
        XCTAssertFalse(api.mayBlock(request("GET", "/profiles/default/passkeys")))
        let held = api.handle(request("POST", "/profiles/default/credentials/create",
                                      #"{"origin": "https://login.example.com", "options": \#(creationOptionsJSON(algorithms: [-7]))}"#))
        XCTAssertEqual(held.status, 422)
        XCTAssertEqual(try json(held)["error"]?["reason"], "timedOut")
        XCTAssertFalse(api.mayBlock(ceremony), "a hold applies to one ceremony")
    }
}
