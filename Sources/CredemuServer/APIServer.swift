import CredemuEngine
import CredemuOperations
import Foundation
import Shipped
import Signing
import Vault
import WebAuthn

/// The JSON API over one vault: the front door (host, origin, media type, token, route) and thin handlers
/// over `Operations`. Every route is in `routes` and in `Resources/openapi.json`.
public final class APIServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var token: String?
        /// Origins allowed to call the API from a page (CORS); "*" allows any.
        public var allowedOrigins: Set<String>
        /// Host names (without port) accepted besides loopback names and the bound address.
        public var allowedHosts: Set<String>
        public var maxBodyBytes: Int

        /// The body cap when none is given (`credemu serve --max-body`'s default too).
        public static let defaultMaxBodyBytes = 256 * 1024

        public init(token: String? = nil, allowedOrigins: Set<String> = [], allowedHosts: Set<String> = [], maxBodyBytes: Int = defaultMaxBodyBytes) {
            self.token = token
            self.allowedOrigins = allowedOrigins
            self.allowedHosts = allowedHosts
            self.maxBodyBytes = maxBodyBytes
        }

        /// Refuses a configuration that would expose the vault: a non-loopback bind address without a token.
        public func check(bindAddress: String) throws(ServerError) {
            // An origin no browser sends in `Origin` (a default port, a path, upper case) would never match: say so.
            for origin in allowedOrigins.sorted() where origin != "*" && !AllowedOrigins.isSerializedOrigin(origin) {
                throw ServerError("--allow-origin \(origin) is not an origin a browser sends: give scheme://host[:port] in lower case, "
                                  + "with no path and no default port (https://example.com, not https://example.com:443).")
            }
            guard token == nil, !HostCheck.isLoopbackAddress(bindAddress) else { return }
            throw ServerError("--host \(bindAddress) is reachable from other machines: give --token TOKEN too (every request must then send 'Authorization: Bearer TOKEN'), or bind a loopback address such as 127.0.0.1.")
        }
    }

    let operations: Operations
    let configuration: Configuration
    /// `configuration.allowedOrigins`, and those added since with `POST /origins`.
    let origins: AllowedOrigins
    /// The shim's channels the server relays itself (`POST /channels`).
    let channels = ChannelBoard()
    /// The demo shop `POST /demo` starts (offered by `credemu serve`: `offerDemo`).
    let demo = DemoBoard()
    private let hosts: HostCheck

    /// Serves `operations`; `bindAddress` is the address the server listens on, whose name requests may use.
    public init(operations: Operations, configuration: Configuration, bindAddress: String = "127.0.0.1") throws {
        self.operations = operations
        self.configuration = configuration
        origins = AllowedOrigins(configuration.allowedOrigins)
        hosts = HostCheck(bindAddress: bindAddress, allowed: configuration.allowedHosts)
        operations.conditionalGetsWait = true
        // A server waits between requests: its signatures' setups are made in the meantime (SignAhead).
        SignAhead.start()
        _ = try operations.profile(Vault.defaultProfile)
    }

    /// A server over `vault` with its own operations layer.
    public convenience init(vault: Vault, registry: PolicyRegistry, configuration: Configuration, bindAddress: String = "127.0.0.1") throws {
        try self.init(operations: try Operations(vault: vault, registry: registry), configuration: configuration, bindAddress: bindAddress)
    }

    /// Whether the request may wait or run long: a scenario run, a ceremony an armed hold makes wait, a conditional
    /// get waiting for the simulated user's pick (a body naming "conditional" is taken to be one). A request this
    /// misses is answered on a pool thread with `mayWait` false: it waits for nothing.
    public func mayBlock(_ request: HTTPRequest) -> Bool {
        // Asked of every request before it is handled: byte checks against the mayBlock routes' tails, no route
        // lookup.
        guard request.method == "POST" else { return false }
        let path = request.path.utf8
        for (prefix, device) in APIServer.targetPrefixes {
            guard path.starts(with: prefix.utf8) else { continue }
            let rest = path.dropFirst(prefix.utf8.count)
            guard let slash = rest.firstIndex(of: UInt8(ascii: "/")), slash != rest.startIndex else { return false }
            let tail = rest[slash...]
            guard APIServer.blockingTailBytes.contains(where: { tail.count == $0.count && tail.elementsEqual($0) }) else { return false }
            if APIServer.mentionsConditional(request.body) { return true }
            let name = String(decoding: rest[..<slash], as: UTF8.self)
            // A device's ceremony waits out a hold armed on any of its provider accounts.
            let accounts = device ? ((try? operations.device(name))?.providers ?? []) : [name]
            return accounts.contains { operations.holds.isArmed(profile: $0) }
        }
        // By segments, as routing matches them ("/scenarios//run/" is the same route); none is a target's.
        return APIServer.blockingPaths.contains("/" + request.segments.joined(separator: "/"))
    }

    private static let targetPrefixes = [("/profiles/", false), ("/devices/", true)]

    /// What follows `/profiles/{profile}` or `/devices/{device}` in the routes the table marks `mayBlock` (POST only);
    /// the two have the same tails.
    static let blockingTails: [String] = Array(Set(routes.filter { $0.mayBlock && $0.template.contains("{") }.map { route in
        precondition(route.method == "POST" && (route.template.hasPrefix("/profiles/{profile}/") || route.template.hasPrefix("/devices/{device}/")),
                     "a mayBlock route with parameters is a profile's or a device's POST")
        return String(route.template.drop { $0 != "}" }.dropFirst())
    })).sorted()

    /// `blockingTails` as bytes, as `mayBlock` compares them.
    private static let blockingTailBytes = blockingTails.map { Array($0.utf8) }

    /// The mayBlock routes without parameters (POST only), which always run off the pool threads: a scenario run.
    static let blockingPaths: Set<String> = Set(routes.filter { $0.mayBlock && !$0.template.contains("{") }.map { route in
        precondition(route.method == "POST", "a mayBlock route is a POST")
        precondition(!targetPrefixes.contains { route.template.hasPrefix($0.0) }, "a mayBlock route under a target has its parameter")
        return route.template
    })

    private static let conditionalWord = Array("conditional".utf8)

    static func mentionsConditional(_ body: [UInt8]) -> Bool { body.containsBytes(conditionalWord) }

    /// Answers one request. Never throws: every failure is a JSON error with its status.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var cors: [(String, String)] = []
        var response: HTTPResponse
        let origin = request.headers["origin"]
        var caller = CallerKind.operator
        do throws(APIError) {
            try hosts.check(request)
            if let origin, allowsCORS(origin) { cors = corsHeaders(origin, preflight: request.method == "OPTIONS") }
            caller = callerKind(request, origin: origin, corsAllowed: !cors.isEmpty)
            if request.method == "OPTIONS" {
                if case .foreignPage(let origin) = caller { throw APIError.forbiddenOrigin(origin) }
                response = HTTPResponse(status: 204, headers: [("Access-Control-Max-Age", "600")])
            } else {
                response = try dispatch(request, caller: caller)
            }
        } catch {
            response = HTTPResponse(status: error.status, headers: error.headers, body: error.body.serializedBytes())
        }
        if !response.headers.contains(where: { $0.0 == "Content-Type" }) && response.status != 204 {
            response.headers.append(("Content-Type", "application/json"))
        }
        // Which account answered is the test code's to know: a page is never told the profiles behind a device.
        if caller.restrictedTo != nil { response.headers.removeAll { $0.0 == APIServer.providerHeader } }
        // The shim's requests ask for refusals in the body (X-Credemu-Errors: body): 200, with the status in
        // X-Credemu-Status, so the page's console shows no failed fetch where a browser shows none.
        if request.headers["x-credemu-errors"] == "body", response.status >= 400, !cors.isEmpty || origin == nil {
            response.headers.append(("X-Credemu-Status", String(response.status)))
            response.status = 200
        }
        response.headers += [("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store")] + cors
        if !cors.isEmpty { response.headers.append(("Access-Control-Expose-Headers", "X-Credemu-Status, Retry-After")) }
        return response
    }

    /// The caller's kind, from its `Origin` alone: none is an operator, the server's own the console, an allowed one
    /// a page. A request relayed from a frame (`isRelayed`) is a page of the frame's origin whatever that origin is,
    /// the server's own included: a browser gives no page the rights of the server's console, nor does a channel.
    func callerKind(_ request: HTTPRequest, origin: String?, corsAllowed: Bool) -> CallerKind {
        guard let origin else { return .operator }
        if !request.isRelayed && origin == hosts.ownOrigin(request) { return .console }
        return corsAllowed ? .page(origin) : .foreignPage(origin)
    }

    /// The route the request names: its entry and parameters, or the 404 or 405 the table implies.
    static func route(for request: HTTPRequest) throws(APIError) -> (Route, [String]) {
        let segments = request.segments
        let candidates = APIServer.routesBySegmentCount[segments.count] ?? []
        // The first of the method that fits, in the table's order; the others' fit is asked only for a 405.
        for route in candidates where route.method == request.method {
            if let parameters = route.match(segments) { return (route, parameters) }
        }
        let methods = candidates.filter { $0.match(segments) != nil }.map(\.method)
        guard methods.isEmpty else {
            let allowed = Set(methods).sorted().joined(separator: ", ")
            throw APIError(405, "MethodNotAllowed", "\(request.method) is not allowed on \(request.path); it takes \(allowed).",
                           headers: [("Allow", allowed + ", OPTIONS")])
        }
        throw .notFound("No route \(request.method) \(request.path); the API is described at /openapi.json.")
    }

    /// The front door after the host check: route, the route's scope against the caller, token, media type,
    /// size; then the handler. No handler runs for a caller its route's scope does not admit.
    private func dispatch(_ request: HTTPRequest, caller: CallerKind) throws(APIError) -> HTTPResponse {
        let (route, parameters): (Route, [String])
        do {
            (route, parameters) = try APIServer.route(for: request)
        } catch where request.isRelayed {
            throw APIError.notRelayed(request.method, request.path)
        }
        if request.isRelayed && !route.relayed {
            throw APIError.notRelayed(route.method, route.template)
        }
        guard route.scope.admits(caller) else { throw APIError.outOfScope(route, caller) }
        if route.scope != .public { try authorize(request, route, parameters, caller) }
        if request.method != "GET" { try APIServer.checkMediaType(request) }
        if request.bodyTooLarge {
            throw APIError(413, "PayloadTooLarge", "The request body exceeds \(configuration.maxBodyBytes) bytes.")
        }
        let routed = RouteRequest(http: request, route: route, parameters: parameters, caller: caller)
        // A page is never told which account behind a device answered: not in a body, not in an error.
        guard caller.restrictedTo != nil, case .device? = routed.target else { return try run(route, routed) }
        do {
            var response = try run(route, routed)
            if let body = try? JSONValue.parse(response.body), body["profile"] != nil {
                response.body = APIServer.withoutProfile(body).serializedBytes()
            }
            return response
        } catch {
            var refusal = error
            refusal.body = APIServer.withoutProfile(error.body)
            throw refusal
        }
    }

    /// Runs a handler; an operation's refusal becomes its HTTP refusal here, once for every route.
    private func run(_ route: Route, _ request: RouteRequest) throws(APIError) -> HTTPResponse {
        do {
            return try route.handler(self, request)
        } catch let error as APIError {
            throw error
        } catch let error as OperationError {
            throw APIError(error)
        } catch {
            throw APIError(500, "InternalError", "\(route.method) \(route.template) failed: \(error)")
        }
    }

    /// A device's answer as a page sees it: no `profile` member, at the top or in `error`.
    static func withoutProfile(_ body: JSONValue) -> JSONValue {
        guard let members = body.objectValue else { return body }
        return .object(members.filter { $0.0 != "profile" }.map { ($0.0, $0.0 == "error" ? withoutProfile($0.1) : $0.1) })
    }

    /// `Authorization: Bearer TOKEN`, the scheme matched case-insensitively (RFC 7235 §2.1): the server's token,
    /// or on a page route the page token (`PageToken`) of the route's own profile or device, from a page.
    ///
    /// The page token is in the page, where any of its scripts may read it, so it never gives more than a page
    /// has: sent without the page's `Origin` (as the operator, who may `?reveal=true` passwords) or with the
    /// server's own (as the console), it opens nothing (issue 31). A browser always sends `Origin` with a request
    /// that carries an `Authorization` header, since only a CORS request may.
    private func authorize(_ request: HTTPRequest, _ route: Route, _ parameters: [String], _ caller: CallerKind) throws(APIError) {
        guard let token = configuration.token else { return }
        let given = request.headers["authorization"] ?? ""
        let parts = given.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        if parts.count == 2 && parts[0].lowercased() == "bearer" {
            let credential = Substring(parts[1].drop(while: { $0 == " " }))
            if APIServer.constantTimeEqual(Array(credential.utf8), Array(token.utf8)) { return }
            if route.scope == .page, let kind = route.targetKind, let name = parameters.first,
               credential.hasPrefix(PageToken.prefix), PageToken.opens(credential, token: token, kind: kind, name: name) {
                guard case .page = caller else { throw APIError.pageTokenOutsidePage }
                return
            }
        }
        throw APIError.unauthorized
    }

    static func constantTimeEqual<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool where A.Element == UInt8, B.Element == UInt8 {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    /// POST and PATCH, and any request with a body, must be `application/json`: the media types a page can
    /// send without a CORS preflight (text/plain, forms) are refused, so a foreign page cannot act.
    static func checkMediaType(_ request: HTTPRequest) throws(APIError) {
        if request.headers["content-type"] == "application/json" { return }
        // The media type before any parameter, without surrounding spaces or tabs, in any case (RFC 9110 §8.3.1).
        let type = request.headers["content-type"].map { value -> String in
            let bytes = value.utf8.prefix { $0 != UInt8(ascii: ";") }.drop { $0 == 0x20 || $0 == 0x09 }
            return String(decoding: bytes.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed(), as: UTF8.self).lowercased()
        }
        if type == "application/json" { return }
        if type == nil && request.method == "DELETE" && request.body.isEmpty { return }
        throw APIError(415, "UnsupportedMediaType", "\(request.method) requests take 'Content-Type: application/json'" + (type.map { ", not '\($0)'." } ?? "."))
    }

    private func allowsCORS(_ origin: String) -> Bool {
        origins.allows(origin)
    }

    private func corsHeaders(_ origin: String, preflight: Bool) -> [(String, String)] {
        var headers = [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        if preflight {
            headers += [("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS"),
                        ("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Credemu-Errors"),
                        ("Access-Control-Allow-Private-Network", "true")]
        }
        return headers
    }

    // MARK: Responses

    func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: value.serializedBytes())
    }

    /// A device ceremony's answer, naming in `X-Credemu-Provider` the provider account (or, for a signal, the
    /// accounts) it went to.
    func json(_ status: Int, _ value: JSONValue, provider: String) -> HTTPResponse {
        var response = json(status, value)
        response.headers.append((APIServer.providerHeader, provider))
        return response
    }

    /// A ceremony's answer; on a device, with the account (or, for a signal, the accounts) that answered it.
    func answered(_ request: RouteRequest, _ answer: Answer) -> HTTPResponse {
        guard case .device? = request.target else { return json(200, answer.response) }
        return json(200, answer.response, provider: answer.accounts.joined(separator: ","))
    }

    /// Names the provider account that answered a device's ceremony; sent to operators only.
    static let providerHeader = "X-Credemu-Provider"

    /// A file of the server's `Resources/`, compiled into the executable (`ShippedFile`).
    static func bundled(_ name: String) -> [UInt8]? {
        ShippedFile.named("Sources/CredemuServer/Resources/" + name)?.bytes
    }

    func resource(_ name: String, type: String) -> HTTPResponse {
        guard let data = APIServer.bundled(name) else {
            return json(500, ErrorBody.json(name: "InternalError", message: "The resource \(name) is missing from this build."))
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", type)], body: data)
    }
}

