import CredemuOperations
import Foundation
import WebAuthn

/// The shim's channel relayed inside `credemu serve` (docs/shim.md, "Transport"): the server's own DevTools
/// connection to one Chromium page target, on which it adds the channel's binding (`Runtime.addBinding`, a random
/// name) and the shim (`Page.addScriptToEvaluateOnNewDocument`, the script `/shim.js` serves with `channel` and
/// `channelReply`), tracks the execution contexts' origins as Chromium reports them, and answers each
/// `Runtime.bindingCalled` in-process: the message becomes a request from a page of the context's origin, which
/// the one front door (`APIServer.handle`) answers, and the reply goes back by `Runtime.callFunctionOn` of the
/// shim's receiver in that context. A cross-site iframe runs out of process, a CDP target of its own: the page's
/// session auto-attaches to such targets (`Target.setAutoAttach`, flat sessions, each paused until set up), and
/// each attached iframe's session gets the same set-up (`frameSetUp`, one list for the page's and every frame's)
/// before it runs; contexts are known per session, and a reply goes on the session its call came from. It ends
/// when the browser closes the socket, on `DELETE /channels/{id}`, or when the server stops.
///
/// Everything from the socket is hostile: a message that is not JSON, a binding call of another name, from a
/// context Chromium never reported or with no http(s) origin, an id that is not a short string, an event of a
/// session the channel never attached, is refused (a named error to the shim's receiver where there is a context
/// to answer in) or ignored, never a crash.
final class DevToolsChannel: @unchecked Sendable {
    let id: String
    let target: CeremonyTarget
    let devtools: String
    /// The `Host` the channel's requests carry: the one the client that opened it used (already checked).
    let host: String
    private let socket: WebSocketClient
    /// Weak: a channel whose server is gone (a test's server released while the browser's socket lives on)
    /// answers nothing and ends at its next message, never touches a freed server.
    private weak var api: APIServer?
    private let binding: String
    /// How Chromium begins a call of the binding, up to the payload's opening quote (`bindingCall`).
    private let callPrefix: [UInt8]
    private let reply: String
    /// `reply` and the call's opening parenthesis, as a reply's expression begins (`send`).
    private let receiverCall: [UInt8]
    /// The shim's source (a paired channel's: the handoff script), for each frame's session.
    private let source: String
    /// Each calling context's origin is allowed before its first request (POST /channels' `allowFrameOrigins`).
    private let allowFrameOrigins: Bool
    private let lock = NSLock()
    /// (session, execution context ID) -> origin, as Chromium reports them and checked once; the page's own
    /// session is nil (reader thread only).
    private var contexts: [Context: FrameOrigin] = [:]
    /// The attached iframes' sessions (reader thread only).
    private var frames: Set<String> = []
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
    /// Iframe sessions attached at once; another target is let run unattached (it gets no shim).
    static let maxFrames = 64
    /// Requests of one channel waiting at once on threads of their own (a conditional get, a held ceremony).
    static let maxWaiting = 8
    static let functionDeclaration = "function (r) { %@(r); }"

    /// A channel about to open, not connected yet (no network wait): its binding and receiver names, the shim
    /// served for them (`script(binding, reply)`), its socket.
    init(id: String, url: WebSocketURL, devtools: String, target: CeremonyTarget, host: String, api: APIServer,
         paired: Pairing? = nil, allowFrameOrigins: Bool = false, script: (String, String) throws(APIError) -> [UInt8]) throws(APIError) {
        reply = "__credemuReply_" + DevToolsChannel.randomHex(16)
        receiverCall = Array((reply + "(").utf8)
        if let paired {
            binding = paired.binding
            source = DevToolsChannel.handoffSource(paired, reply: reply)
        } else {
            binding = "__credemuChannel_" + DevToolsChannel.randomHex(16)
            source = String(decoding: try script(binding, reply), as: UTF8.self)
        }
        callPrefix = DevToolsChannel.callPrefix(binding)
        self.allowFrameOrigins = allowFrameOrigins
        do {
            socket = try WebSocketClient(url, maxMessage: APIServer.channelMaxMessage(api.configuration.maxBodyBytes))
        } catch {
            throw APIError(502, "DevToolsUnreachable", "Cannot open a DevTools connection to \(devtools): \(error.description).")
        }
        self.id = id
        self.target = target
        self.devtools = devtools
        self.host = host
        self.api = api
    }

