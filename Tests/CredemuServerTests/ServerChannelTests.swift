import CredemuEngine
import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuServer
#if canImport(Glibc)
import Glibc
#endif

/// A DevTools endpoint played by the test: a loopback listener that completes one websocket handshake, answers
/// the channel's set-up commands, records what the server sends, and sends whatever the test gives it.
final class FakeDevTools: @unchecked Sendable {
    /// A hostile peer: from the handshake on (`duringSetUp`) or once it answered the set-up, it stops reading and
    /// sends `frame` without pause for `seconds`, then closes.
    struct Flood {
        var frame: [UInt8]
        var duringSetUp: Bool
        var seconds: Double = 40

        /// Pings of 125 bytes (each asks for a pong).
        static func pings(duringSetUp: Bool) -> Flood { Flood(frame: WebSocketClientTests.frame(0x9, [UInt8](repeating: 0x70, count: 125)), duringSetUp: duringSetUp) }
        /// Events the channel does not wait for.
        static let events = Flood(frame: WebSocketClientTests.frame(0x1, Array("{\"method\":\"Page.frameNavigated\",\"params\":{}}".utf8)), duringSetUp: true)
    }

    let port: UInt16
    private let listener: Int32
    private let flood: Flood?
    private var peer: Int32 = -1
    private let lock = NSCondition()
    /// Whether the flood has begun.
    private var flooding = false
    private var received: [JSONValue] = []
    /// Every command the server sent, as (its session, or nil for the page's; its method).
    private var commands: [(String?, String)] = []
    private(set) var binding: String?
    private(set) var script: String?
    var answersSetUp = true
    /// Main-world contexts (id, origin) the page has before the channel: reported on `Runtime.enable`, as Chromium does.
    var contextsBeforeEnable: [(Int, String)] = []
    /// The expressions of the `Runtime.evaluate` commands the server sent.
    private(set) var evaluated: [String] = []

    init(flood: Flood? = nil) throws {
        self.flood = flood
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if flood != nil {
            // A small window, so a server that writes to a peer that does not read has to wait at once.
            var small: Int32 = 4096
            setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(listener, 4)
        var bound = sockaddr_in()
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &size) } }
        port = UInt16(bigEndian: bound.sin_port)
        self.listener = listener
        Thread.detachNewThread { self.serve() }
    }

    var url: String { "ws://127.0.0.1:\(port)/devtools/page/FAKE01" }

    private func serve() {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return }
        lock.withLock { peer = fd }
        var head: [UInt8] = []
        while !String(decoding: head, as: UTF8.self).contains("\r\n\r\n") {
            var byte: UInt8 = 0
            guard recv(fd, &byte, 1, 0) == 1 else { return }
            head.append(byte)
        }
        let key = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
            .first { $0.lowercased().hasPrefix("sec-websocket-key:") }!.dropFirst(18).trimmingCharacters(in: .whitespaces)
        sendRaw(Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(WebSocketClient.accept(for: key))\r\n\r\n".utf8))
        if let flood, flood.duringSetUp { return pour(flood, fd) }
        var setUp = DevToolsChannel.frameSetUp(binding: "", source: "").count
        while let message = readMessage(fd) {
            guard let value = try? JSONValue.parse(message) else { continue }
            let method = value["method"]?.stringValue ?? ""
            if method == "Runtime.addBinding" { binding = value["params"]?["name"]?.stringValue }
            if method == "Page.addScriptToEvaluateOnNewDocument" { script = value["params"]?["source"]?.stringValue }
            let isReply = method == "Runtime.callFunctionOn" || (method == "Runtime.evaluate" && value["params"]?["expression"]?.stringValue?.hasPrefix("__credemuReply_") == true)
            if method == "Runtime.evaluate" && !isReply { lock.withLock { evaluated.append(value["params"]?["expression"]?.stringValue ?? "") } }
            if method == "Runtime.enable" {
                for (id, origin) in contextsBeforeEnable {
                    event("Runtime.executionContextCreated", "{\"context\":{\"id\":\(id),\"origin\":\"\(origin)\",\"name\":\"\",\"auxData\":{\"isDefault\":true}}}")
                }
            }
            lock.withLock {
                commands.append((value["sessionId"]?.stringValue, method))
                lock.broadcast()
            }
            if !isReply {
                if answersSetUp, let id = value["id"]?.numberValue { sendText("{\"id\":\(Int(id)),\"result\":{}}") }
                setUp -= 1
                if setUp == 0, let flood { return pour(flood, fd) }
                continue
            }
            lock.withLock {
                received.append(value)
                lock.broadcast()
            }
        }
        lock.withLock { lock.broadcast() }
    }

    /// Sends `flood.frame` without pause and reads nothing, for `flood.seconds`; then closes.
    private func pour(_ flood: Flood, _ fd: Int32) {
        lock.withLock {
            flooding = true
            lock.broadcast()
        }
        let deadline = Date().addingTimeInterval(flood.seconds)
        var offset = 0   // into the frame: one written in part is finished before the next
        while Date() < deadline && lock.withLock({ peer }) == fd {
            let n = flood.frame[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n > 0 {
                offset = (offset + n) % flood.frame.count
                continue
            }
            guard n < 0 && (errno == EAGAIN || errno == EINTR) else { break }
            var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&writable, 1, 10)
        }
        closePeer()
    }

    /// Waits up to `seconds` for the flood to begin.
    func floodBegan(within seconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while !flooding && lock.wait(until: deadline) {}
        return flooding
    }

    /// One masked client message (the server's frames are always masked).
    private func readMessage(_ fd: Int32) -> [UInt8]? {
        func read(_ n: Int) -> [UInt8]? {
            var out = [UInt8](repeating: 0, count: n), got = 0
            while got < n {
                let r = out[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, n - got, 0) }
                if r <= 0 { return nil }
                got += r
            }
            return out
        }
        guard let head = read(2) else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 { guard let l = read(2) else { return nil }; length = Int(l[0]) << 8 | Int(l[1]) }
        else if length == 127 { guard let l = read(8) else { return nil }; length = l.reduce(0) { $0 << 8 | Int($1) } }
        guard head[1] & 0x80 != 0, let mask = read(4), let payload = read(length) else { return nil }
        if head[0] & 0x0F == 0x8 { return nil }
        return payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
    }

    func sendRaw(_ bytes: [UInt8]) {
        let fd = lock.withLock { peer }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func sendText(_ text: String) { sendRaw(WebSocketClientTests.frame(0x1, Array(text.utf8))) }

    func event(_ method: String, _ params: String) { sendText("{\"method\":\"\(method)\",\"params\":\(params)}") }

    /// The calls of the shim's receiver so far, waiting up to `seconds` for `count` of them.
    func replies(_ count: Int, within seconds: Double = 60) -> [JSONValue] {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while received.count < count && lock.wait(until: deadline) {}
        return received
    }

    /// The methods of the commands sent on `session` (nil: the page's), once `count` of them came (or `seconds` passed).
    func commands(on session: String?, _ count: Int, within seconds: Double = 60) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        func these() -> [String] { commands.filter { $0.0 == session }.map(\.1) }
        while these().count < count && lock.wait(until: deadline) {}
        return these()
    }

    /// The browser closes the page: the socket ends.
    func closePeer() {
        lock.withLock {
            if peer >= 0 { Glibc.shutdown(peer, Int32(SHUT_RDWR)); Glibc.close(peer); peer = -1 }
        }
    }

    deinit {
        closePeer()
        Glibc.close(listener)
    }
}

