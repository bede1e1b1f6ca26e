import CredemuEngine
import CredemuOperations
import Foundation
import Shipped
import Vault
import WebAuthn

extension APIServer {
    /// Every route of the API, as `openapi.json` documents it (a test checks the two agree). Routing, 404
    /// versus 405 and the guards all follow from this table.
    static let routes: [Route] = [
        Route("GET", "/health", .public) { s, _ in s.json(200, s.health()) },
        Route("GET", "/openapi.json", .public) { s, _ in s.resource("openapi.json", type: "application/json") },
        Route("GET", "/shim.js", .public) { s, r in try s.shim(r.http) },
        Route("GET", "/", .public) { s, r in s.console("console.html", type: "text/html; charset=utf-8", r.http) },
        Route("GET", "/console.js", .public) { s, r in s.console("console.js", type: "application/javascript", r.http) },
        Route("GET", "/console.css", .public) { s, r in s.console("console.css", type: "text/css", r.http) },
        Route("GET", "/console.svg", .public) { s, r in s.console("console.svg", type: "image/svg+xml", r.http) },
        Route("GET", "/providers", .operator) { s, _ in s.json(200, s.operations.registry.json) },
        Route("GET", "/clock", .operator) { s, _ in s.json(200, s.operations.clockState()) },
        Route("POST", "/clock", .operator) { s, r in try s.setClock(r) },
        Route("GET", "/origins", .operator) { s, _ in s.allowedOrigins() },
        Route("POST", "/origins", .driver) { s, r in try s.allowOrigin(r) },
        Route("GET", "/holds", .operator) { s, _ in s.json(200, s.operations.listHolds()) },
        Route("POST", "/holds/{id}/release", .operator) { s, r in
            let body = try r.body(allowEmpty: true)
            let outcome = try body.string("outcome")
            return s.json(200, try s.operations.releaseHold(r.first, outcome: outcome))
        },
        Route("GET", "/profiles", .operator) { s, _ in
            s.json(200, .object([("profiles", .array(try s.operations.listProfiles()))]))
        },
        Route("POST", "/profiles", .operator) { s, r in
            let body = try r.body()
            let name = try body.requiredString("name")
            let settings = (body.value.objectValue ?? []).filter { $0.0 != "name" }
            return s.json(201, try s.operations.createProfile(name, settings: settings, allowPackPath: false).json)
        },
        Route("GET", "/profiles/{profile}", .operator) { s, r in
            s.json(200, try s.operations.profile(r.first).json)
        },
        Route("PATCH", "/profiles/{profile}", .operator) { s, r in
            let settings = try r.body().value.objectValue ?? []
            return s.json(200, try s.operations.updateProfile(r.first, settings: settings, allowPackPath: false).json)
        },
        Route("DELETE", "/profiles/{profile}", .operator) { s, r in
            try s.operations.removeProfile(r.first)
            return s.json(200, .object([("removed", .string(r.first))]))
        },
        Route("GET", "/profiles/{profile}/passkeys", .page) { s, r in
            s.json(200, .object([("passkeys", .array(try s.operations.listPasskeys(r.first, restrictedTo: r.restrictedTo)))]))
        },
        Route("GET", "/profiles/{profile}/passkeys/{id}", .page) { s, r in
            s.json(200, try s.operations.passkey(r.first, id: r.second, restrictedTo: r.restrictedTo))
        },
        Route("PATCH", "/profiles/{profile}/passkeys/{id}", .page) { s, r in
            // One change a request: hide or restore (`hidden`), or the user's rename (`userName`, `displayName`).
            let body = try r.body()
            try body.only(["hidden", "userName", "displayName"])
            let userName = try body.string("userName"), displayName = try body.string("displayName")
            if let hidden = try body.bool("hidden") {
                guard userName == nil && displayName == nil else {
                    throw APIError(.invalidInput("body.hidden cannot be sent with userName or displayName: one change a request."))
                }
                return s.json(200, try s.operations.setPasskeyHidden(r.first, id: r.second, hidden: hidden, restrictedTo: r.restrictedTo))
            }
            guard userName != nil || displayName != nil else {
                throw APIError(.invalidInput("body needs hidden (true hides the passkey, false restores it), or userName and/or displayName (the user's rename)."))
            }
            return s.json(200, try s.operations.renamePasskey(r.first, id: r.second, userName: userName, displayName: displayName,
                                                              restrictedTo: r.restrictedTo))
        },
        Route("DELETE", "/profiles/{profile}/passkeys/{id}", .page) { s, r in
            s.json(200, try s.operations.removePasskey(r.first, id: r.second, restrictedTo: r.restrictedTo))
        },
        // Playwright's `BrowserContext.credentials` on a profile (`credentials.delete` is the passkey DELETE above):
        // the passkeys with their private keys, so the operator's alone.
        Route("POST", "/profiles/{profile}/credentials", .operator) { s, r in
            s.json(201, try s.operations.createPlaywrightCredential(r.first, try r.body().value))
        },
        Route("GET", "/profiles/{profile}/credentials", .operator) { s, r in
            let list = try s.operations.playwrightCredentials(r.first, rpID: r.query("rpId"), id: r.query("id"))
            return s.json(200, .object([("credentials", .array(list))]))
        },
        // A move between two profiles through a CXF document (`Operations.moveCredentials`): secrets pass, so the operator's alone.
        Route("POST", "/vault/move", .operator) { s, r in
            let body = try r.body()
            try body.only(["from", "to", "keepSource", "rpId"])
            return s.json(200, try s.operations.moveCredentials(from: try body.requiredString("from"), to: try body.requiredString("to"),
                                                                keepSource: try body.bool("keepSource") ?? false, rpID: try body.string("rpId")))
        },
        // A profile's credentials as a file, in and out (`Operations.exportFile`, `importCredentials`: the CLI's `vault
        // export/import --format`): private keys pass, so the operator's alone; a secret only with `includeSecrets=true`.
        Route("GET", "/profiles/{profile}/export", .operator) { s, r in
            let format = try APIServer.fileFormat(r.query("format"), "query.format")
            let secrets = r.query("includeSecrets") == "true"
            let (document, leftOut) = try s.operations.exportFile(r.first, format: format, includeSecrets: secrets)
            return s.json(200, .object([("format", .string(format.rawValue)), ("includesSecrets", .bool(secrets)),
                                        ("document", document), ("leftOut", .array(leftOut.map(JSONValue.string)))]))
        },
        Route("POST", "/profiles/{profile}/import", .operator) { s, r in
            let body = try r.body()
            try body.only(["format", "document"])
            let format = try APIServer.fileFormat(try body.requiredString("format"), "body.format")
            guard let document = body.value["document"] else {
                throw APIError(.invalidInput("body.document is required: the \(format.rawValue) file's JSON."))
            }
            return s.json(200, try s.operations.importCredentials(r.first, format: format, document: document))
        },
        Route("GET", "/profiles/{profile}/events", .operator) { s, r in
            let after = try r.query("after").map { (t) throws(OperationError) in try Operations.count(t, "after", in: 0...Int64.max) } ?? 0
            let limit = try r.query("limit").map { (t) throws(OperationError) in
                try Operations.count(t, "limit", in: 1...Int64(Operations.eventLimit))
            } ?? Int64(Operations.eventLimit)
            let list = try s.operations.events(r.first, kind: r.query("kind"), after: after, limit: Int(limit))
            return s.json(200, .object([("events", .array(list))]))
        },
        Route("GET", "/profiles/{profile}/findings", .operator) { s, r in
            s.json(200, .object([("findings", .array(try s.operations.findings(r.first)))]))
        },
        Route("GET", "/attestation/root", .operator) { s, _ in s.json(200, try s.operations.attestationRoot()) },
        Route("GET", "/devices", .operator) { s, _ in
            s.json(200, .object([("devices", .array(try s.operations.listDevices()))]))
        },
        Route("POST", "/devices", .operator) { s, r in
            let body = try r.body()
            let name = try body.requiredString("name")
            let settings = (body.value.objectValue ?? []).filter { $0.0 != "name" }
            return s.json(201, try s.operations.createDevice(name, settings: settings).json)
        },
        Route("GET", "/devices/{device}", .operator) { s, r in
            s.json(200, try s.operations.device(r.first).json)
        },
        Route("PATCH", "/devices/{device}", .operator) { s, r in
            let settings = try r.body().value.objectValue ?? []
            return s.json(200, try s.operations.updateDevice(r.first, settings: settings).json)
        },
        Route("DELETE", "/devices/{device}", .operator) { s, r in
            try s.operations.removeDevice(r.first)
            return s.json(200, .object([("removed", .string(r.first))]))
        },
        Route("POST", "/scenarios/run", .operator, mayBlock: true) { s, r in
            let body = try r.body()
            try body.only(["scenario", "providers"])
            guard let scenario = body.value["scenario"], scenario.objectValue != nil else {
                throw APIError(.invalidInput("body.scenario is required: a scenario object (the scenarios/ format)."))
            }
            let providers = try body.string("providers")
            return s.json(200, try s.operations.runScenario(scenario, providers: providers, clientGone: r.http.clientGone))
        },
        Route("POST", "/profiles/{profile}/holds", .operator) { s, r in
            let timeout = try r.body(allowEmpty: true).number("timeoutMs")
            return s.json(201, try s.operations.armHold(r.first, timeoutMillis: timeout))
        },
    ] + ceremonyRoutes + passwordRoutes + userRoutes + webDriverRoutes + channelRoutes + demoRoutes

