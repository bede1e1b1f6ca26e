import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension APIServer {
    /// The shim's channel relayed inside the server (`DevToolsChannel`): the test code hands the server a Chromium
    /// page target's DevTools websocket URL and the shim's target, and the server answers the page's shim itself.
    /// The test code's only (`driver`: no page, not the console).
    static let channelRoutes: [Route] = [
        Route("POST", "/channels", .driver, mayBlock: true) { s, r in try s.openChannel(r) },
        Route("GET", "/channels", .driver) { s, _ in
            s.json(200, .object([("channels", .array(s.channels.all.map(APIServer.channelJSON)))]))
        },
        Route("DELETE", "/channels/{id}", .driver) { s, r in
            guard let channel = s.channels.channel(r.first) else { throw APIError.notFound("No channel \(r.first); GET /channels lists them.") }
            channel.close()
            return s.json(200, .object([("removed", .string(channel.id))]))
        },
    ]

    /// A DevTools connection's messages may be this long: a binding call carries a request body (at most the
    /// server's body cap) escaped once more as a JSON string; a longer message (a page's huge console line) is
    /// read past and dropped.
    static func channelMaxMessage(_ maxBodyBytes: Int) -> Int { 2 * maxBodyBytes + 64 * 1024 }

    static func channelJSON(_ channel: DevToolsChannel) -> JSONValue {
        let answers = channel.answers
        return .object([("id", .string(channel.id)), ("devtools", .string(channel.devtools)),
                        (channel.target.kind.rawValue, .string(channel.target.name)), ("contexts", .number(Double(channel.openContexts))),
                        ("answered", .number(Double(answers.count))), ("answeringMs", .number((answers.seconds * 1e6).rounded() / 1000))])
    }

    /// POST /channels: `{"devtools": "ws://127.0.0.1:PORT/devtools/page/ID", "profile" | "device", "autofill",
    /// "fillBinding", "autofillEvents", "paired", "allowFrameOrigins"}` (autofill to autofillEvents as `/shim.js`
    /// takes them).
    ///
    /// `paired: {"binding", "handoff"}`: the page's shim is the driver's already (Playwright's init script, served
    /// with `serverChannel` and `serverHandoff` of these names), so the server adds the binding of that name and, in
    /// place of a shim, the small script that hands the shim its reply receiver (`DevToolsChannel.handoffSource`):
    /// the driver's shim then sends through the server and keeps the driver's own channel for documents the server
    /// did not reach. `allowFrameOrigins`: each calling context's http(s) origin is allowed before its first
    /// request, as `POST /origins` would (the origin Chromium reports, never one the page wrote).
    func openChannel(_ r: RouteRequest) throws(APIError) -> HTTPResponse {
        let body = try r.body()
        try body.only(["devtools", "profile", "device", "autofill", "fillBinding", "autofillEvents", "paired", "allowFrameOrigins"])
        let devtools = try body.requiredString("devtools")
        guard let url = DevToolsChannel.pageURL(devtools) else {
            throw APIError(.invalidInput("body.devtools must be a page target's DevTools websocket URL on a loopback host, ws://127.0.0.1:PORT/devtools/page/ID."))
        }
        let profile = try body.string("profile"), device = try body.string("device")
        guard profile == nil || device == nil else { throw APIError(.invalidInput("body takes profile or device, not both.")) }
        let target: CeremonyTarget = device.map { .device($0) } ?? .profile(profile ?? Vault.defaultProfile)
        try APIError.wrap { () throws(OperationError) in
            switch target {
            case .profile(let name): _ = try operations.profile(name)
            case .device(let name): _ = try operations.device(name)
            }
        }
        var query = [target.kind.rawValue: target.name]
        if try body.bool("autofill") == false { query["autofill"] = "0" }
        if try body.bool("autofillEvents") == true { query["autofillEvents"] = "1" }
        if let fill = try body.string("fillBinding") { query["fillBinding"] = fill }
        let paired = try APIServer.pairing(body, shimMembers: ["autofill", "fillBinding", "autofillEvents"].contains { body.value[$0] != nil })
        if let token = configuration.token { query["token"] = token }
        let allowFrameOrigins = try body.bool("allowFrameOrigins") ?? false
        let host = r.http.headers["host"] ?? "127.0.0.1"
        let channel = try channels.reserve { (id) throws(APIError) in
            try DevToolsChannel(id: id, url: url, devtools: devtools, target: target, host: host, api: self, paired: paired,
                                allowFrameOrigins: allowFrameOrigins) { (binding, reply) throws(APIError) in
                var script = query
                script["channel"] = binding
                script["channelReply"] = reply
                return try self.shim(HTTPRequest(method: "GET", path: "/shim.js", query: script, headers: ["host": host], body: [], bodyTooLarge: false)).body
            }
        }
        var opened = false
        defer { channels.settled(channel, opened: opened) }
        try channel.open(timeout: APIServer.channelSetUpSeconds)
        opened = true
        return json(201, APIServer.channelJSON(channel))
    }

    /// POST /channels' `paired` member, read: the binding and handoff names the driver's shim was served with, or
    /// nil. A paired channel serves no shim, so the shim's own members (`autofill`, `fillBinding`,
    /// `autofillEvents`) are refused beside it.
    static func pairing(_ body: RequestBody, shimMembers: Bool) throws(APIError) -> DevToolsChannel.Pairing? {
        let read = try APIError.wrap { () throws(OperationError) -> (String, String)? in
            guard let paired = try body.fields.object("paired") else { return nil }
            try paired.onlyKeys(["binding", "handoff"])
            return (try paired.requiredString("binding"), try paired.requiredString("handoff"))
        }
        guard let (binding, handoff) = read else { return nil }
        guard isBindingName(binding), isBindingName(handoff), binding != handoff else {
            throw APIError(.invalidInput("body.paired.binding and body.paired.handoff must be two different JavaScript identifiers of 1 to 64 ASCII letters, digits and '_', not starting with a digit."))
        }
        guard !shimMembers else {
            throw APIError(.invalidInput("body.paired names the driver's shim: the shim's own members (autofill, fillBinding, autofillEvents) go to that shim, not here."))
        }
        return DevToolsChannel.Pairing(binding: binding, handoff: handoff)
    }

    /// A channel's message as the front door sees it: a request from a page of `origin` (the execution
    /// context's, as Chromium reports it) to the channel's target, with the target's page token when the server
    /// has a token, marked `viaChannel` so only the shim's own routes answer.
    /// The body as the message carried it: its bytes, which every guard reads as it reads an HTTP body (the size
    /// bound, the media type, `mayBlock`'s scan), and their parse, which the route's reader takes as it stands.
    func channelRequest(_ channel: DevToolsChannel, method: String, path: String, body: (bytes: [UInt8], value: JSONValue)?, origin: String) -> HTTPRequest {
        var headers = ["host": channel.host, "origin": origin]
        if body != nil { headers["content-type"] = "application/json" }
        if let token = configuration.token {
            headers["authorization"] = "Bearer " + PageToken.derive(from: token, kind: channel.target.kind, name: channel.target.name)
        }
        let prefix = channel.target.kind == .device ? "/devices/" : "/profiles/"
        let tooLarge = (body?.bytes.count ?? 0) > configuration.maxBodyBytes
        var request = HTTPRequest(method: method, path: prefix + channel.target.name + path, query: [:], headers: headers,
                                  body: tooLarge ? [] : body?.bytes ?? [], bodyTooLarge: tooLarge)
        request.viaChannel = true
        if !tooLarge { request.bodyValue = body?.value }
        return request
    }

    /// Seconds a channel's set-up may take (connect, handshake, the set-up commands' answers), whatever the peer
    /// sends meanwhile.
    static let channelSetUpSeconds = 10.0

    /// Ends every channel, open or in its set-up, at once, and refuses new ones (the server is stopping); waits
    /// up to 2 s in all for their readers to go.
    public func closeChannels() {
        let all = channels.stop()
        for channel in all { channel.end() }
        let deadline = DispatchTime.now() + 2
        for channel in all { channel.waitEnded(until: deadline) }
    }
}