/// `POST /channels`: the server's own DevTools connection answers the shim's binding calls through the front door,
/// as a page of the execution context's origin, and reads everything the socket sends as hostile.
final class ServerChannelTests: XCTestCase {
    static let origin = "http://localhost:8000"
    /// The `Host` the test code's requests name: the server's own origin is `http://` + this.
    static let host = "127.0.0.1:8765"
    /// Seconds within which the server answers where a hostile peer used to hold it (16 s and more): generous, for
    /// sanitizer builds on a loaded machine.
    static let prompt = 5.0

    func makeAPI(token: String? = nil, maxBodyBytes: Int = APIServer.Configuration.defaultMaxBodyBytes) throws -> (APIServer, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        return (try APIServer(vault: vault, registry: try PolicyRegistry(),
                              configuration: .init(token: token, allowedOrigins: [Self.origin], maxBodyBytes: maxBodyBytes)), directory)
    }

    func request(_ method: String, _ path: String, _ body: String = "", headers: [String: String] = [:]) -> HTTPRequest {
        var all = ["host": Self.host]
        if method != "GET" && !body.isEmpty { all["content-type"] = "application/json" }
        all.merge(headers) { $1 }
        return HTTPRequest(method: method, path: path, query: [:], headers: all, body: Array(body.utf8), bodyTooLarge: false)
    }