extension HTTPRequest {
    /// A request relayed from a page's frame through a shim's channel: the server's own (`viaChannel`) or a
    /// client's relay that says it is one (`X-Credemu-Channel`).
    var isRelayed: Bool { viaChannel || headers["x-credemu-channel"] != nil }
}

extension APIError {
    static func forbiddenOrigin(_ origin: String) -> APIError {
        APIError(403, "Forbidden", "The origin \(origin) is not allowed to call this API; start the server with --allow-origin \(origin).")
    }

    /// A channel's message naming a route that is not one of the shim's own (`Route.relayed`).
    static func notRelayed(_ method: String, _ path: String) -> APIError {
        APIError(403, "RouteNotRelayed", "The shim's channel reaches only the shim's own routes of its profile or device, not \(method) \(path).")
    }

    /// A page token presented by a caller that is not a page (no `Origin`, or the server's own).
    static let pageTokenOutsidePage = APIError(403, "PageTokenOutsidePage", "A page token acts only for the page it was given to: the request must carry that page's Origin. The test code, the CLI and the console use the server's own token.")

    static let unauthorized = APIError(401, "Unauthorized", "A valid 'Authorization: Bearer TOKEN' header is required (the token given to credemu serve --token).",
                                       headers: [("WWW-Authenticate", "Bearer")])

    /// A caller the route's scope does not admit: a page the server does not allow, or a page on an operator route.
    static func outOfScope(_ route: Route, _ caller: CallerKind) -> APIError {
        switch caller {
        case .foreignPage(let origin): return forbiddenOrigin(origin)
        case .page(let origin):
            return APIError(403, "Forbidden", "A page (here \(origin)) may not call \(route.method) \(route.template): it is the test code's (a request without an Origin header), the CLI's or the console's. A page acts only through its own ceremonies, signals, passkeys and passwords.")
        case .console:
            return APIError(403, "Forbidden", "The console may not call \(route.method) \(route.template): only the test code may (a request without an Origin header), or the command line.")
        case .operator: return APIError(500, "InternalError", "The route \(route.method) \(route.template) admits no caller.")
        }
    }

}
