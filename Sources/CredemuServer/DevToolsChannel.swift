import CredemuOperations
import Foundation
import WebAuthn

/// The shim's channel relayed inside `credemu serve` (docs/shim.md, "Transport"): the server's own DevTools
/// connection to one Chromium page target, on which it adds the channel's binding (`Runtime.addBinding`, a random
/// name) and the shim (`Page.addScriptToEvaluateOnNewDocument`, the script `/shim.js` serves with `channel` and
/// `channelReply`), tracks the execution contexts' origins as Chromium reports them, and answers each
/// `Runtime.bindingCalled` in-process: the message becomes a request from a page of the context's origin, which
/// the one front door (`APIServer.handle`) answers, and the reply goes back by `Runtime.callFunctionOn` of the
/// shim's receiver in that context. It ends when the browser closes the socket, on `DELETE /channels/{id}`, or
/// when the server stops.
///
/// Everything from the socket is hostile: a message that is not JSON, a binding call of another name, from a
/// context Chromium never reported or with no http(s) origin, an id that is not a short string, is refused (a
/// named error to the shim's receiver where there is a context to answer in) or ignored, never a crash.
final class DevToolsChannel: @unchecked Sendable {
    let id: String
    let target: CeremonyTarget
    let devtools: String
    /// The `Host` the channel's requests carry: the one the client that opened it used (already checked).
    let host: String
    private let socket: WebSocketClient
    private unowned let api: APIServer
    private let binding: String
    private let reply: String
    private let lock = NSLock()
    /// Execution context ID -> origin, as Chromium reports them (reader thread only).
    private var contexts: [Int: String] = [:]
    private var contextCount = 0
    private var nextCommand = 100
    private var waiting = 0
    private var closed = false
    /// Binding calls answered, and the seconds the server spent answering them (from the event's arrival to the
    /// reply's send): what `GET /channels` reports, so a benchmark can tell the server's share from the browser's.
    private var answered = 0
    private var answeringSeconds = 0.0
    private let ended = DispatchSemaphore(value: 0)

    /// Bounds of what the socket can make the channel hold.
    static let maxContexts = 4096
    /// Requests of one channel waiting at once on threads of their own (a conditional get, a held ceremony).
    static let maxWaiting = 8
    static let functionDeclaration = "function (r) { %@(r); }"

    private init(id: String, target: CeremonyTarget, devtools: String, host: String, socket: WebSocketClient, api: APIServer,
                 binding: String, reply: String) {
        self.id = id
        self.target = target
        self.devtools = devtools
        self.host = host
        self.socket = socket
        self.api = api
        self.binding = binding
        self.reply = reply
    }