    /// A channel opened (by a request naming `host`) on a fake DevTools page with one main-world context of
    /// `origin` (id 7); with `flood`, on a hostile page that floods once the set-up is answered, and no context.
    func open(_ api: APIServer, token: String? = nil, origin: String = origin, host: String = host, flood: FakeDevTools.Flood? = nil) throws -> (FakeDevTools, String) {
        let devtools = try FakeDevTools(flood: flood)
        var headers = ["host": host]
        if let token { headers["authorization"] = "Bearer " + token }
        let response = api.handle(request("POST", "/channels", "{\"devtools\": \"\(devtools.url)\"}", headers: headers))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        if flood == nil {
            devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":7,\"origin\":\"\(origin)\",\"name\":\"\",\"auxData\":{\"isDefault\":true}}}")
        }
        return (devtools, try JSONValue.parse(response.body)["id"]?.stringValue ?? "")
    }

    func call(_ devtools: FakeDevTools, _ message: String, context: Int = 7, name: String? = nil, session: String? = nil) {
        let payload = JSONValue.string(message).serialized()
        let params = "{\"name\":\(JSONValue.string(name ?? devtools.binding!).serialized()),\"payload\":\(payload),\"executionContextId\":\(context)}"
        devtools.sendText("{\"method\":\"Runtime.bindingCalled\",\"params\":\(params)" + (session.map { ",\"sessionId\":\"\($0)\"" } ?? "") + "}")
    }

    /// The reply object the shim's receiver was called with.
    /// (A reply by `Runtime.evaluate` is `RECEIVER(json)`: the JSON between the receiver's parentheses.)
    func reply(_ call: JSONValue) -> JSONValue {
        if let argument = call["params"]?["arguments"]?.arrayValue?.first?["value"] { return argument }
        guard let expression = call["params"]?["expression"]?.stringValue, let open = expression.firstIndex(of: "("),
              expression.hasSuffix(")") else { return .null }
        return (try? JSONValue.parse(String(expression[expression.index(after: open)..<expression.index(before: expression.endIndex)]))) ?? .null
    }

    func testTheChannelAddsARandomBindingAndTheShimServedForItAndAnswersTheShimsCallAsThePage() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        let binding = try XCTUnwrap(devtools.binding)
        XCTAssertTrue(binding.hasPrefix("__credemuChannel_") && binding.count == 17 + 32)
        let script = try XCTUnwrap(devtools.script)
        XCTAssertTrue(script.contains("\"channel\":\"\(binding)\""), "the shim is served for the channel")
        XCTAssertTrue(script.contains("const __credemuReply_"), "with its receiver in a top-level const")
        call(devtools, "{\"id\":\"a1\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":null}")
        let first = try XCTUnwrap(devtools.replies(1).first)
        XCTAssertEqual(first["method"]?.stringValue, "Runtime.evaluate")
        XCTAssertEqual(first["params"]?["contextId"]?.numberValue, 7)
        let receiver = try XCTUnwrap(script.split(separator: " ").dropFirst().first { $0.hasPrefix("__credemuReply_") })
        XCTAssertEqual(first["params"]?["expression"]?.stringValue?.hasPrefix("\(receiver)({\"id\":\"a1\","), true)
        XCTAssertEqual(reply(first)["id"], "a1")
        XCTAssertEqual(reply(first)["status"], 200)
        let fetched = api.handle(request("GET", "/profiles/default/capabilities", headers: ["origin": Self.origin]))
        XCTAssertEqual(reply(first)["body"], try JSONValue.parse(fetched.body), "the answer the page's own fetch gets")
        XCTAssertEqual(reply(first)["body"]?.objectValue?.isEmpty, false)
    }

    func testAReplyNamingProtoGoesAsAnArgumentNotALiteralWhoseProtoWouldSetThePrototype() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        let script = try XCTUnwrap(devtools.script)
        let receiver = try XCTUnwrap(script.split(separator: " ").dropFirst().first { $0.hasPrefix("__credemuReply_") })
        call(devtools, "{\"id\":\"__proto__\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":null}")
        call(devtools, "{\"id\":\"q\\\"\\\\\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":null}")
        let replies = devtools.replies(2)
        XCTAssertEqual(replies.count, 2)
        XCTAssertEqual(replies.first?["method"]?.stringValue, "Runtime.callFunctionOn")
        XCTAssertEqual(replies.first?["params"]?["functionDeclaration"]?.stringValue, "function (r) { \(receiver)(r); }")
        XCTAssertEqual(replies.first.map(reply)?["id"], "__proto__")
        XCTAssertEqual(replies.last?["method"]?.stringValue, "Runtime.evaluate")
        XCTAssertEqual(replies.last.map(reply)?["id"], "q\"\\", "quotes and backslashes survive the expression's string")
        XCTAssertFalse(DevToolsChannel.literalSafe(Array("{\"a\":{\"__proto__\":1}}".utf8)))
        XCTAssertTrue(DevToolsChannel.literalSafe(Array("{\"__prot__\":\"_proto_\"}".utf8)))
        XCTAssertTrue(DevToolsChannel.literalSafe([]))
    }

    /// What the general parse reads of a binding call: its payload (nil when not a string), context and session.
    static func parsedCall(_ text: [UInt8], binding: String) -> (payload: String?, context: Int, session: String?)? {
        guard let message = try? JSONValue.parse(text), message["method"]?.stringValue == "Runtime.bindingCalled",
              message["params"]?["name"]?.stringValue == binding,
              let context = DevToolsChannel.contextID(message["params"]?["executionContextId"]) else { return nil }
        if let named = message["sessionId"], named.stringValue == nil { return nil }
        return (message["params"]?["payload"]?.stringValue, context, message["sessionId"]?.stringValue)
    }

    func testABindingCallAsChromiumWritesItIsReadWithoutAParseExactlyAsTheParseReadsItAndAnyOtherFormIsLeftToTheParse() throws {
        let binding = "__credemuChannel_0123456789abcdef"
        let prefix = DevToolsChannel.callPrefix(binding)
        let payloads = [#"{"id":"a","method":"GET","path":"/capabilities","body":null}"#, "", "é😀\"\\\n\u{1}", String(repeating: "{\"k\":\"v\"}", count: 300)]
        var read = 0
        for payload in payloads {
            for context in ["7", "0", "-0", "-3", "2147483647", "-2147483648", "2147483648", "07", "1.0", "1e2", "", "-", "12345678901"] {
                for tail in ["}", #","sessionId":"F0"}"#, #","sessionId":"A1B2-c3"}"#, #","sessionId":""}"#, "} ", #","sessionId":"F\u0030"}"#,
                             #","sessionId":7}"#, #","sessionId":"F0"} "#, #","extra":1}"#, "", #","sessionId":"F0""#] {
                    let written = [Array(#"{"method":"Runtime.bindingCalled","params":{"name":"\#(binding)","payload":"#.utf8)
                                   + JSONValue.string(payload).serializedBytes() + Array(#","executionContextId":\#(context)}\#(tail)"#.utf8),
                                   // Other orders and spacing, which only the parse reads.
                                   Array(#"{"params":{"name":"\#(binding)","payload":\#(JSONValue.string(payload).serialized()),"executionContextId":\#(context)},"method":"Runtime.bindingCalled"\#(tail)"#.utf8),
                                   Array(#"{"method":"Runtime.bindingCalled","params":{"name":"\#(binding)", "payload":\#(JSONValue.string(payload).serialized()),"executionContextId":\#(context)}\#(tail)"#.utf8)]
                    for (form, text) in written.enumerated() {
                        let lean = DevToolsChannel.bindingCall(text, prefix: prefix)
                        if form > 0 { XCTAssertNil(lean, "another form is the parse's: \(String(decoding: text, as: UTF8.self))") }
                        guard let lean else { continue }
                        read += 1
                        let parsed = try XCTUnwrap(Self.parsedCall(text, binding: binding), String(decoding: text, as: UTF8.self))
                        XCTAssertEqual(lean.payload, parsed.payload)
                        XCTAssertEqual(lean.context, parsed.context)
                        XCTAssertEqual(lean.session, parsed.session)
                    }
                }
            }
        }
        XCTAssertEqual(read, payloads.count * 6 * 4, "Chromium's own form, each valid context and plain session, read without a parse")
        // Another binding's call, a payload that is not a string, and text that is not JSON: never read here.
        for text in [#"{"method":"Runtime.bindingCalled","params":{"name":"other","payload":"{}","executionContextId":7}}"#,
                     #"{"method":"Runtime.bindingCalled","params":{"name":"\#(binding)","payload":7,"executionContextId":7}}"#,
                     #"{"method":"Runtime.bindingCalled","params":{"name":"\#(binding)","payload":"\x","executionContextId":7}}"#,
                     #"{"method":"Runtime.bindingCalled","params":{"name":"\#(binding)","payload":"{}"#] {
            XCTAssertNil(DevToolsChannel.bindingCall(Array(text.utf8), prefix: prefix), text)
        }
    }

    func testAMessageNamingAnyRouteButTheShimsOwnGetsTheFrontDoorsRefusalAndTheVaultIsUnchanged() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        let forged = [
            ("POST", "/user", "{\"decisions\":[\"accept\"]}"),            // an operator route
            ("GET", "/passkeys", "null"),                                 // a page route the shim never calls
            ("POST", "/../../profiles/other/credentials/create", "{}"),   // dot segments are segments
            ("POST", "//profiles/other/credentials/create", "{}"),        // another target
            ("GET", "/capabilities?platform=mac", "null"),                // a query
            ("POST", "/ceremonies/a%2F..%2Fb/abort", "{}"),               // an escape
            ("GET", "/credentials/create", "null"),                       // the wrong method
            ("DELETE", "", "null"),                                       // no path
        ]
        for (i, (method, path, body)) in forged.enumerated() {
            call(devtools, "{\"id\":\"f\(i)\",\"method\":\"\(method)\",\"path\":\"\(path)\",\"body\":\(body)}")
        }
        let replies = devtools.replies(forged.count).map(reply)
        XCTAssertEqual(replies.count, forged.count)
        for (i, answer) in replies.enumerated() {
            XCTAssertEqual(answer["id"]?.stringValue, "f\(i)")
            XCTAssertEqual(answer["status"], 403, "\(forged[i])")
            XCTAssertEqual(answer["body"]?["error"]?["name"], "RouteNotRelayed", "\(forged[i])")
        }
        XCTAssertEqual(try JSONValue.parse(api.handle(request("GET", "/profiles/default/user")).body)["pending"]?.arrayValue?.count ?? 0, 0)
        XCTAssertEqual(try JSONValue.parse(api.handle(request("GET", "/profiles/default/events")).body)["events"]?.arrayValue?.count, 0)
    }

    func testHostileBindingCallsAreRefusedOrIgnoredAndTheChannelLivesOn() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        devtools.sendText("{")                                                        // not JSON
        devtools.sendText("[1,2]")                                                   // not an object
        devtools.event("Runtime.bindingCalled", "{\"name\":\"other\",\"payload\":\"{}\",\"executionContextId\":7}")   // another binding
        devtools.event("Runtime.bindingCalled", "{\"name\":\"\(devtools.binding!)\",\"payload\":\"{}\",\"executionContextId\":99}")   // unknown context
        devtools.event("Runtime.bindingCalled", "{\"name\":\"\(devtools.binding!)\",\"payload\":7,\"executionContextId\":7}")   // no string
        devtools.event("Runtime.bindingCalled", "{\"name\":\"\(devtools.binding!)\",\"executionContextId\":1e300}")
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":\"x\"}}")
        devtools.sendRaw(WebSocketClientTests.frame(0x1, [UInt8](repeating: 0x20, count: 2 * 256 * 1024 + 70 * 1024)))   // over the bound: dropped
        devtools.sendRaw(WebSocketClientTests.frame(0x9, [1]))                       // a ping
        call(devtools, "{\"id\":\"x\"}")                                            // no method
        call(devtools, "{\"id\":\"" + String(repeating: "i", count: 65) + "\",\"method\":\"GET\",\"path\":\"/capabilities\"}")
        call(devtools, "{\"id\":\"b\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":{\"x\":1}}")
        call(devtools, "{\"id\":\"ok\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":null}")
        let replies = devtools.replies(5).map(reply)
        XCTAssertEqual(replies.map { $0["status"]?.numberValue ?? -1 }, [400, 400, 400, 400, 200], "\(replies)")
        XCTAssertEqual(replies.map { $0["body"]?["error"]?["name"]?.stringValue ?? "" }.prefix(4), ["BadChannelMessage", "BadChannelMessage", "BadChannelMessage", "BadChannelMessage"])
        XCTAssertEqual(replies.last?["id"], "ok")
        XCTAssertEqual(api.channels.all.count, 1, "nothing the socket sent ended the channel")
    }

    /// A create's message for the shim's channel, its body's members separated by `padding`.
    static func createMessage(_ id: String, padding: String = "") -> String {
        let user = Base64URL.encode(Array(id.utf8))
        return "{\"id\":\"\(id)\",\"method\":\"POST\",\"path\":\"/credentials/create\",\"body\":{\"origin\":\"\(origin)\",\(padding)"
            + "\"options\":{\"rp\":{\"id\":\"localhost\",\"name\":\"RP\"},\"user\":{\"id\":\"\(user)\",\"name\":\"\(id)\",\"displayName\":\"\(id)\"},"
            + "\"challenge\":\"\(Base64URL.encode([UInt8](repeating: 7, count: 32)))\",\"pubKeyCredParams\":[{\"type\":\"public-key\",\"alg\":-7}]}}}"
    }

    func passkeyCount(_ api: APIServer) throws -> Int {
        try JSONValue.parse(api.handle(request("GET", "/profiles/default/passkeys")).body)["passkeys"]?.arrayValue?.count ?? -1
    }

    func testABodyOverTheBoundThroughTheBindingIsRefusedCountedAsThePageWroteItAsOverHTTP() throws {
        let (api, _d) = try makeAPI(maxBodyBytes: 4096)
        _ = _d
        let (devtools, _) = try open(api)
        // The same create, compact and padded past the bound with the whitespace JSON allows between members: over
        // HTTP the bound counts the bytes sent, so the padded one is refused whatever its compact form would be.
        call(devtools, Self.createMessage("compact"))
        call(devtools, Self.createMessage("padded", padding: String(repeating: " ", count: 4096)))
        call(devtools, Self.createMessage("long", padding: "\"topOrigin\":\"" + String(repeating: "a", count: 4096) + "\","))
        let replies = devtools.replies(3).map(reply)
        XCTAssertEqual(replies.map { $0["id"]?.stringValue ?? "" }, ["compact", "padded", "long"])
        XCTAssertEqual(replies.map { $0["status"]?.numberValue ?? -1 }, [200, 413, 413], "\(replies)")
        XCTAssertEqual(replies[1]["body"]?["error"]?["name"], "PayloadTooLarge")
        XCTAssertEqual(try passkeyCount(api), 1, "only the create within the bound made a passkey")
    }

    func testTheRouteReadsTheBodyTheBindingCarriedWithTheRefusalsItGivesOverHTTP() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        let bodies = ["{\"origin\":\"\(Self.origin)\",\"options\":5}", "{\"options\":{},\"mediation\":7}", "[1]", "\"text\"", "{\"options\":{\"a\":[[[[1]]]]},\"origin\":true}"]
        for (i, body) in bodies.enumerated() {
            call(devtools, "{\"id\":\"b\(i)\",\"method\":\"POST\",\"path\":\"/credentials/create\",\"body\":\(body)}")
        }
        let replies = devtools.replies(bodies.count).map(reply)
        XCTAssertEqual(replies.count, bodies.count)
        for (i, body) in bodies.enumerated() {
            let http = api.handle(request("POST", "/profiles/default/credentials/create", body, headers: ["origin": Self.origin]))
            XCTAssertEqual(replies[i]["status"]?.numberValue, Double(http.status), body)
            XCTAssertEqual(replies[i]["body"], try JSONValue.parse(http.body), body)
        }
        XCTAssertEqual(try passkeyCount(api), 0)
    }

    func testAMessageThatBeginsAsAnAnswerOrAnEventTheChannelDoesNotReadIsIgnoredWhateverItSaysAfter() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        let payload = JSONValue.string(Self.createMessage("hidden")).serialized()
        // An answer's first member, or an ignored event's name first, then a binding call's members.
        devtools.sendText("{\"id\":5,\"method\":\"Runtime.bindingCalled\",\"params\":{\"name\":\"\(devtools.binding!)\",\"payload\":\(payload),\"executionContextId\":7}}")
        devtools.sendText("{\"method\":\"Runtime.consoleAPICalled\",\"params\":{\"name\":\"\(devtools.binding!)\",\"payload\":\(payload),\"executionContextId\":7},\"method\":\"Runtime.bindingCalled\"}")
        devtools.event("Runtime.consoleAPICalled", "{\"type\":\"warning\",\"args\":[{\"type\":\"string\",\"value\":\"x\"}],\"executionContextId\":7}")
        // A context reported after them is read, and a call from it answered: the channel reads on.
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":8,\"origin\":\"\(Self.origin)\"}}")
        call(devtools, Self.createMessage("seen"), context: 8)
        let replies = devtools.replies(1).map(reply)
        XCTAssertEqual(replies.map { $0["id"]?.stringValue ?? "" }, ["seen"])
        XCTAssertEqual(replies.first?["status"], 200)
        XCTAssertEqual(try passkeyCount(api), 1)
    }

    func testTheOriginIsTheContextsAsChromiumReportsItAndAFrameWithoutAnHTTPOriginIsRefused() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":8,\"origin\":\"http://elsewhere.example\"}}")
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":9,\"origin\":\"null\"}}")
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":10,\"origin\":\"://\"}}")
        let save = "{\"id\":\"p\",\"method\":\"POST\",\"path\":\"/passwords\",\"body\":{\"origin\":\"http://localhost:8000\",\"username\":\"u\",\"password\":\"p\"}}"
        for context in [8, 9, 10] { call(devtools, save, context: context) }
        call(devtools, save, context: 7)
        let replies = devtools.replies(4).map(reply)
        XCTAssertEqual(replies.map { $0["status"]?.numberValue ?? -1 }, [403, 403, 403, 201], "\(replies)")
        XCTAssertEqual(replies[0]["body"]?["error"]?["name"], "Forbidden", "an origin the server does not allow")
        XCTAssertEqual(replies[1]["body"]?["error"]?["name"], "OriginNotRelayed")
        // A destroyed context is unknown again; a cleared page too.
        devtools.event("Runtime.executionContextDestroyed", "{\"executionContextId\":7}")
        call(devtools, "{\"id\":\"gone\",\"method\":\"GET\",\"path\":\"/capabilities\"}", context: 7)
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":11,\"origin\":\"http://localhost:8000\"}}")
        devtools.event("Runtime.executionContextsCleared", "{}")
        call(devtools, "{\"id\":\"cleared\",\"method\":\"GET\",\"path\":\"/capabilities\"}", context: 11)
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":12,\"origin\":\"http://localhost:8000\"}}")
        call(devtools, "{\"id\":\"live\",\"method\":\"GET\",\"path\":\"/capabilities\"}", context: 12)
        let more = devtools.replies(5).map(reply)
        XCTAssertEqual(more.count, 5)
        XCTAssertEqual(more.last?["id"], "live", "no answer to a context Chromium no longer reports")
    }

    /// A target the page's session auto-attached (`Target.attachedToTarget`, paused), on `parent`'s session.
    func attach(_ devtools: FakeDevTools, _ session: String, type: String = "iframe", parent: String? = nil) {
        devtools.sendText("{\"method\":\"Target.attachedToTarget\",\"params\":{\"sessionId\":\"\(session)\",\"targetInfo\":{\"targetId\":\"T\(session)\",\"type\":\"\(type)\","
                          + "\"url\":\"\"},\"waitingForDebugger\":true}" + (parent.map { ",\"sessionId\":\"\($0)\"" } ?? "") + "}")
    }

    func testACrossSiteIframesSessionGetsTheShimBeforeItRunsAndItsCallsAreAnsweredOnItsSessionWithItsOwnOrigin() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let frame = "http://frame.localhost:9000"
        XCTAssertEqual(api.handle(request("POST", "/origins", "{\"origin\":\"\(frame)\"}")).status, 200)
        let (devtools, _) = try open(api)
        XCTAssertEqual(devtools.commands(on: nil, 5).last, "Target.setAutoAttach", "the page's session attaches to out-of-process frames")
        attach(devtools, "S1")
        let setUp = ["Page.enable", "Runtime.enable", "Page.addScriptToEvaluateOnNewDocument", "Runtime.addBinding", "Target.setAutoAttach",
                     "Runtime.runIfWaitingForDebugger"]
        XCTAssertEqual(devtools.commands(on: "S1", setUp.count), setUp, "the frame's own set-up, then it runs")
        // Context 7 in the frame's session is not the page's context 7.
        devtools.sendText("{\"method\":\"Runtime.executionContextCreated\",\"params\":{\"context\":{\"id\":7,\"origin\":\"\(frame)\"}},\"sessionId\":\"S1\"}")
        func save(_ origin: String, _ user: String) -> String {
            "{\"id\":\"\(user)\",\"method\":\"POST\",\"path\":\"/passwords\",\"body\":{\"origin\":\"\(origin)\",\"username\":\"\(user)\",\"password\":\"p\"}}"
        }
        call(devtools, save(Self.origin, "claims-the-parent"), session: "S1")
        call(devtools, save(frame, "frame-user"), session: "S1")
        call(devtools, save(Self.origin, "page-user"))
        call(devtools, save(frame, "unknown-session"), session: "S9")   // a session the channel never attached: ignored
        let replies = devtools.replies(3)
        XCTAssertEqual(replies.count, 3)
        XCTAssertEqual(replies.map { $0["sessionId"]?.stringValue ?? "page" }, ["S1", "S1", "page"], "each reply on its call's session")
        XCTAssertEqual(replies.map { reply($0)["status"]?.numberValue ?? -1 }, [403, 201, 201], "\(replies.map(reply))")
        let saved = try JSONValue.parse(api.handle(request("GET", "/profiles/default/passwords")).body)
        XCTAssertEqual(Set(saved["passwords"]?.arrayValue?.compactMap { $0["username"]?.stringValue } ?? []), ["frame-user", "page-user"])
        // A worker is let run and detached; a detached frame's session is forgotten.
        attach(devtools, "W1", type: "worker")
        XCTAssertEqual(devtools.commands(on: "W1", 1), ["Runtime.runIfWaitingForDebugger"])
        XCTAssertEqual(devtools.commands(on: nil, 7).last, "Target.detachFromTarget", "on the session that attached it")
        devtools.sendText("{\"method\":\"Target.detachedFromTarget\",\"params\":{\"sessionId\":\"S1\"}}")
        call(devtools, save(frame, "gone"), session: "S1")
        call(devtools, "{\"id\":\"live\",\"method\":\"GET\",\"path\":\"/capabilities\"}")
        XCTAssertEqual(devtools.replies(4).map { reply($0)["id"]?.stringValue ?? "" }.last, "live", "no answer for a detached session")
        XCTAssertEqual(devtools.replies(4).count, 4)
    }

    func testTheFramesAChannelAttachesAreBoundedAndAFrameOverTheBoundRunsUnattached() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, _) = try open(api)
        for i in 0..<DevToolsChannel.maxFrames { attach(devtools, "F\(i)", parent: i == 0 ? nil : "F0") }
        attach(devtools, "OVER", parent: "F0")
        XCTAssertEqual(devtools.commands(on: "OVER", 1), ["Runtime.runIfWaitingForDebugger"])
        XCTAssertEqual(devtools.commands(on: "F0", 7).last, "Target.detachFromTarget", "detached on the session that attached it")
        XCTAssertEqual(devtools.commands(on: "F\(DevToolsChannel.maxFrames - 1)", 6).count, 6, "the last frame within the bound was set up")
        XCTAssertEqual(api.channels.all.count, 1)
    }

    func testWithATokenTheChannelCarriesItsTargetsPageTokenAndTheRouteNeedsTheServersOwn() throws {
        let token = "s3cret-token-0123456789"
        let (api, _d) = try makeAPI(token: token)
        _ = _d
        XCTAssertEqual(api.handle(request("POST", "/channels", "{\"devtools\": \"ws://127.0.0.1:9/devtools/page/X\"}")).status, 401)
        let pageToken = PageToken.derive(from: token, kind: .profile, name: "default")
        XCTAssertEqual(api.handle(request("POST", "/channels", "{\"devtools\": \"ws://127.0.0.1:9/devtools/page/X\"}",
                                          headers: ["authorization": "Bearer " + pageToken])).status, 401, "a page token opens page routes only")
        XCTAssertEqual(api.handle(request("GET", "/channels", headers: ["authorization": "Bearer " + token, "origin": Self.origin])).status, 403,
                       "no page lists channels")
        let (devtools, _) = try open(api, token: token)
        XCTAssertFalse(devtools.script!.contains(token), "the served shim never holds the server's token")
        call(devtools, "{\"id\":\"c\",\"method\":\"GET\",\"path\":\"/capabilities\"}")
        XCTAssertEqual(devtools.replies(1).map(reply).first?["status"], 200)
    }

    func testTheChannelIsGoneWhenTheBrowserClosesTheSocketOrOnDeleteAndTheirNumberIsBounded() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (first, firstID) = try open(api)
        let (_, secondID) = try open(api)
        XCTAssertEqual(try JSONValue.parse(api.handle(request("GET", "/channels")).body)["channels"]?.arrayValue?.compactMap { $0["id"]?.stringValue }, [firstID, secondID])
        first.closePeer()
        let deadline = Date().addingTimeInterval(5)
        while api.channels.channel(firstID) != nil && Date() < deadline { usleep(10_000) }
        XCTAssertNil(api.channels.channel(firstID), "the browser closed the page")
        XCTAssertEqual(api.handle(request("DELETE", "/channels/\(secondID)")).status, 200)
        XCTAssertTrue(api.channels.all.isEmpty)
        XCTAssertEqual(api.handle(request("DELETE", "/channels/\(secondID)")).status, 404)
        var open: [FakeDevTools] = []
        for _ in 0..<ChannelBoard.limit { open.append(try self.open(api).0) }
        let refused = try FakeDevTools()
        let over = api.handle(request("POST", "/channels", "{\"devtools\": \"\(refused.url)\"}"))
        XCTAssertEqual(over.status, 409)
        api.closeChannels()
        XCTAssertTrue(api.channels.all.isEmpty)
        _ = open
    }

    func testAPeerThatPingsAndNeverReadsHoldsNeitherDeleteNorTheServersStop() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (first, firstID) = try open(api, flood: .pings(duringSetUp: false))
        let (second, _) = try open(api, flood: .pings(duringSetUp: false))
        XCTAssertTrue(first.floodBegan() && second.floodBegan())
        Thread.sleep(forTimeInterval: 2)   // the peers' windows and the server's send buffers fill with pongs
        var started = Date()
        XCTAssertEqual(api.handle(request("DELETE", "/channels/\(firstID)")).status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(started), Self.prompt, "DELETE answers at once (it waited out pong after pong)")
        XCTAssertNil(api.channels.channel(firstID))
        started = Date()
        api.closeChannels()
        XCTAssertLessThan(Date().timeIntervalSince(started), Self.prompt, "the server's stop ends the channel at once")
        XCTAssertTrue(api.channels.all.isEmpty)
    }

    func testAPeerThatLeavesAFrameUntakenForTheSendBoundLosesItsChannel() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let (devtools, id) = try open(api, flood: .pings(duringSetUp: false))
        XCTAssertTrue(devtools.floodBegan())
        let deadline = Date().addingTimeInterval(WebSocketClient.sendSeconds + 2 * Self.prompt)
        while api.channels.channel(id) != nil && Date() < deadline { usleep(50_000) }
        XCTAssertNil(api.channels.channel(id), "a peer that stops reading is dropped, not waited on, and frees its slot")
    }

    func testAPeerThatFloodsTheSetUpWithEventsOrPingsWithoutReadingGetsARefusalWithinTheSetUpsBound() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        for flood in [FakeDevTools.Flood.events, .pings(duringSetUp: true)] {
            let devtools = try FakeDevTools(flood: flood)
            let started = Date()
            let response = api.handle(request("POST", "/channels", "{\"devtools\": \"\(devtools.url)\"}"))
            XCTAssertEqual(response.status, 502, String(decoding: response.body, as: UTF8.self))
            XCTAssertLessThan(Date().timeIntervalSince(started), 10 + 2 * Self.prompt, "the set-up's 10 s bound holds whatever the peer sends")
            XCTAssertTrue(api.channels.all.isEmpty)
        }
    }

    func testTheServersStopCutsAChannelsSetUpShortAndRefusesNewOnes() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let devtools = try FakeDevTools(flood: .events)
        let answered = DispatchSemaphore(value: 0)
        let post = request("POST", "/channels", "{\"devtools\": \"\(devtools.url)\"}")
        nonisolated(unsafe) var status = 0   // written before the semaphore's signal, read after its wait
        Thread.detachNewThread {
            status = api.handle(post).status
            answered.signal()
        }
        XCTAssertTrue(devtools.floodBegan())
        api.closeChannels()
        XCTAssertEqual(answered.wait(timeout: .now() + Self.prompt), .success, "the set-up ends with the server's stop")
        XCTAssertEqual(status, 502)
        let late = try FakeDevTools()
        let refused = api.handle(request("POST", "/channels", "{\"devtools\": \"\(late.url)\"}"))
        XCTAssertEqual(refused.status, 503, "no channel opens once the server is stopping")
        XCTAssertEqual(try JSONValue.parse(refused.body)["error"]?["name"], "ServerStopping")
    }

    func testAFrameOfTheServersOwnOriginActsThroughTheChannelAsAPageNeverAsTheConsole() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        func save(_ origin: String, _ user: String) -> String {
            "{\"id\":\"\(user)\",\"method\":\"POST\",\"path\":\"/passwords\",\"body\":{\"origin\":\"\(origin)\",\"username\":\"\(user)\",\"password\":\"p\"}}"
        }
        // The origin the console has (http:// + the Host the channel's opener named), not allowed as a page's.
        let (own, _) = try open(api, origin: "http://" + Self.host)
        call(own, save(Self.origin, "console-claim"))
        XCTAssertEqual(own.replies(1).map(reply).first?["status"], 403)
        XCTAssertEqual(own.replies(1).map(reply).first?["body"]?["error"]?["name"], "Forbidden")
        // Allowed as a page's: it acts for its own origin, never for another.
        XCTAssertEqual(api.handle(request("POST", "/origins", "{\"origin\":\"http://localhost:8765\"}")).status, 200)
        let (allowed, _) = try open(api, origin: "http://localhost:8765", host: "localhost:8765")
        call(allowed, save(Self.origin, "other-site"))
        call(allowed, save("http://localhost:8765", "own-site"))
        XCTAssertEqual(allowed.replies(2).map { reply($0)["status"]?.numberValue ?? -1 }, [403, 201], "\(allowed.replies(2).map(reply))")
        let saved = try JSONValue.parse(api.handle(request("GET", "/profiles/default/passwords")).body)
        XCTAssertEqual(saved["passwords"]?.arrayValue?.compactMap { $0["username"]?.stringValue }, ["own-site"])
    }

    func testABadDevToolsURLOrTargetOrAnEndpointThatNeverAnswersIsANamedRefusal() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        func post(_ body: String) -> (Int, String) {
            let response = api.handle(request("POST", "/channels", body))
            return (response.status, (try? JSONValue.parse(response.body))?["error"]?["name"]?.stringValue ?? "")
        }
        XCTAssertEqual(post("{\"devtools\": \"ws://10.1.2.3:9222/devtools/page/X\"}").0, 400)
        XCTAssertEqual(post("{\"devtools\": \"ws://127.0.0.1:9222/devtools/page/X\", \"profile\": \"ghost\"}").0, 404)
        XCTAssertEqual(post("{\"devtools\": \"ws://127.0.0.1:9222/devtools/page/X\", \"profile\": \"default\", \"device\": \"d\"}").0, 400)
        XCTAssertEqual(post("{\"devtools\": \"ws://127.0.0.1:9222/devtools/page/X\", \"extra\": 1}").0, 400)
        XCTAssertEqual(post("{\"devtools\": \"ws://127.0.0.1:9222/devtools/page/X\", \"fillBinding\": \"1bad\"}").0, 400)
        XCTAssertEqual(api.handle(request("POST", "/channels", "{\"devtools\": \"ws://127.0.0.1:9/devtools/page/X\"}", headers: ["origin": Self.origin])).status, 403,
                       "a page cannot open a channel")
        // Port 1 on loopback: nothing listens.
        XCTAssertEqual(post("{\"devtools\": \"ws://127.0.0.1:1/devtools/page/X\"}"), 502, "DevToolsUnreachable")
        XCTAssertTrue(api.channels.all.isEmpty, "a failed open frees its slot")
        XCTAssertEqual(post("{\"devtools\": \"ws://127.0.0.1:1/devtools/page/X\"}"), 502, "DevToolsUnreachable")
    }
}

