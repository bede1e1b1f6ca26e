import Foundation
import WebAuthn

/// The demo shop's own front door, on its own listener: its pages (`Resources/demo-shop.*`) and its JSON routes. It
/// serves nothing of credemu's API; its pages reach credemu through the shim, as any allowed page does.
extension DemoShop {
    /// Where its pages find credemu: the API's address, and the profile whose shim they load.
    struct Wiring: Sendable {
        /// `http://127.0.0.1:PORT`: the API as the shim's script is loaded from it.
        var api: String
        var profile: String
    }

    /// The largest body the shop reads: a registration with an RSA key is under 2 KiB.
    static let maxBodyBytes = 16 * 1024

    /// Answers one request of the shop's listener; never throws.
    func handle(_ request: HTTPRequest, hosts: HostCheck, wiring: Wiring) -> HTTPResponse {
        var response: HTTPResponse
        do throws(DemoError) {
            response = try route(request, hosts: hosts, wiring: wiring)
        } catch {
            response = DemoShop.json(error.status, error.body)
        }
        response.headers += [("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"), ("X-Frame-Options", "DENY"),
                             ("Referrer-Policy", "no-referrer"), ("Content-Security-Policy", DemoShop.policy(api: wiring.api))]
        return response
    }

    /// Its pages run their own script and the shim loaded from the API, talk to the shop and to the API, and
    /// no page may frame them (a frame of another site could not upgrade anyway: §5.1.3 refuses it).
    static func policy(api: String) -> String {
        "default-src 'none'; script-src 'self' \(api); style-src 'self'; connect-src 'self' \(api); img-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    private func route(_ request: HTTPRequest, hosts: HostCheck, wiring: Wiring) throws(DemoError) -> HTTPResponse {
        do { try hosts.check(request) } catch { throw DemoError(error.status, error.body["error"]?["name"]?.stringValue ?? "Forbidden", error.body["error"]?["message"]?.stringValue ?? "") }
        // The RP ID is `localhost`: under 127.0.0.1 no passkey could be made, so a page asked that way is sent home.
        if request.headers["host"] != String(origin.dropFirst("http://".count)) {
            guard request.method == "GET" else { throw DemoError(403, "Forbidden", "The shop answers at \(origin) only.") }
            return HTTPResponse(status: 308, headers: [("Location", origin + request.path)])
        }
        switch (request.method, request.path) {
        case ("GET", "/"): return page(wiring)
        case ("GET", "/shop.js"): return file("js", "application/javascript")
        case ("GET", "/shop.css"): return file("css", "text/css")
        case ("GET", "/shop.svg"): return file("svg", "image/svg+xml")
        case ("POST", _) where DemoShop.actions.contains(request.path): return try act(request)
        case (_, "/"), (_, "/shop.js"), (_, "/shop.css"), (_, "/shop.svg"):
            throw DemoError(405, "MethodNotAllowed", "\(request.path) takes GET.")
        case (_, _) where DemoShop.actions.contains(request.path):
            throw DemoError(405, "MethodNotAllowed", "\(request.path) takes POST.")
        default:
            throw DemoError(404, "NotFound", "The shop has no \(request.path).")
        }
    }

    static let actions: Set<String> = ["/api/signin", "/api/signout", "/api/account", "/api/register/options", "/api/register",
                                       "/api/passkey-signin/options", "/api/passkey-signin"]

    /// A POST of the shop's page: its own origin only (no other page may act on its sessions), JSON only, bounded.
    private func act(_ request: HTTPRequest) throws(DemoError) -> HTTPResponse {
        guard request.headers["origin"] == origin else {
            throw DemoError(403, "CrossOriginRequest", "The shop's actions are for its own pages (Origin \(origin)), not \(request.headers["origin"] ?? "a request without an Origin").")
        }
        do { try APIServer.checkMediaType(request) } catch { throw DemoError(415, "UnsupportedMediaType", "The shop's actions take Content-Type: application/json.") }
        if request.bodyTooLarge { throw DemoError(413, "PayloadTooLarge", "The shop reads bodies of at most \(DemoShop.maxBodyBytes) bytes.") }
        let body: JSONValue
        do { body = try JSONValue.parse(request.body, maxDepth: 8) } catch { throw DemoError(400, "BadJSON", "The body is not JSON: \(error).") }
        guard body.objectValue != nil else { throw DemoError(400, "BadJSON", "The body must be a JSON object.") }
        func text(_ key: String) throws(DemoError) -> String {
            guard let value = body[key]?.stringValue, value.utf8.count <= 1024 else { throw DemoError(400, "BadRequest", "body.\(key) must be a string of at most 1024 bytes.") }
            return value
        }
        func credential() throws(DemoError) -> JSONValue {
            guard let value = body["credential"], value.objectValue != nil else { throw DemoError(400, "BadRequest", "body.credential must be the credential's toJSON().") }
            return value
        }
        switch request.path {
        case "/api/signin":
            let (id, _) = try signIn(username: try text("username"), password: try text("password"))
            return DemoShop.json(200, .object([("session", .string(id)), ("account", try account(id))]))
        case "/api/signout":
            signOut(try text("session"))
            return DemoShop.json(200, .object([("signedOut", true)]))
        case "/api/account":
            return DemoShop.json(200, try account(try text("session")))
        case "/api/register/options":
            let conditional = body["mediation"]?.stringValue == "conditional"
            return DemoShop.json(200, try creationOptions(session: try text("session"), conditional: conditional))
        case "/api/register":
            let session = try text("session")
            let (passkey, conditional) = try register(session: session, try credential())
            return DemoShop.json(200, .object([("verified", true), ("automatic", .bool(conditional)), ("passkey", DemoShop.listing(passkey)),
                                               ("account", try account(session))]))
        case "/api/passkey-signin/options":
            return DemoShop.json(200, requestOptions())
        default:
            let (id, passkey, authData) = try signIn(try credential())
            return DemoShop.json(200, .object([("session", .string(id)), ("verified", true), ("passkey", .string(Base64URL.encode(passkey.id))),
                                               ("flags", DemoShop.flags(authData.flags)), ("signCount", .number(Double(authData.signCount))),
                                               ("account", try account(id))]))
        }
    }

    /// The shop's page, loading the shim from the API first, as a driver's init script would.
    private func page(_ wiring: Wiring) -> HTTPResponse {
        guard let template = APIServer.bundled("demo-shop.html") else { return DemoShop.missing("demo-shop.html") }
        // A profile name is letters, digits, '-', '_' and '.' (Profile.isValidName): nothing to escape in a URL or HTML.
        let shim = wiring.api + "/shim.js?profile=" + wiring.profile
        let html = String(decoding: template, as: UTF8.self)
            .replacingOccurrences(of: "{{shim}}", with: shim)
            .replacingOccurrences(of: "{{console}}", with: wiring.api + "/")
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(html.utf8))
    }

    private func file(_ name: String, _ type: String) -> HTTPResponse {
        guard let bytes = APIServer.bundled("demo-shop." + name) else { return DemoShop.missing("demo-shop." + name) }
        return HTTPResponse(status: 200, headers: [("Content-Type", type)], body: bytes)
    }

    static func missing(_ name: String) -> HTTPResponse {
        json(500, ErrorBody.json(name: "InternalError", message: "The resource \(name) is missing from this build."))
    }

    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: value.serializedBytes())
    }
}
