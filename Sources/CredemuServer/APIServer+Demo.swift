import CredemuEngine
import CredemuOperations
import Foundation
import Synchronization
import Vault
import WebAuthn

/// The demo shop (`DemoShop`) that `credemu serve` offers the console: started on the first `POST /demo`, on a
/// listener of its own on the API's loopback address, at `http://localhost:PORT`.
///
/// The shop's pages are pages like any other: their origin is allowed (as `POST /origins` would), so they reach
/// the page routes for that origin only, through the shim they load from the API. Its origin differs from the
/// console's (another port), so no page of the shop is ever the API's first party. It is offered only where no
/// secret guards the API: on a loopback address without `--token` (the shim's URL would otherwise carry the token).
final class DemoBoard: Sendable {
    struct Offer: Sendable {
        var host: String
        var apiPort: UInt16
        /// Tried first (the API's port + 1 for a fixed port, so the shop's origin and its saved password stay
        /// the same from run to run); 0 picks any free port.
        var preferredPort: UInt16
    }

    private struct State: Sendable {
        var offer: Offer?
        var refusal = "This server does not serve the demo shop: `credemu serve` does, on a loopback address without --token."
        var shop: DemoShop?
        var server: HTTPServer?
        var profile = Vault.defaultProfile
    }

    private let state = Mutex(State())

    func offer(_ offer: Offer?, refusal: String?) {
        state.withLock { state in
            state.offer = offer
            if let refusal { state.refusal = refusal }
        }
    }

    /// The shop's listener and its wiring, started on the first call; `profile` is the one its pages' shim plays.
    func start(profile: String) throws(APIError) -> DemoShop {
        try state.withLock { (state) throws(APIError) -> DemoShop in
            guard let offer = state.offer else { throw APIError(409, "DemoUnavailable", state.refusal) }
            state.profile = profile
            if let shop = state.shop { return shop }
            let hosts = HostCheck(bindAddress: offer.host, allowed: [])
            let api = "http://\(offer.host):\(offer.apiPort)"
            let server = HTTPServer(maxBodyBytes: DemoShop.maxBodyBytes) { [weak self] request in
                guard let self, let (shop, profile) = self.state.withLock({ s in s.shop.map { ($0, s.profile) } }) else {
                    return DemoShop.json(503, ErrorBody.json(name: "DemoStopped", message: "The demo shop is not running."))
                }
                return shop.handle(request, hosts: hosts, wiring: DemoShop.Wiring(api: api, profile: profile))
            }
            var port: UInt16?
            for candidate in Set([offer.preferredPort, 0]).sorted(by: >) where port == nil {
                port = try? server.start(host: offer.host, port: candidate, threads: 2)
            }
            guard let port else { throw APIError(503, "DemoUnavailable", "The demo shop could not listen on \(offer.host) (no free port).") }
            let shop = DemoShop(port: port)
            state.shop = shop
            state.server = server
            return shop
        }
    }

    /// What `GET /demo` answers.
    var json: JSONValue {
        state.withLock { state in
            var members: [(String, JSONValue)] = [("available", .bool(state.offer != nil)), ("running", .bool(state.shop != nil)),
                                                  ("url", state.shop.map { .string($0.origin + "/") } ?? .null),
                                                  ("profile", state.shop == nil ? .null : .string(state.profile)),
                                                  ("username", .string(DemoShop.username))]
            if state.offer == nil { members.append(("reason", .string(state.refusal))) }
            return .object(members)
        }
    }

    /// Stops the shop's listener (the server is stopping).
    func stop() {
        let server = state.withLock { state -> HTTPServer? in
            defer { state.server = nil; state.shop = nil; state.offer = nil }
            return state.server
        }
        server?.stop()
    }
}

extension APIServer {
    static let demoRoutes: [Route] = [
        Route("GET", "/demo", .operator) { s, _ in s.json(200, s.demo.json) },
        Route("POST", "/demo", .operator) { s, r in try s.startDemo(r) },
    ]

    /// Offers the demo shop on `host`, where the API listens on `apiPort` (`credemu serve`, once it listens);
    /// refused where a secret guards the API or the address is not loopback.
    public func offerDemo(host: String, apiPort: UInt16, preferredPort: UInt16) {
        guard configuration.token == nil else {
            return demo.offer(nil, refusal: "The demo shop is off when the server has --token: its pages would need the token to load the shim.")
        }
        guard HostCheck.isLoopbackAddress(host) else {
            return demo.offer(nil, refusal: "The demo shop is served on a loopback address only; this server listens on \(host).")
        }
        demo.offer(.init(host: host, apiPort: apiPort, preferredPort: preferredPort), refusal: nil)
    }

    /// Stops the demo shop's listener, if it runs.
    public func stopDemo() { demo.stop() }

    /// POST /demo `{profile?}`: starts the shop (once), points its pages' shim at the profile, saves the account's
    /// password there (so the provider fills it) and allows the shop's origin; answers as `GET /demo`.
    func startDemo(_ r: RouteRequest) throws -> HTTPResponse {
        let body = try r.body(allowEmpty: true)
        try body.only(["profile"])
        let profile = try body.string("profile") ?? Vault.defaultProfile
        _ = try operations.profile(profile)
        let shop = try demo.start(profile: profile)
        guard origins.insert(shop.origin) else {
            throw APIError(409, "Conflict", "The server allows \(AllowedOrigins.limit) origins already; the demo shop's cannot be added.")
        }
        _ = try operations.savePassword(profile, origin: shop.origin, username: DemoShop.username, password: shop.password)
        return json(200, demo.json)
    }
}
