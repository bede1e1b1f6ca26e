import CredemuEngine
import Foundation
import Vault
import WebAuthn

extension APIServer {
    func health() -> JSONValue {
        .object([("status", "ok"), ("vault", .string(vault.path)), ("clock", .string(Timestamp.format(clock.now()))),
                 ("clockMode", .string(clock.isVirtual ? "virtual" : "system"))])
    }

    func providers() -> JSONValue { registry.json }

    /// GET shows the clock; POST sets it (`set`), moves it (`advance`: "90s", "6m", seconds) or returns to
    /// system time (`mode: "system"`). The vault keeps the setting for the CLI.
    func clockRoute(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        switch request.method {
        case "GET": break
        case "POST":
            let body = try Body(request)
            if try body.string("mode") == "system" {
                clock.useSystemTime()
            } else if let set = try body.string("set") {
                guard let date = Timestamp.parse(set) else { throw .badRequest("'set' must be an RFC 3339 UTC time such as 2026-11-29T10:00:00Z.") }
                clock.set(date)
            } else if let advance = body.value["advance"], !advance.isNull {
                guard let seconds = advance.numberValue ?? advance.stringValue.flatMap(parseDuration), seconds >= 0 else {
                    throw .badRequest("'advance' must be seconds or a duration such as 90s, 6m, 2h.")
                }
                clock.advance(by: seconds)
            } else {
                throw .badRequest("Give 'set', 'advance' or \"mode\": \"system\".")
            }
            let time = clock.isVirtual ? clock.now() : nil
            try stored { () throws(VaultError) in try vault.storeClockTime(time) }
        default:
            throw APIError(405, "MethodNotAllowed", "\(request.method) is not allowed on /clock.")
        }
        return json(200, .object([("now", .string(Timestamp.format(clock.now()))), ("mode", .string(clock.isVirtual ? "virtual" : "system"))]))
    }


    func events(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        let after = Int64(request.query["after"] ?? "0") ?? 0
        let list = try stored { () throws(VaultError) in try vault.scoped(to: name).events(kind: request.query["kind"], after: after) }
        return json(200, .object([("events", .array(list.map(\.json)))]))
    }

    func findings(_ name: String) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        do {
            return json(200, .object([("findings", .array(try Finding.list(vault.scoped(to: name)).map(\.json)))]))
        } catch {
            throw APIError(500, "VaultError", "\(error)")
        }
    }

    func userRoute(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        let scoped = vault.scoped(to: name)
        switch request.method {
        case "GET": break
        case "POST":
            let body = try Body(request)
            guard let list = body.value["decisions"]?.arrayValue else { throw .badRequest("'decisions' must be an array.") }
            var decisions: [UserDecision] = []
            for item in list {
                guard let text = item.stringValue, let decision = UserDecision(text) else {
                    throw .badRequest("\(item.serialized()) is not a decision: accept, cancel, timeout or pick:CREDENTIAL_ID.")
                }
                decisions.append(decision)
            }
            try stored { () throws(VaultError) in for d in decisions { try scoped.pushDecision(d.description) } }
        case "DELETE":
            try stored { () throws(VaultError) in try scoped.clearDecisions() }
        default:
            throw APIError(405, "MethodNotAllowed", "\(request.method) is not allowed on \(request.path).")
        }
        let pending = try stored { () throws(VaultError) in try scoped.pendingDecisions() }
        return json(200, .object([("pending", .array(pending.map(JSONValue.string)))]))
    }

    func listPasskeys(_ name: String) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        let list = try stored { () throws(VaultError) in try vault.scoped(to: name).allPasskeys() }
        return json(200, .object([("passkeys", .array(list.map { VaultFixture.passkeyJSON($0, privateKey: nil) }))]))
    }

    func showPasskey(_ name: String, _ id: String) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        guard let bytes = Base64URL.decode(id) else { throw .badRequest("'\(id)' is not a base64url credential ID.") }
        guard let record = try stored({ () throws(VaultError) in try vault.scoped(to: name).passkey(id: bytes) }) else {
            throw .notFound("No passkey \(id) in profile \(name).")
        }
        return json(200, VaultFixture.passkeyJSON(record, privateKey: nil))
    }

    func removePasskey(_ name: String, _ id: String) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        guard let bytes = Base64URL.decode(id) else { throw .badRequest("'\(id)' is not a base64url credential ID.") }
        let scoped = vault.scoped(to: name)
        guard let record = try stored({ () throws(VaultError) in try scoped.passkey(id: bytes) }) else {
            throw .notFound("No passkey \(id) in profile \(name).")
        }
        try stored { () throws(VaultError) in
            _ = try scoped.removePasskey(credentialID: bytes)
            try scoped.appendEvent(kind: "vault", outcome: "removed", reason: "success",
                                   detail: .object([("credentialId", .string(id)), ("rpId", .string(record.rpID))]), at: clock.now())
        }
        forgetEngines(name)
        return json(200, .object([("removed", VaultFixture.passkeyJSON(record, privateKey: nil))]))
    }

    func armHold(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        let body = try Body(request, allowEmpty: true)
        let timeout = Int(try body.number("timeoutMs") ?? 30_000)
        return json(201, holds.arm(profile: name, timeoutMillis: timeout).json)
    }

    func releaseHold(_ id: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try Body(request, allowEmpty: true)
        let outcome = try body.string("outcome") ?? "proceed"
        guard let parsed = HoldBoard.Outcome(rawValue: outcome) else { throw .badRequest("'outcome' must be proceed or cancel.") }
        guard let hold = holds.release(id: id, outcome: parsed) else { throw .notFound("No hold '\(id)'.") }
        return json(200, hold.json)
    }

    /// The browser shim, configured by its query: `profile`, and `autofill=0` to turn password filling off.
    func shim(_ request: HTTPRequest) -> HTTPResponse {
        guard let url = Bundle.module.url(forResource: "shim.js", withExtension: nil), let data = try? Data(contentsOf: url) else {
            return json(500, error("InternalError", "The resource shim.js is missing from this build."))
        }
        let profile = request.query["profile"] ?? Vault.defaultProfile
        let base = "http://" + (request.headers["host"] ?? "127.0.0.1")
        let config = JSONValue.object([("server", .string(base)), ("profile", .string(profile)), ("autofill", .bool(request.query["autofill"] != "0")),
                                       ("token", request.query["token"].map(JSONValue.string) ?? .null)])
        let prefix = "/* credemu browser shim */\nvar __credemuConfig = \(config.serialized());\n"
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/javascript"), ("Cache-Control", "no-store")],
                            body: Array(prefix.utf8) + Array(data))
    }
}