private func XCTAssertEqual(_ a: (Int, String), _ status: Int, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.0, status, file: file, line: line)
    XCTAssertEqual(a.1, name, file: file, line: line)
}

/// A client's relay that says it is one (`X-Credemu-Channel`) is held to the same rule as the server's own channel.
final class ChannelHeaderTests: XCTestCase {
    func testARequestNamingTheChannelReachesOnlyTheRoutesTheTableMarksRelayed() throws {
        let (vault, _d) = try makeTestVault()
        _ = _d
        let api = try APIServer(vault: vault, registry: try PolicyRegistry(), configuration: .init(allowedOrigins: [ServerChannelTests.origin]))
        var origin = ServerChannelTests.origin
        func status(_ method: String, _ path: String, _ body: String = "") -> (Int, String) {
            var headers = ["host": "127.0.0.1:8765", "origin": origin, "x-credemu-channel": "relay"]
            if !body.isEmpty { headers["content-type"] = "application/json" }
            let response = api.handle(HTTPRequest(method: method, path: path, query: [:], headers: headers, body: Array(body.utf8), bodyTooLarge: false))
            return (response.status, (try? JSONValue.parse(response.body))?["error"]?["name"]?.stringValue ?? "")
        }
        XCTAssertEqual(status("GET", "/profiles/default/capabilities").0, 200)
        XCTAssertEqual(status("GET", "/profiles/default/passkeys"), 403, "RouteNotRelayed")
        XCTAssertEqual(status("GET", "/profiles/default/nope"), 403, "RouteNotRelayed")
        XCTAssertEqual(status("POST", "/profiles/default/user", "{\"decisions\":[\"accept\"]}"), 403, "RouteNotRelayed")
        // A relayed frame of the server's own origin is a page of that origin, never the console.
        origin = "http://127.0.0.1:8765"
        XCTAssertEqual(status("POST", "/profiles/default/passwords", "{\"origin\":\"\(ServerChannelTests.origin)\",\"username\":\"u\",\"password\":\"p\"}"),
                       403, "Forbidden")
    }
}