    /// An execution context of one session: the page's (`session` nil) or an attached iframe's.
    struct Context: Hashable {
        var session: String?
        var id: Int
    }

    /// The names a driver's shim was served with for a paired channel (`/shim.js`'s `serverChannel` and
    /// `serverHandoff`): the binding the server adds, and the `window` slot the two scripts meet at.
    struct Pairing: Sendable {
        var binding: String
        var handoff: String
    }

    /// A paired channel's document-start script, in place of a shim: the top-level `const` the server's replies
    /// go to, which hands them to the driver's shim. The two scripts meet once, before the page's scripts run,
    /// through a non-enumerable `window` slot of a random name: whichever runs second (the driver's session's
    /// scripts run first in Chromium 156, measured; either order works) takes the other's offer and deletes the
    /// slot. The shim offers only when it took the binding, and this script only when the binding is there, so
    /// a document the channel reached halfway leaves no slot behind.
    static func handoffSource(_ paired: Pairing, reply: String) -> String {
        """
        /* credemu channel handoff */
        const \(reply) = (function (slot, binding) {
          let receive = null;
          const offered = Object.getOwnPropertyDescriptor(window, slot);
          if (offered) { delete window[slot]; if (typeof offered.value === 'function') receive = offered.value; }
          else if (typeof window[binding] === 'function') Object.defineProperty(window, slot, { value: function (r) { if (receive === null && typeof r === 'function') receive = r; }, configurable: true });
          return function (reply) { if (receive !== null) receive(reply); };
        })("\(paired.handoff)", "\(paired.binding)");

        """
    }