    /// A credential file format named in a request (`vault import/export --format`'s, but the vault-wide fixture).
    static func fileFormat(_ name: String?, _ path: String) throws(APIError) -> CredentialFileFormat {
        guard let name, let format = CredentialFileFormat(rawValue: name) else {
            throw APIError(.invalidInput("\(path) must be one of \(CredentialFileFormat.allCases.map(\.rawValue).joined(separator: ", "))."))
        }
        return format
    }

    /// The ceremonies, declared once and mounted on both targets (`/profiles/{p}` and `/devices/{d}`); a device's
    /// answer names in `X-Credemu-Provider` the account (for a signal, the accounts) that answered.
    static let ceremonyRoutes: [Route] = [
        Route.onEveryTarget("POST", "/credentials/create", .page, mayBlock: true, relayed: true) { s, r in
            let answer = try s.operations.create(r.target!, try s.ceremonyRequest(r))
            return s.answered(r, answer)
        },
        Route.onEveryTarget("POST", "/credentials/get", .page, mayBlock: true, relayed: true) { s, r in
            let answer = try s.operations.get(r.target!, try s.ceremonyRequest(r))
            return s.answered(r, answer)
        },
        Route.onEveryTarget("POST", "/ceremonies/{id}/abort", .page, relayed: true) { s, r in
            _ = try r.body(allowEmpty: true)
            return s.json(200, try s.operations.abortCeremony(r.target!, id: r.second, restrictedTo: r.restrictedTo))
        },
        Route.onEveryTarget("GET", "/offer", .page) { s, r in
            s.json(200, try s.operations.offers(r.target!, restrictedTo: r.restrictedTo))
        },
        Route.onEveryTarget("POST", "/offer/pick", .page) { s, r in
            let body = try r.body()
            let (credentialID, ceremony) = (try body.requiredString("credentialId"), try body.string("ceremony"))
            return s.json(200, try s.operations.pickOffered(r.target!, credentialID: credentialID, ceremony: ceremony, restrictedTo: r.restrictedTo))
        },
        Route.onEveryTarget("POST", "/signals/{kind}", .page, relayed: true) { s, r in
            let accounts = try s.operations.signal(r.target!, kind: r.second, try s.ceremonyRequest(r))
            return s.answered(r, Answer(response: .object([("resolved", true)]), accounts: accounts))
        },
        Route.onEveryTarget("GET", "/capabilities", .page, relayed: true) { s, r in
            let answer = try s.operations.capabilities(r.target!, platform: r.query("platform"))
            return s.answered(r, answer)
        },
    ].flatMap { $0 }