/// A paired channel: the driver's shim (Playwright's init script), the server's binding (Playwright's Chromium).
extension ServerChannelTests {

    func testAPairedChannelAddsTheDriversBindingNameAndOnlyTheHandoffScriptAndAnswersThroughItsReceiver() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let devtools = try FakeDevTools()
        let body = "{\"devtools\": \"\(devtools.url)\", \"paired\": {\"binding\": \"__credemuServer_b1\", \"handoff\": \"__credemuHandoff_h1\"}}"
        let response = api.handle(request("POST", "/channels", body))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":7,\"origin\":\"\(Self.origin)\",\"name\":\"\",\"auxData\":{\"isDefault\":true}}}")
        XCTAssertEqual(devtools.binding, "__credemuServer_b1", "the name the driver's shim was served with")
        let script = try XCTUnwrap(devtools.script)
        XCTAssertTrue(script.contains("credemu channel handoff") && script.contains("(\"__credemuHandoff_h1\", \"__credemuServer_b1\")"))
        XCTAssertFalse(script.contains("__credemuConfig"), "no shim: the page's is the driver's")
        XCTAssertEqual(devtools.commands(on: nil, 5).prefix(5), ["Page.enable", "Runtime.enable", "Page.addScriptToEvaluateOnNewDocument", "Runtime.addBinding", "Target.setAutoAttach"],
                       "the script before the binding: a document with the binding runs the script")
        call(devtools, "{\"id\":\"p1\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":null}")
        let first = try XCTUnwrap(devtools.replies(1).first)
        let receiver = try XCTUnwrap(script.split(separator: " ").first { $0.hasPrefix("__credemuReply_") })
        XCTAssertEqual(first["params"]?["expression"]?.stringValue?.hasPrefix("\(receiver)({"), true)
        XCTAssertEqual(reply(first)["status"], 200)
    }

    func testAServerWithATokenOpensAPairedChannelAndItsCallsCarryThePageToken() throws {
        let (api, _d) = try makeAPI(token: "secret-token")
        _ = _d
        let devtools = try FakeDevTools()
        let body = "{\"devtools\": \"\(devtools.url)\", \"paired\": {\"binding\": \"b\", \"handoff\": \"h\"}}"
        let response = api.handle(request("POST", "/channels", body, headers: ["authorization": "Bearer secret-token"]))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":7,\"origin\":\"\(Self.origin)\",\"name\":\"\",\"auxData\":{\"isDefault\":true}}}")
        call(devtools, "{\"id\":\"t1\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":null}")
        XCTAssertEqual(reply(try XCTUnwrap(devtools.replies(1).first))["status"], 200)
    }

    func testAPairedChannelAllowsTheCallingContextsOriginOnlyWhenAskedTo() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let stranger = "http://stranger.test:9000"
        for allow in [false, true] {
            let devtools = try FakeDevTools()
            let body = "{\"devtools\": \"\(devtools.url)\", \"paired\": {\"binding\": \"b\", \"handoff\": \"h\"}, \"allowFrameOrigins\": \(allow)}"
            XCTAssertEqual(api.handle(request("POST", "/channels", body)).status, 201)
            devtools.event("Runtime.executionContextCreated", "{\"context\":{\"id\":9,\"origin\":\"\(stranger)\",\"name\":\"\",\"auxData\":{\"isDefault\":true}}}")
            call(devtools, "{\"id\":\"o1\",\"method\":\"GET\",\"path\":\"/capabilities\",\"body\":null}", context: 9)
            let answer = reply(try XCTUnwrap(devtools.replies(1).first))
            XCTAssertEqual(answer["status"]?.numberValue == 200, allow, "\(answer)")
            let origins = try JSONValue.parse(api.handle(request("GET", "/origins")).body)["allowedOrigins"]?.arrayValue ?? []
            XCTAssertEqual(origins.contains(.string(stranger)), allow)
        }
    }

    func testAPairedChannelWithBadNamesOrTheShimsOwnMembersIsRefusedAndOpensNothing() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let devtools = try FakeDevTools()
        let bodies = [
            "\"paired\": {\"binding\": \"a b\", \"handoff\": \"h\"}",
            "\"paired\": {\"binding\": \"same\", \"handoff\": \"same\"}",
            "\"paired\": {\"binding\": \"b\"}",
            "\"paired\": {\"binding\": \"b\", \"handoff\": \"h\", \"extra\": 1}",
            "\"paired\": \"b\"",
            "\"paired\": {\"binding\": \"b\", \"handoff\": \"h\"}, \"fillBinding\": \"f\"",
            "\"paired\": {\"binding\": \"b\", \"handoff\": \"h\"}, \"autofill\": false",
            "\"allowFrameOrigins\": \"yes\"",
        ]
        for members in bodies {
            let response = api.handle(request("POST", "/channels", "{\"devtools\": \"\(devtools.url)\", \(members)}"))
            XCTAssertEqual(response.status, 400, members)
        }
        XCTAssertEqual(try JSONValue.parse(api.handle(request("GET", "/channels")).body)["channels"]?.arrayValue?.count, 0)
        XCTAssertNil(devtools.binding, "no connection was made")
    }

    func testTheBindingIsTakenOffEveryDocumentThatWasOpenBeforeTheChannel() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        let devtools = try FakeDevTools()
        devtools.contextsBeforeEnable = [(3, Self.origin), (4, "http://localhost:8001")]
        let body = "{\"devtools\": \"\(devtools.url)\", \"paired\": {\"binding\": \"__credemuServer_b2\", \"handoff\": \"h\"}}"
        XCTAssertEqual(api.handle(request("POST", "/channels", body)).status, 201)
        _ = devtools.commands(on: nil, 7, within: ServerChannelTests.prompt)
        XCTAssertEqual(devtools.evaluated, ["delete window.__credemuServer_b2", "delete window.__credemuServer_b2"])
    }

    func testTheShimTakesAPairedChannelOnlyWithItsHandoffAndUnderNamesOfItsOwn() throws {
        let (api, _d) = try makeAPI()
        _ = _d
        func shim(_ query: [String: String]) -> HTTPResponse {
            api.handle(HTTPRequest(method: "GET", path: "/shim.js", query: query, headers: ["host": Self.host], body: [], bodyTooLarge: false))
        }
        let served = shim(["serverChannel": "s1", "serverHandoff": "h1", "channel": "c1"])
        XCTAssertEqual(served.status, 200)
        XCTAssertTrue(String(decoding: served.body, as: UTF8.self).contains("\"serverChannel\":\"s1\",\"serverHandoff\":\"h1\""))
        XCTAssertEqual(shim(["serverChannel": "s1"]).status, 400)
        XCTAssertEqual(shim(["serverHandoff": "h1"]).status, 400)
        XCTAssertEqual(shim(["serverChannel": "s1", "serverHandoff": "s1"]).status, 400)
        XCTAssertEqual(shim(["serverChannel": "c1", "serverHandoff": "h1", "channel": "c1"]).status, 400)
        XCTAssertEqual(shim(["serverChannel": "s-1", "serverHandoff": "h1"]).status, 400)
    }
}