    /// What a session needs for the shim, in order: the page's at `open`, each attached iframe's before it runs.
    /// The script before the binding, so a document that has the binding runs the script too.
    static func frameSetUp(binding: String, source: String) -> [(String, JSONValue)] {
        [
            ("Page.enable", .object([])),
            ("Runtime.enable", .object([])),
            ("Page.addScriptToEvaluateOnNewDocument", .object([("source", .string(source))])),
            ("Runtime.addBinding", .object([("name", .string(binding))])),
            ("Target.setAutoAttach", .object([("autoAttach", .bool(true)), ("waitForDebuggerOnStart", .bool(true)), ("flatten", .bool(true))])),
        ]
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

    /// Connects, enables the Page and Runtime domains, adds the binding and the shim, all within `timeout`
    /// whatever the peer sends meanwhile; then starts the reader thread. `end` cuts it short.
    func open(timeout: Double) throws(APIError) {
        let deadline = Date().addingTimeInterval(timeout)
        do {
            try socket.connect(timeout: timeout)
        } catch {
            failed()
            throw APIError(502, "DevToolsUnreachable", "Cannot open a DevTools connection to \(devtools): \(error.description).")
        }
        let commands = DevToolsChannel.frameSetUp(binding: binding, source: source)
        do throws(WebSocketError) {
            var pending = Set<Int>()
            for (index, (method, params)) in commands.enumerated() {
                let message = JSONValue.object([("id", .number(Double(index + 1))), ("method", .string(method)), ("params", params)])
                try socket.send(text: message.serializedBytes())
                pending.insert(index + 1)
            }
            while !pending.isEmpty {
                let text = try socket.receive(deadline: deadline)
                guard let message = try? JSONValue.parse(text), let number = message["id"]?.numberValue, let answered = Int(exactly: number), pending.contains(answered) else {
                    received(text)
                    continue
                }
                if let error = message["error"] {
                    throw WebSocketError("\(commands[answered - 1].0) failed: \(error["message"]?.stringValue ?? "an error")")
                }
                pending.remove(answered)
            }
        } catch {
            failed()
            throw APIError(502, "DevToolsUnreachable", "The DevTools connection to \(devtools) did not take the channel: \(error.description).")
        }
        // A document that was open before the binding came has it on `window` with no shim to take it (its shim,
        // if any, ran without it): it goes, so the page never finds it.
        for context in contexts.keys where context.session == nil {
            command("Runtime.evaluate", .object([("expression", .string("delete window.\(binding)")), ("contextId", .number(Double(context.id)))]), session: nil)
        }
        Thread.detachNewThread { self.readLoop() }
    }

    /// A set-up that failed closes the socket and counts as the channel's end.
    private func failed() {
        lock.withLock { closed = true }
        socket.close()
        ended.signal()
    }

    private static func randomHex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The name of the channel's threads (its reader and the requests that wait), as /proc shows them.
    static let threadName = "credemu-channel"

    /// Names the calling thread `threadName`. Foundation names a thread only once the thread that started it has
    /// recorded its handle (`Thread.start` stores it after `pthread_create` returns), so a new thread that runs
    /// first names nothing (seen under load: a channel's reader left unnamed): it tries again, a millisecond apart.
    static func nameCurrentThread() {
        for _ in 0..<200 {
            Thread.current.name = threadName
            if Thread.current.name == threadName { return }
            usleep(1000)
        }
    }

    private func readLoop() {
        DevToolsChannel.nameCurrentThread()
        while true {
            do {
                received(try socket.receive())
            } catch {
                break
            }
        }
        lock.withLock { closed = true }
        socket.close()
        api?.channels.remove(self)
        ended.signal()
    }

    var isClosed: Bool { lock.withLock { closed } }
    var answers: (count: Int, seconds: Double) { lock.withLock { (answered, answeringSeconds) } }
    var openContexts: Int { lock.withLock { contextCount } }

    /// Ends the channel without waiting: a set-up in progress fails, the reader wakes, closes the socket
    /// (Chromium then drops the session's binding and script) and leaves the board.
    func end() {
        lock.withLock { closed = true }
        socket.shutdown()
    }

    /// Waits until the channel has ended (its reader gone, or its set-up failed), at most until `deadline`.
    func waitEnded(until deadline: DispatchTime) {
        if ended.wait(timeout: deadline) == .success { ended.signal() }
    }

    /// `end`, then waits up to `seconds` for it.
    func close(waiting seconds: Double = 2) {
        end()
        waitEnded(until: .now() + seconds)
    }

    /// One message of the DevTools connection: context bookkeeping, the channel's binding calls; anything else
    /// (answers to the replies, other events, what is not JSON) is ignored.
    func received(_ text: [UInt8]) {
        let arrived = DispatchTime.now().uptimeNanoseconds
        if DevToolsChannel.ignoredUnread(text) { return }
        if let call = DevToolsChannel.bindingCall(text, prefix: callPrefix) {
            // An event of a session this channel never attached: ignored, as below.
            if let session = call.session, !frames.contains(session) { return }
            return answer(call.payload, context: Context(session: call.session, id: call.context), arrived: arrived)
        }
        guard let message = try? JSONValue.parse(text), let method = message["method"]?.stringValue else { return }
        let params = message["params"]
        var session: String?
        if let named = message["sessionId"] {
            // An event of a session this channel never attached (or no string): ignored.
            guard let name = named.stringValue, frames.contains(name) else { return }
            session = name
        }
        switch method {
        case "Runtime.executionContextCreated":
            guard let context = params?["context"], let id = DevToolsChannel.contextID(context["id"]) else { return }
            let key = Context(session: session, id: id)
            guard contexts.count < DevToolsChannel.maxContexts || contexts[key] != nil else { return }
            contexts[key] = FrameOrigin(context["origin"]?.stringValue ?? "")
        case "Runtime.executionContextDestroyed":
            if let id = DevToolsChannel.contextID(params?["executionContextId"]) { contexts[Context(session: session, id: id)] = nil }
        case "Runtime.executionContextsCleared":
            contexts = contexts.filter { $0.key.session != session }
        case "Runtime.bindingCalled":
            guard params?["name"]?.stringValue == binding, let id = DevToolsChannel.contextID(params?["executionContextId"]) else { return }
            answer(params?["payload"]?.stringValue, context: Context(session: session, id: id), arrived: arrived)
        case "Target.attachedToTarget":
            attached(params, by: session)
        case "Target.detachedFromTarget":
            guard let gone = params?["sessionId"]?.stringValue, frames.remove(gone) != nil else { return }
            contexts = contexts.filter { $0.key.session != gone }
        default:
            return
        }
        let count = contexts.count
        lock.withLock { contextCount = count }
    }

    /// The events `received` reads; every other message is ignored.
    static let readEvents = ["Runtime.executionContextCreated", "Runtime.executionContextDestroyed", "Runtime.executionContextsCleared",
                             "Runtime.bindingCalled", "Target.attachedToTarget", "Target.detachedFromTarget"].map { Array($0.utf8) }

    /// Whether `text` is a message `received` would ignore, told from its first bytes without parsing it: an
    /// answer to a command (`{"id":`), or an event (`{"method":"NAME"`, as Chromium writes every event) of a name
    /// it does not read (a console message a ceremony logs, as long as the ceremony's own messages). Any other
    /// message is parsed and read. Ignoring answers and records nothing, so a hostile message that begins so and
    /// names a read event further on gains nothing.
    static func ignoredUnread(_ text: [UInt8]) -> Bool {
        text.withUnsafeBufferPointer { bytes in
            let answer = "{\"id\":".utf8, event = "{\"method\":\"".utf8
            if bytes.starts(with: answer) { return true }
            guard bytes.starts(with: event) else { return false }
            let name = bytes.dropFirst(event.count)
            guard let end = name.firstIndex(of: UInt8(ascii: "\"")) else { return false }
            let method = name[..<end]
            return !readEvents.contains { method.elementsEqual($0) }
        }
    }

    /// `{"method":"Runtime.bindingCalled","params":{"name":"BINDING","payload":`, as Chromium begins every call
    /// of the binding.
    static func callPrefix(_ binding: String) -> [UInt8] {
        Array("{\"method\":\"Runtime.bindingCalled\",\"params\":{\"name\":".utf8) + JSONValue.string(binding).serializedBytes()
            + Array(",\"payload\":".utf8)
    }

    /// A call of the binding read without parsing the message into a tree, when it is written exactly as Chromium
    /// writes one: `callPrefix`, the payload's string, `,"executionContextId":` and an integer, `}`, then `}` or
    /// `,"sessionId":"ID"}` with an ID of plain characters, and nothing else. Anything else (another order,
    /// whitespace, a member twice, a session ID with escapes) is nil and goes through `received`'s parse, which
    /// reads the same call the same way; so this path only skips work, never reads a message differently. A
    /// relayed assertion's event parsed whole was about a tenth of the channel's answer (docs/benchmarks.md).
    static func bindingCall(_ text: [UInt8], prefix: [UInt8]) -> (payload: String, context: Int, session: String?)? {
        text.withUnsafeBufferPointer { bytes -> (payload: String, context: Int, session: String?)? in
            guard bytes.starts(with: prefix), let (payload, afterPayload) = try? JSONValue.string(in: bytes, at: prefix.count) else { return nil }
            var i = afterPayload
            func take(_ literal: StaticString) -> Bool {
                let count = literal.utf8CodeUnitCount
                guard i + count <= bytes.count,
                      memcmp(bytes.baseAddress! + i, literal.utf8Start, count) == 0 else { return false }
                i += count
                return true
            }
            guard take(",\"executionContextId\":") else { return nil }
            // An integer as JSON writes one (no leading zero, no fraction or exponent), within Int32.
            let digitsStart = i
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            let first = i
            while i < bytes.count, i - first < 11, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
            guard i > first, i - first <= 10, bytes[first] != UInt8(ascii: "0") || i - first == 1,
                  let context = Int(String(decoding: UnsafeBufferPointer(rebasing: bytes[digitsStart..<i]), as: UTF8.self)),
                  context >= -2_147_483_648, context <= 2_147_483_647 else { return nil }
            guard take("}") else { return nil }
            if take("}") { return i == bytes.count ? (payload, context, nil) : nil }
            guard take(",\"sessionId\":\"") else { return nil }
            let sessionStart = i
            while i < bytes.count, bytes[i] > 0x20, bytes[i] < 0x7F, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") { i += 1 }
            let session = String(decoding: UnsafeBufferPointer(rebasing: bytes[sessionStart..<i]), as: UTF8.self)
            guard take("\"}"), i == bytes.count else { return nil }
            return (payload, context, session)
        }
    }

    /// A target the page's session (or a frame's) attached to, paused: an iframe gets the shim's set-up on its
    /// own session, then runs; any other target (a worker), or an iframe over `maxFrames`, runs unattached.
    private func attached(_ params: JSONValue?, by parent: String?) {
        guard let session = params?["sessionId"]?.stringValue, (1...64).contains(session.utf8.count), !frames.contains(session) else { return }
        if params?["targetInfo"]?["type"]?.stringValue == "iframe" && frames.count < DevToolsChannel.maxFrames {
            frames.insert(session)
            for (method, params) in DevToolsChannel.frameSetUp(binding: binding, source: source) {
                command(method, params, session: session)
            }
            command("Runtime.runIfWaitingForDebugger", .object([]), session: session)
        } else {
            command("Runtime.runIfWaitingForDebugger", .object([]), session: session)
            command("Target.detachFromTarget", .object([("sessionId", .string(session))]), session: parent)
        }
    }

    /// A command whose answer nobody waits for (the reader ignores answers), on `session` (nil: the page's).
    private func command(_ method: String, _ params: JSONValue, session: String?) {
        var members: [(String, JSONValue)] = [("id", .number(Double(nextID()))), ("method", .string(method)), ("params", params)]
        if let session { members.append(("sessionId", .string(session))) }
        try? socket.send(text: JSONValue.object(members).serializedBytes())
    }

    private func nextID() -> Int {
        lock.withLock { () -> Int in
            nextCommand += 1
            return nextCommand
        }
    }

    static func contextID(_ value: JSONValue?) -> Int? {
        guard let n = value?.numberValue, n.rounded() == n, n >= -2_147_483_648, n <= 2_147_483_647 else { return nil }
        return Int(n)
    }

    /// Answers one call of the binding from `context`: the request through the front door, inline on the
    /// reader thread, or on a thread of its own for one that may wait (a conditional get, a held ceremony).
    private func answer(_ payload: String?, context: Context, arrived: UInt64) {
        guard let origin = contexts[context] else { return }   // a context Chromium never reported: nothing to answer in
        guard let api else { return end() }   // the server is gone
        let request: HTTPRequest
        switch ChannelMessage.parse(payload, origin: origin) {
        case .refused(let ident, let error):
            send(replyText(ident: ident, status: error.status, body: error.body.serializedBytes()), context: context)
            return
        case .request(let ident, let method, let path, let body):
            if allowFrameOrigins { _ = api.origins.insert(origin.text) }   // full: the request is refused as a foreign page's
            request = api.channelRequest(self, method: method, path: path, body: body, origin: origin.text)
            if !api.mayBlock(request) {
                var now = request
                now.mayWait = false
                let response = api.handle(now)
                // The request's and the response's storage (the payload's tree among it) is freed once the reply
                // has gone, not on its way.
                withExtendedLifetime((now, response)) {
                    send(replyText(ident: ident, response: response), context: context, arrived: arrived)
                }
                return
            }
            let admitted = lock.withLock { () -> Bool in
                guard waiting < DevToolsChannel.maxWaiting else { return false }
                waiting += 1
                return true
            }
            guard admitted else {
                let busy = APIError(429, "ChannelBusy", "The channel has \(DevToolsChannel.maxWaiting) requests waiting already.")
                send(replyText(ident: .string(ident), status: busy.status, body: busy.body.serializedBytes()), context: context)
                return
            }
            var waits = request
            waits.clientGone = { [weak self] in self?.isClosed ?? true }
            let ready = waits
            Thread.detachNewThread { [self, api] in
                DevToolsChannel.nameCurrentThread()
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

    /// `{"id", "status", "body"}`, the body spliced as the server serialized it: written into one buffer, the body
    /// copied once.
    private func replyText(ident: JSONValue, status: Int, body: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(body.count + 96)
        text += "{\"id\":".utf8
        text += ident.serializedBytes()
        text += ",\"status\":".utf8
        text += String(status).utf8
        text += ",\"body\":".utf8
        text += body
        text.append(0x7D)
        return text
    }

    /// The reply to the shim's receiver in `context`: `Runtime.evaluate` of `RECEIVER(reply)` there; a context gone
    /// by then is Chromium's error answer, which the reader ignores.
    ///
    /// The reply is the server's own serialization (`replyText`: the page's id re-serialized, the front door's
    /// body), and JSON is a subset of ECMAScript's literals (ES2019, JSON superset), so the receiver gets the value
    /// `Runtime.callFunctionOn` would hand it as an argument. Chromium answers the evaluation sooner: about 25 µs a
    /// round trip in a raw DevTools loop, 253 against 278 µs (docs/benchmarks.md). One key differs: `__proto__` in a
    /// literal sets the prototype where an argument's value has an own property, so a reply that holds the text
    /// anywhere goes as an argument.
    private func send(_ replyObject: [UInt8], context: Context, arrived: UInt64? = nil) {
        let command = nextID()
        defer {
            if let arrived {
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - arrived) / 1e9
                lock.withLock { answered += 1; answeringSeconds += seconds }
            }
        }
        // Written into one buffer: the reply is escaped once, from its bytes, into the expression's string.
        var message: [UInt8] = []
        message.reserveCapacity(replyObject.count + replyObject.count / 4 + 192)
        message += "{\"id\":".utf8
        message += String(command).utf8
        if let session = context.session {
            message += ",\"sessionId\":".utf8
            message += JSONValue.string(session).serializedBytes()
        }
        if DevToolsChannel.literalSafe(replyObject) {
            message += ",\"method\":\"Runtime.evaluate\",\"params\":{\"contextId\":".utf8
            message += String(context.id).utf8
            message += ",\"expression\":\"".utf8
            message += receiverCall
            replyObject.withUnsafeBufferPointer { JSONValue.writeEscaped($0, to: &message) }
            message += ")\"}}".utf8
        } else {
            message += ",\"method\":\"Runtime.callFunctionOn\",\"params\":{\"functionDeclaration\":\"function (r) { \(reply)(r); }\",".utf8
            message += "\"executionContextId\":\(context.id),\"arguments\":[{\"value\":".utf8
            message += replyObject
            message += "}]}}".utf8
        }
        try? socket.send(text: message)
    }

    /// Whether a serialized reply reads the same as a JS literal: it names no `__proto__` (see `send`).
    static func literalSafe(_ json: [UInt8]) -> Bool { !json.containsBytes(protoWord) }

    private static let protoWord = Array("__proto__".utf8)
}

/// One message of the shim's channel, `{"id", "method", "path", "body"}` (docs/shim.md, "Transport"), read as
/// hostile: the request it asks for, or the refusal (`BadChannelMessage`, `OriginNotRelayed`).
enum ChannelMessage {
    /// `body` is the message's body member as the page wrote it (`{}` for none or null), the bytes the front door
    /// bounds and scans as it does an HTTP request's; `value` is those bytes parsed, which the route reads
    /// (`HTTPRequest.bodyValue`) instead of parsing them again.
    case request(id: String, method: String, path: String, body: (bytes: [UInt8], value: JSONValue)?)
    case refused(id: JSONValue, APIError)

    static func parse(_ payload: String?, origin: FrameOrigin) -> ChannelMessage {
        func bad(_ id: JSONValue, _ text: String) -> ChannelMessage { .refused(id: id, APIError(400, "BadChannelMessage", text)) }
        guard var payload else { return bad(.null, "The channel's message is not JSON.") }
        return payload.withUTF8 { text -> ChannelMessage in
            guard let (message, spans) = try? JSONValue.parseWithMemberSpans(text) else { return bad(.null, "The channel's message is not JSON.") }
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
            guard origin.relayable else {
                return .refused(id: .string(id), APIError(403, "OriginNotRelayed", "The frame that called has no http(s) origin the browser reports."))
            }
            let body = message["body"] ?? .null
            if method == "GET" {
                guard body.isNull else { return bad(.string(id), "A GET carries no body.") }
                return .request(id: id, method: method, path: path, body: nil)
            }
            guard !body.isNull, let span = spans["body"] else { return .request(id: id, method: method, path: path, body: (Array("{}".utf8), .object([]))) }
            return .request(id: id, method: method, path: path, body: (Array(UnsafeBufferPointer(rebasing: text[span])), body))
        }
    }
}

/// The origin of a calling frame's execution context as Chromium reported it, and whether a request may come from
/// it: an http(s) origin as a browser serializes it (checked once, when the context is reported).
struct FrameOrigin {
    let text: String
    let relayable: Bool

    init(_ text: String) {
        self.text = text
        relayable = AllowedOrigins.isSerializedOrigin(text) && (text.hasPrefix("http://") || text.hasPrefix("https://"))
    }
}

/// The channels the server holds open or is opening, bounded; once the server stops, it opens no more.
final class ChannelBoard: @unchecked Sendable {
    static let limit = 16
    private let lock = NSLock()
    private var open: [String: DevToolsChannel] = [:]
    /// Channels in their set-up, which `stop` must reach too.
    private var opening: [String: DevToolsChannel] = [:]
    private var counter = 0
    private var stopping = false

    /// A channel about to open, made by `make` with a new ID in a free slot and held as opening; refused when
    /// `limit` are open or opening (409) or the server is stopping (503). `make` must not wait on the network.
    func reserve(_ make: (String) throws(APIError) -> DevToolsChannel) throws(APIError) -> DevToolsChannel {
        try lock.locked { () throws(APIError) -> DevToolsChannel in
            guard !stopping else { throw APIError(503, "ServerStopping", "The server is stopping: it opens no channel.") }
            guard open.count + opening.count < ChannelBoard.limit else {
                throw APIError(409, "Conflict", "The server holds \(ChannelBoard.limit) channels already; DELETE /channels/{id} one or close its tab.")
            }
            counter += 1
            let channel = try make("ch" + String(counter))
            opening[channel.id] = channel
            return channel
        }
    }

    /// The end of `channel`'s set-up: it joins the board if it opened and nothing has ended it since.
    func settled(_ channel: DevToolsChannel, opened: Bool) {
        lock.withLock {
            opening[channel.id] = nil
            if opened && !channel.isClosed && !stopping { open[channel.id] = channel }
        }
    }

    func remove(_ channel: DevToolsChannel) {
        lock.withLock { if open[channel.id] === channel { open[channel.id] = nil } }
    }

    /// The server stops: no channel opens from now on; every channel open or opening, for the caller to end.
    func stop() -> [DevToolsChannel] {
        lock.withLock {
            stopping = true
            return Array(open.values) + Array(opening.values)
        }
    }

    func channel(_ id: String) -> DevToolsChannel? { lock.withLock { open[id] } }

    var all: [DevToolsChannel] { lock.withLock { open.values.sorted { $0.id.count == $1.id.count ? $0.id < $1.id : $0.id.count < $1.id.count } } }
}