    /// A DevTools page target's websocket URL as Chromium lists it: `ws://127.0.0.1:PORT/devtools/page/ID`, a
    /// loopback host, an ID of 1 to 64 letters, digits and '-'.
    static func pageURL(_ text: String) -> WebSocketURL? {
        WebSocketURL(text) { path in
            let prefix = "/devtools/page/"
            guard path.hasPrefix(prefix) else { return false }
            let id = path.utf8.dropFirst(prefix.utf8.count)
            return (1...64).contains(id.count) && id.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D }
        }
    }

    /// Connects, enables the Page and Runtime domains, adds the binding and the shim (`script(binding, reply)`),
    /// all within `timeout`; then starts the reader thread.
    static func open(id: String, url: WebSocketURL, devtools: String, target: CeremonyTarget, host: String, api: APIServer, timeout: Double,
                     script: (String, String) throws(APIError) -> [UInt8]) throws(APIError) -> DevToolsChannel {
        let binding = "__credemuChannel_" + randomHex(16), reply = "__credemuReply_" + randomHex(16)
        let source = try script(binding, reply)
        let socket: WebSocketClient
        do {
            socket = try WebSocketClient.connect(url, timeout: timeout, maxMessage: APIServer.channelMaxMessage(api.configuration.maxBodyBytes))
        } catch {
            throw APIError(502, "DevToolsUnreachable", "Cannot open a DevTools connection to \(devtools): \(error.description).")
        }
        let channel = DevToolsChannel(id: id, target: target, devtools: devtools, host: host, socket: socket, api: api, binding: binding, reply: reply)
        let commands: [(String, JSONValue)] = [
            ("Page.enable", .object([])),
            ("Runtime.enable", .object([])),
            ("Runtime.addBinding", .object([("name", .string(binding))])),
            ("Page.addScriptToEvaluateOnNewDocument", .object([("source", .string(String(decoding: source, as: UTF8.self)))])),
        ]
        do throws(WebSocketError) {
            var pending = Set<Int>()
            for (index, (method, params)) in commands.enumerated() {
                let message = JSONValue.object([("id", .number(Double(index + 1))), ("method", .string(method)), ("params", params)])
                try socket.send(text: Array(message.serialized().utf8))
                pending.insert(index + 1)
            }
            let deadline = Date().addingTimeInterval(timeout)
            while !pending.isEmpty {
                let text = try socket.receive(deadline: deadline)
                guard let message = try? JSONValue.parse(text), let number = message["id"]?.numberValue, let answered = Int(exactly: number), pending.contains(answered) else {
                    channel.received(text)
                    continue
                }
                if let error = message["error"] {
                    throw WebSocketError("\(commands[answered - 1].0) failed: \(error["message"]?.stringValue ?? "an error")")
                }
                pending.remove(answered)
            }
        } catch {
            socket.close()
            throw APIError(502, "DevToolsUnreachable", "The DevTools connection to \(devtools) did not take the channel: \(error.description).")
        }
        Thread.detachNewThread { channel.readLoop() }
        return channel
    }

    private static func randomHex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The name of the channel's threads (its reader and the requests that wait), as /proc shows them.
    static let threadName = "credemu-channel"

    private func readLoop() {
        Thread.current.name = DevToolsChannel.threadName
        while true {
            do {
                received(try socket.receive())
            } catch {
                break
            }
        }
        lock.withLock { closed = true }
        socket.close()
        api.channels.remove(self)
        ended.signal()
    }

    var isClosed: Bool { lock.withLock { closed } }
    var answers: (count: Int, seconds: Double) { lock.withLock { (answered, answeringSeconds) } }
    var openContexts: Int { lock.withLock { contextCount } }

    /// Ends the channel: the reader wakes, closes the socket (Chromium then drops the session's binding and
    /// script) and leaves the board; waits up to `seconds` for that.
    func close(waiting seconds: Double = 2) {
        lock.withLock { closed = true }
        socket.shutdown()
        if ended.wait(timeout: .now() + seconds) == .success { ended.signal() }
    }

    /// One message of the DevTools connection: context bookkeeping, the channel's binding calls; anything else
    /// (answers to the replies, other events, what is not JSON) is ignored.
    func received(_ text: [UInt8]) {
        let arrived = DispatchTime.now().uptimeNanoseconds
        guard let message = try? JSONValue.parse(text), let method = message["method"]?.stringValue else { return }
        let params = message["params"]
        switch method {
        case "Runtime.executionContextCreated":
            guard let context = params?["context"], let id = DevToolsChannel.contextID(context["id"]) else { return }
            guard contexts.count < DevToolsChannel.maxContexts || contexts[id] != nil else { return }
            contexts[id] = context["origin"]?.stringValue ?? ""
        case "Runtime.executionContextDestroyed":
            if let id = DevToolsChannel.contextID(params?["executionContextId"]) { contexts[id] = nil }
        case "Runtime.executionContextsCleared":
            contexts = [:]
        case "Runtime.bindingCalled":
            guard params?["name"]?.stringValue == binding, let context = DevToolsChannel.contextID(params?["executionContextId"]) else { return }
            answer(params?["payload"]?.stringValue, context: context, arrived: arrived)
        default:
            return
        }
        let count = contexts.count
        lock.withLock { contextCount = count }
    }

    static func contextID(_ value: JSONValue?) -> Int? {
        guard let n = value?.numberValue, n.rounded() == n, n >= -2_147_483_648, n <= 2_147_483_647 else { return nil }
        return Int(n)
    }

    /// Answers one call of the binding from `context`: the request through the front door, inline on the
    /// reader thread, or on a thread of its own for one that may wait (a conditional get, a held ceremony).
    private func answer(_ payload: String?, context: Int, arrived: UInt64) {
        guard let origin = contexts[context] else { return }   // a context Chromium never reported: nothing to answer in
        let request: HTTPRequest
        switch ChannelMessage.parse(payload, origin: origin) {
        case .refused(let ident, let error):
            send(replyText(ident: ident, status: error.status, body: Array(error.body.serialized().utf8)), context: context)
            return
        case .request(let ident, let method, let path, let body):
            request = api.channelRequest(self, method: method, path: path, body: body, origin: origin)
            if !api.mayBlock(request) {
                var now = request
                now.mayWait = false
                let response = api.handle(now)
                send(replyText(ident: ident, response: response), context: context, arrived: arrived)
                return
            }
            let admitted = lock.withLock { () -> Bool in
                guard waiting < DevToolsChannel.maxWaiting else { return false }
                waiting += 1
                return true
            }
            guard admitted else {
                let busy = APIError(429, "ChannelBusy", "The channel has \(DevToolsChannel.maxWaiting) requests waiting already.")
                send(replyText(ident: .string(ident), status: busy.status, body: Array(busy.body.serialized().utf8)), context: context)
                return
            }
            var waits = request
            waits.clientGone = { [weak self] in self?.isClosed ?? true }
            let ready = waits
            Thread.detachNewThread { [self] in
                Thread.current.name = DevToolsChannel.threadName
                let response = api.handle(ready)
                send(replyText(ident: ident, response: response), context: context)
                lock.withLock { waiting -= 1 }
            }
        }
    }

    private func replyText(ident: String, response: HTTPResponse) -> [UInt8] {
        let json = response.headers.contains { $0.0 == "Content-Type" && $0.1 == "application/json" } && !response.body.isEmpty
        return replyText(ident: .string(ident), status: response.status, body: json ? response.body : Array("null".utf8))
    }

    /// `{"id", "status", "body"}`, the body spliced as the server serialized it.
    private func replyText(ident: JSONValue, status: Int, body: [UInt8]) -> [UInt8] {
        Array("{\"id\":\(ident.serialized()),\"status\":\(status),\"body\":".utf8) + body + [0x7D]
    }

    /// The reply to the shim's receiver in `context` (`Runtime.callFunctionOn`); a context gone by then is
    /// Chromium's error answer, which the reader ignores.
    private func send(_ replyObject: [UInt8], context: Int, arrived: UInt64? = nil) {
        let command = lock.withLock { () -> Int in
            nextCommand += 1
            return nextCommand
        }
        defer {
            if let arrived {
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - arrived) / 1e9
                lock.withLock { answered += 1; answeringSeconds += seconds }
            }
        }
        let head = "{\"id\":\(command),\"method\":\"Runtime.callFunctionOn\",\"params\":{\"functionDeclaration\":\"function (r) { \(reply)(r); }\","
            + "\"executionContextId\":\(context),\"arguments\":[{\"value\":"
        try? socket.send(text: Array(head.utf8) + replyObject + Array("}]}}".utf8))
    }
}