    /// A page's passwords, on a profile or on a device (where the account that takes the device's creates saves
    /// and fills them, as the platform's password manager does).
    /// The simulated user's queue of a profile, or of a device's sheet.
    static let userRoutes: [Route] = [
        Route.onEveryTarget("GET", "/user", .operator) { s, r in
            s.json(200, try s.operations.pendingDecisions(r.target!))
        },
        Route.onEveryTarget("POST", "/user", .operator) { s, r in
            let body = try r.body()
            guard let decisions = try body.strings("decisions") else { throw APIError(.invalidInput("body.decisions must be an array of decisions.")) }
            return s.json(200, try s.operations.queueDecisions(r.target!, decisions))
        },
        Route.onEveryTarget("DELETE", "/user", .operator) { s, r in
            s.json(200, try s.operations.clearDecisions(r.target!))
        },
        // A forged next answer: the test's, never a page's (a page must not forge its own answers).
        Route.onEveryTarget("GET", "/forge-next", .operator) { s, r in
            s.json(200, try s.operations.forgeryState(r.target!))
        },
        Route.onEveryTarget("POST", "/forge-next", .operator) { s, r in
            let body = try r.body()
            try body.only(["forgery"])
            guard let value = body.value["forgery"], value.isNull || value.stringValue != nil else {
                throw APIError(.invalidInput("body.forgery is required: a forgery's name, or null to disarm."))
            }
            return s.json(200, try s.operations.forgeNext(r.target!, value.stringValue))
        },
    ].flatMap { $0 }

