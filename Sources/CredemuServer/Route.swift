import CredemuOperations
import Foundation

/// One entry of the API's route table: a method, a path template as `openapi.json` writes it, who may call
/// it, and its handler.
struct Route: Sendable {
    /// Throws an `APIError` (the front door's own refusals, a body's) or an `OperationError`, which the front
    /// door renders once (`APIError.init(_:)`).
    typealias Handler = @Sendable (APIServer, RouteRequest) throws -> HTTPResponse

    let method: String
    let template: String
    /// Who may call it; the front door enforces it before the handler runs (docs/api.md, "Security model").
    let scope: RouteScope
    /// A request that may wait or run long (a ceremony an armed hold can make wait, a scenario run): answered off
    /// the pool thread.
    let mayBlock: Bool
    /// One of the shim's own routes, which a message of the shim's channel may reach (docs/shim.md, "Transport"):
    /// the front door refuses any other route to a request that came through a channel, whoever relays it.
    let relayed: Bool
    let handler: Handler
    private let pattern: [String?]

    /// A route; `scope` has no default, so a route cannot be added without saying who may call it.
    init(_ method: String, _ template: String, _ scope: RouteScope, mayBlock: Bool = false, relayed: Bool = false, _ handler: @escaping Handler) {
        precondition(!relayed || (scope == .page && template.hasPrefix("/")), "a relayed route is a page route")
        self.method = method
        self.template = template
        self.scope = scope
        self.mayBlock = mayBlock
        self.relayed = relayed
        self.handler = handler
        pattern = template.split(separator: "/").map { $0.hasPrefix("{") ? nil : String($0) }
    }

    var segmentCount: Int { pattern.count }

    /// The kind of ceremony target the template's first parameter names, if it is a profile's or a device's route.
    var targetKind: CeremonyTarget.Kind? {
        if template.hasPrefix("/profiles/{profile}/") { return .profile }
        if template.hasPrefix("/devices/{device}/") { return .device }
        return nil
    }

    /// One route declared once and mounted on every ceremony target's prefix: `/profiles/{profile}` + `tail` and
    /// `/devices/{device}` + `tail`; the handler reads which from `RouteRequest.target`.
    static func onEveryTarget(_ method: String, _ tail: String, _ scope: RouteScope, mayBlock: Bool = false, relayed: Bool = false,
                              _ handler: @escaping Handler) -> [Route] {
        ["/profiles/{profile}", "/devices/{device}"].map { Route(method, $0 + tail, scope, mayBlock: mayBlock, relayed: relayed, handler) }
    }

    /// The parameters named in the template when `segments` fit it, in order; nil when they do not.
    func match(_ segments: [String]) -> [String]? {
        guard segments.count == pattern.count else { return nil }
        // The literals first: most routes a request is tried against differ there, and make no array.
        for (segment, literal) in zip(segments, pattern) where literal != nil && segment != literal! { return nil }
        return zip(segments, pattern).compactMap { $1 == nil ? $0 : nil }
    }
}

/// Who may call a route.
///
/// - `public`: anyone, even a page the server does not allow: the health check, the API document, the console's
///   files and the shim, none of which holds or reveals a secret.
/// - `page`: what a page does through the shim, for its own origin only: its ceremonies, signals and
///   capabilities, its own site's passkeys and passwords, autofill, the abort, offer and pick of its own
///   ceremonies. Also open to operators.
/// - `operator`: everything else (profiles, devices, events, findings, user decisions, clock, holds, scenarios,
///   packs): the test code, the CLI's peers and the console, never a page.
/// - `driver`: what widens who may call: the test code only (a request without an `Origin`), not even the
///   console.
enum RouteScope: String, Sendable, CaseIterable {
    case `public`
    case page
    case `operator`
    case driver

    /// Whether a caller of `kind` may call a route of this scope.
    func admits(_ kind: CallerKind) -> Bool {
        switch (self, kind) {
        case (.public, _): return true
        case (.page, .page), (.page, .operator), (.page, .console): return true
        case (.operator, .operator), (.operator, .console): return true
        case (.driver, .operator): return true
        default: return false
        }
    }
}

/// Who is calling, as the front door decides it from the request's `Origin` header alone.
enum CallerKind: Equatable, Sendable {
    /// A page whose origin the server does not allow: public routes only.
    case foreignPage(String)
    /// A page the server allows (`--allow-origin`, `POST /origins`): page routes, for that origin only.
    case page(String)
    /// The server's own origin: the console, first-party.
    case console
    /// No `Origin`: the test code, a driver, curl.
    case `operator`

    /// The one origin the caller may act for, nil for the console and an operator.
    var restrictedTo: String? {
        switch self {
        case .foreignPage(let origin), .page(let origin): return origin
        case .console, .operator: return nil
        }
    }
}

/// A request matched to a route: the HTTP request, the template's parameters, and who is calling.
struct RouteRequest {
    let http: HTTPRequest
    let parameters: [String]
    let caller: CallerKind
    /// The profile or device a target's route names.
    let target: CeremonyTarget?

    init(http: HTTPRequest, route: Route, parameters: [String], caller: CallerKind) {
        self.http = http
        self.parameters = parameters
        self.caller = caller
        target = route.targetKind.map { CeremonyTarget($0, parameters[0]) }
    }

    /// The page's `Origin` header: requests that carry one act only for that origin.
    var restrictedTo: String? { caller.restrictedTo }

    /// The first template parameter (`{profile}`, `{id}`) and the second.
    var first: String { parameters[0] }
    var second: String { parameters[1] }

    func body(allowEmpty: Bool = false) throws(APIError) -> RequestBody { try RequestBody(http, allowEmpty: allowEmpty) }

    /// A query value, when given.
    func query(_ name: String) -> String? { http.query[name] }
}