/// One message of the shim's channel, `{"id", "method", "path", "body"}` (docs/shim.md, "Transport"), read as
/// hostile: the request it asks for, or the refusal (`BadChannelMessage`, `OriginNotRelayed`).
enum ChannelMessage {
    case request(id: String, method: String, path: String, body: [UInt8]?)
    case refused(id: JSONValue, APIError)

    static func parse(_ payload: String?, origin: String) -> ChannelMessage {
        func bad(_ id: JSONValue, _ text: String) -> ChannelMessage { .refused(id: id, APIError(400, "BadChannelMessage", text)) }
        guard let payload, let message = try? JSONValue.parse(payload) else { return bad(.null, "The channel's message is not JSON.") }
        guard message.objectValue != nil else { return bad(.null, "The channel's message is not a JSON object.") }
        guard let id = message["id"]?.stringValue, id.utf8.count <= 64 else { return bad(.null, "The channel's message has no string id.") }
        guard let method = message["method"]?.stringValue, ["GET", "POST", "PATCH", "DELETE"].contains(method) else {
            return bad(.string(id), "The channel's message needs a method: GET, POST, PATCH or DELETE.")
        }
        // A path relative to the shim's target: no query, no escapes, nothing but the route's segments.
        guard let path = message["path"]?.stringValue, path.hasPrefix("/"), path.utf8.count <= 512,
              path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "\\") })
        else {
            return .refused(id: .string(id), APIError(403, "RouteNotRelayed", "The shim's channel reaches only the shim's own routes, by a path relative to its target with no query or escapes, such as /credentials/create."))
        }
        guard AllowedOrigins.isSerializedOrigin(origin), origin.hasPrefix("http://") || origin.hasPrefix("https://") else {
            return .refused(id: .string(id), APIError(403, "OriginNotRelayed", "The frame that called has no http(s) origin the browser reports."))
        }
        let body = message["body"] ?? .null
        if method == "GET" {
            guard body.isNull else { return bad(.string(id), "A GET carries no body.") }
            return .request(id: id, method: method, path: path, body: nil)
        }
        return .request(id: id, method: method, path: path, body: Array((body.isNull ? JSONValue.object([]) : body).serialized().utf8))
    }
}

/// The channels the server holds open, bounded.
final class ChannelBoard: @unchecked Sendable {
    static let limit = 16
    private let lock = NSLock()
    private var open: [String: DevToolsChannel] = [:]
    private var reserved = 0
    private var counter = 0

    /// A slot and an ID for a channel about to open, nil when `limit` are open or opening.
    func reserve() -> String? {
        lock.withLock {
            guard open.count + reserved < ChannelBoard.limit else { return nil }
            reserved += 1
            counter += 1
            return "ch" + String(counter)
        }
    }

    func opened(_ channel: DevToolsChannel?) {
        lock.withLock {
            reserved -= 1
            if let channel, !channel.isClosed { open[channel.id] = channel }
        }
    }

    func remove(_ channel: DevToolsChannel) {
        lock.withLock { if open[channel.id] === channel { open[channel.id] = nil } }
    }

    func channel(_ id: String) -> DevToolsChannel? { lock.withLock { open[id] } }

    var all: [DevToolsChannel] { lock.withLock { open.values.sorted { $0.id.count == $1.id.count ? $0.id < $1.id : $0.id.count < $1.id.count } } }
}