    static let passwordRoutes: [Route] = [
        Route.onEveryTarget("GET", "/passwords", .page) { s, r in
            let reveal = r.query("reveal") == "true"
            return s.json(200, .object([("passwords", .array(try s.operations.listPasswords(try s.operations.passwordProfile(r.target!), reveal: reveal, restrictedTo: r.restrictedTo)))]))
        },
        Route.onEveryTarget("POST", "/passwords", .page, relayed: true) { s, r in
            let body = try r.body()
            let (origin, username, password) = (try body.requiredString("origin"), try body.requiredString("username"), try body.requiredString("password"))
            let savedIn = try body.string("savedIn")
            return s.json(201, try s.operations.savePassword(try s.operations.passwordProfile(r.target!), origin: origin, username: username, password: password,
                                              savedIn: savedIn, restrictedTo: r.restrictedTo))
        },
        Route.onEveryTarget("POST", "/passwords/use", .page, relayed: true) { s, r in
            let body = try r.body()
            let (origin, username) = (try body.requiredString("origin"), try body.requiredString("username"))
            return s.json(200, try s.operations.usePassword(try s.operations.passwordProfile(r.target!), origin: origin, username: username, restrictedTo: r.restrictedTo))
        },
        Route.onEveryTarget("POST", "/passwords/report-unused", .page) { s, r in
            let body = try r.body()
            let (domain, userName) = (try body.requiredString("domain"), try body.requiredString("userName"))
            try s.operations.reportUnusedPassword(try s.operations.passwordProfile(r.target!), domain: domain, userName: userName, restrictedTo: r.restrictedTo)
            return s.json(200, .object([("reported", true)]))
        },
        Route.onEveryTarget("POST", "/autofill", .page, relayed: true) { s, r in
            let body = try r.body()
            let (origin, package, username) = (try body.string("origin"), try body.string("androidPackage"), try body.string("username"))
            let (submit, ifSaved) = (try body.bool("submit") ?? false, try body.bool("ifSaved") ?? false)
            return s.json(200, try s.operations.autofill(try s.operations.passwordProfile(r.target!), origin: origin, androidPackage: package, username: username,
                                          submit: submit, ifSaved: ifSaved, restrictedTo: r.restrictedTo))
        },
    ].flatMap { $0 }

    /// The table's routes by the number of path segments a route has, in the table's order: a request is matched
    /// against those only.
    static let routesBySegmentCount: [Int: [Route]] = Dictionary(grouping: routes) { $0.segmentCount }

    /// A ceremony's members from the body: options, origin, top origin, Android package, platform,
    /// mediation, pick, userActivation; the page's `Origin` restricts whom it may speak for.
    func ceremonyRequest(_ r: RouteRequest) throws(APIError) -> CeremonyRequest {
        let body = try r.body()
        return CeremonyRequest(options: try body.options(), origin: try body.string("origin"), topOrigin: try body.string("topOrigin"),
                               androidPackage: try body.string("androidPackage"), platform: try body.string("platform"),
                               mediation: try body.string("mediation"), pick: try body.string("pick"), ceremony: try body.string("ceremony"),
                               restrictedTo: r.restrictedTo, userActivation: try body.bool("userActivation"), clientGone: r.http.clientGone,
                               mayWait: r.http.mayWait)
    }

    func health() -> JSONValue {
        let clock = operations.clockState()
        return .object([("status", "ok"), ("version", .string(CredemuVersion.current)), ("commit", CredemuVersion.commit.map(JSONValue.string) ?? .null), ("vault", .string(operations.vault.path)),
                        ("clock", clock["now"] ?? .null), ("clockMode", clock["mode"] ?? .null)])
    }

    /// POST /clock: `set` a time, `advance` by seconds or a duration, or `"mode": "system"`; logged under
    /// `profile` (default `default`).
    func setClock(_ r: RouteRequest) throws -> HTTPResponse {
        let body = try r.body()
        let profile = try body.string("profile") ?? Vault.defaultProfile
        let state = try { () throws(OperationError) -> JSONValue in
            _ = try operations.profile(profile)
            if body.value["mode"]?.stringValue == "system" { return try operations.systemClock(profile: profile) }
            if let set = body.value["set"]?.stringValue { return try operations.setClock(set, profile: profile) }
            if let advance = body.value["advance"], !advance.isNull {
                if let seconds = advance.numberValue { return try operations.advanceClock(seconds: seconds, profile: profile) }
                if let text = advance.stringValue { return try operations.advanceClock(text, profile: profile) }
                throw .invalidInput("body.advance must be seconds or a duration such as 90s, 6m, 2h.")
            }
            throw .invalidInput("Give 'set', 'advance' or \"mode\": \"system\".")
        }()
        return json(200, state)
    }

    func allowedOrigins() -> HTTPResponse {
        json(200, .object([("allowedOrigins", .array(origins.sorted.map(JSONValue.string)))]))
    }

    /// POST /origins: `{"origin": O}` lets pages of O call the API from now on, as `--allow-origin O` would have.
    /// Only a caller that is not a page may widen the list (the route's scope is `driver`).
    func allowOrigin(_ r: RouteRequest) throws(APIError) -> HTTPResponse {
        let origin = try r.body().requiredString("origin")
        guard AllowedOrigins.isSerializedOrigin(origin) else {
            throw APIError(.invalidInput("body.origin must be a serialized origin such as http://localhost:8000 (scheme, lower-case host, optional port; no path)."))
        }
        guard origins.insert(origin) else {
            throw APIError(409, "Conflict", "The server allows \(AllowedOrigins.limit) origins already; restart it to start again.")
        }
        return allowedOrigins()
    }

    /// The browser shim, configured by its query: `profile` or `device`, `autofill=0` to turn password filling off,
    /// `fillBinding` (the name of a driver binding the shim takes off `window` and fills through, so the page sees the
    /// driver's trusted input, as a browser's own autofill gives), `autofillEvents=1` (a debug switch: the shim also
    /// fires its own `credemu:autofilled` on `document`, which no browser does), `channel` and `channelReply` (the
    /// driver's channel the shim sends its requests through instead of the page's fetch: docs/shim.md, "Transport"),
    /// `serverChannel` and `serverHandoff` (a paired channel of the server's, preferred where it reached the
    /// document), and `token`.
    ///
    /// The route is public, so the script holds nothing that depends on a secret: with a `token` that is not the
    /// server's it is a 401; with the right one the script carries the target's page token (`PageToken`), never
    /// the server's own, and the vault-dependent members (`signalMethods`, `immediateMediation`, `publicKeyMethod`).
    /// A device's script names the device only: which profiles answer behind it stays on the server.
    func shim(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        guard let data = APIServer.bundled("shim.js") else {
            return json(500, ErrorBody.json(name: "InternalError", message: "The resource shim.js is missing from this build."))
        }
        let device = request.query["device"]
        let target: CeremonyTarget = device.map { .device($0) } ?? .profile(request.query["profile"] ?? Vault.defaultProfile)
        var pageToken: String?
        if let token = configuration.token, let given = request.query["token"] {
            guard APIServer.constantTimeEqual(Array(given.utf8), Array(token.utf8)) else { throw APIError.unauthorized }
            pageToken = PageToken.derive(from: token, kind: target.kind, name: target.name)
        }
        let base = "http://" + (request.headers["host"] ?? "127.0.0.1")
        var members: [(String, JSONValue)] = [("server", .string(base)), ("autofill", .bool(request.query["autofill"] != "0")),
                                              ("token", pageToken.map(JSONValue.string) ?? .null)]
        if let binding = request.query["fillBinding"] {
            guard APIServer.isBindingName(binding) else {
                throw APIError(.invalidInput("query.fillBinding must be a JavaScript identifier of 1 to 64 ASCII letters, digits and '_', not starting with a digit."))
            }
            members.append(("fillBinding", .string(binding)))
        }
        // The transport: a driver binding the shim sends every request through (taken off `window` like the fill
        // binding), and for a one-way binding (CDP Runtime.addBinding) the name of the global lexical binding the
        // script declares for the driver's replies (a `const` of the script's top level, which no page script can
        // enumerate). Without `channel` the shim uses the page's fetch.
        for member in ["channel", "channelReply", "serverChannel", "serverHandoff"] {
            guard let name = request.query[member] else { continue }
            guard APIServer.isBindingName(name) else {
                throw APIError(.invalidInput("query.\(member) must be a JavaScript identifier of 1 to 64 ASCII letters, digits and '_', not starting with a digit."))
            }
            members.append((member, .string(name)))
        }
        let reply = request.query["channel"] != nil ? request.query["channelReply"] : nil
        if request.query["channelReply"] != nil && reply == nil {
            throw APIError(.invalidInput("query.channelReply names the receiver of a channel's replies: give query.channel too."))
        }
        if reply != nil && reply == request.query["channel"] {
            throw APIError(.invalidInput("query.channelReply must differ from query.channel."))
        }
        // A paired channel of the server's (POST /channels' `paired`): the binding the server adds where it reaches
        // the document, preferred to `channel`, and the slot the server's handoff script meets the shim at.
        if (request.query["serverChannel"] == nil) != (request.query["serverHandoff"] == nil) {
            throw APIError(.invalidInput("query.serverChannel and query.serverHandoff go together."))
        }
        let names = ["fillBinding", "channel", "channelReply", "serverChannel", "serverHandoff"].compactMap { request.query[$0] }
        if Set(names).count != names.count {
            throw APIError(.invalidInput("query.fillBinding, channel, channelReply, serverChannel and serverHandoff must name different bindings."))
        }
        if request.query["autofillEvents"] == "1" { members.append(("autofillEvents", true)) }
        // The test code's switch: `window.__credemuShim` keeps the calls' log (never a page's to read otherwise).
        if request.query["debug"] == "1" { members.append(("debug", true)) }
        switch target {
        case .device(let name): members.append(("device", .string(name)))
        case .profile(let name): members.append(("profile", .string(name)))
        }
        // Vault state, so only for a caller the API would answer. A platform without signal methods (Firefox): the
        // shim removes them, so a page's call is "not a function". Immediate mediation where the pack's browser has
        // it: the shim accepts "immediate" only if the browser it runs in does too. A provider whose response has no
        // getPublicKey of its own: the page reaches the prototype's. A provider Chrome asks itself: Blink's checks.
        if configuration.token == nil || pageToken != nil, let facts = operations.pageFacts(target) {
            if !facts.signalMethods { members.append(("signalMethods", false)) }
            if facts.immediateMediation { members.append(("immediateMediation", true)) }
            if facts.publicKeyMethodAbsent { members.append(("publicKeyMethod", "absent")) }
            if facts.blinkChecks { members.append(("blinkChecks", true)) }
        }
        let config = JSONValue.object(members)
        // The configuration is the wrapper function's argument, not a global a page could read.
        // With `channelReply` the wrapper's value (the shim's reply receiver) is a top-level `const` of that name.
        let prefix = "/* credemu browser shim */\n" + (reply.map { "const \($0) = " } ?? "") + "(function (__credemuConfig) {\n"
        let suffix = "\n})(\(config.serialized()));\n"
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/javascript")],
                            body: Array(prefix.utf8) + data + Array(suffix.utf8))
    }
}
