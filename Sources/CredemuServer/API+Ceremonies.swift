import CredemuEngine
import Foundation
import Vault
import WebAuthn

extension APIServer {
    /// The caller of a ceremony or signal, from the body's origin members.
    private func caller(_ body: Body, _ engine: Engine, _ operation: Dialect.Operation, nativeOrigin: String? = nil) throws(APIError) -> Caller {
        var origin = try body.string("origin") ?? nativeOrigin ?? ""
        if origin.isEmpty { origin = try body.requiredString("origin") }
        let (top, package) = (try body.string("topOrigin"), try body.string("androidPackage"))
        do {
            return try Caller(origin: origin, topOrigin: top, androidPackageName: package)
        } catch {
            throw .ceremony(CeremonyError(error), operation: operation, engine: engine)
        }
    }

    /// Runs an engine call; a failure becomes the ceremony's error response.
    private func run<T>(_ engine: Engine, _ operation: Dialect.Operation, _ body: () throws(CeremonyError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            throw .ceremony(error, operation: operation, engine: engine)
        }
    }

    /// Reads the body's WebAuthn options; malformed ones fail as the ceremony would (a TypeError).
    private func parse<T>(_ body: Body, _ engine: Engine, _ operation: Dialect.Operation,
                          _ make: (JSONValue) throws(WebAuthnError) -> T) throws(APIError) -> T {
        let text = try body.options()
        do {
            return try make(text)
        } catch {
            throw .ceremony(CeremonyError(error), operation: operation, engine: engine)
        }
    }

    /// Waits out a hold armed on the profile; a cancelled or expired hold fails the ceremony.
    private func honourHold(_ engine: Engine, operation: Dialect.Operation) throws(APIError) {
        guard let (outcome, timedOut) = holds.waitIfHeld(profile: engine.profile.name, operation: operation.rawValue) else { return }
        guard outcome == .cancel else { return }
        let failure = timedOut
            ? CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony timed out."), reason: .timedOut)
            : CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony was cancelled."), reason: .userCancelled)
        throw .ceremony(failure, operation: operation, engine: engine)
    }

    func create(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try Body(request)
        let engine = try engine(name, platform: try body.string("platform"))
        let (parsed, nativeOrigin) = try parse(body, engine, .create) { (json) throws(WebAuthnError) in try PlatformRequest.creationOptions(json) }
        var options = parsed
        let caller = try caller(body, engine, .create, nativeOrigin: nativeOrigin)
        if let mediation = try body.string("mediation") { options.mediation = mediation == "modal" ? nil : mediation }
        try honourHold(engine, operation: .create)
        let response = try run(engine, .create) { () throws(CeremonyError) in try engine.create(options, caller: caller) }
        return json(200, response.json)
    }

    func get(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try Body(request)
        let engine = try engine(name, platform: try body.string("platform"))
        let (parsed, nativeOrigin) = try parse(body, engine, .get) { (json) throws(WebAuthnError) in try PlatformRequest.requestOptions(json) }
        var options = parsed
        let caller = try caller(body, engine, .get, nativeOrigin: nativeOrigin)
        if let mediation = try body.string("mediation") { options.mediation = mediation == "modal" ? nil : mediation }
        var pick: [UInt8]?
        if let id = try body.string("pick") {
            guard let bytes = Base64URL.decode(id) else { throw .badRequest("'pick' must be a base64url credential ID.") }
            pick = bytes
        }
        try honourHold(engine, operation: .get)
        let response = try run(engine, .get) { () throws(CeremonyError) in try engine.get(options, caller: caller, pick: pick) }
        return json(200, response.json)
    }

    func signal(_ name: String, kind: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        guard ["unknown", "accepted", "details"].contains(kind) else {
            throw .notFound("No signal '\(kind)'; the signals are unknown, accepted and details.")
        }
        let body = try Body(request)
        let engine = try engine(name, platform: try body.string("platform"))
        let caller = try caller(body, engine, .signal)
        let signal = try parse(body, engine, .signal) { (json) throws(WebAuthnError) in try SignalRequest(kind: kind, document: json) }
        try run(engine, .signal) { () throws(CeremonyError) in try engine.signal(signal, caller: caller) }
        return json(200, .object([("resolved", true)]))
    }

    func capabilities(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        json(200, try engine(name, platform: request.query["platform"]).capabilities())
    }

    func listPasswords(_ name: String) throws(APIError) -> HTTPResponse {
        _ = try loadProfile(name)
        let records = try stored { () throws(VaultError) in try vault.scoped(to: name).allPasswords() }
        return json(200, .object([("passwords", .array(records.map { VaultFixture.passwordListing($0, password: nil) }))]))
    }

    func savePassword(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try Body(request)
        let engine = try engine(name)
        let (origin, username, password) = (try body.requiredString("origin"), try body.requiredString("username"), try body.requiredString("password"))
        let record = try run(engine, .create) { () throws(CeremonyError) in
            try engine.savePassword(origin: origin, username: username, password: password)
        }
        return json(201, VaultFixture.passwordListing(record, password: nil))
    }

    func usePassword(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try Body(request)
        let engine = try engine(name)
        let (origin, username) = (try body.requiredString("origin"), try body.requiredString("username"))
        try run(engine, .get) { () throws(CeremonyError) in try engine.markPasswordUsed(origin: origin, username: username) }
        return json(200, .object([("used", .object([("origin", .string(origin)), ("username", .string(username))]))]))
    }

    func autofill(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try Body(request)
        let engine = try engine(name)
        let caller = try caller(body, engine, .get)
        let username = try body.string("username")
        let submit = try body.bool("submit") ?? false
        let filled = try run(engine, .get) { () throws(CeremonyError) in
            try engine.autofill(origin: caller.signonRealm, username: username, submit: submit)
        }
        return json(200, .object([("origin", .string(filled.record.origin)), ("username", .string(filled.record.username)),
                                  ("password", .string(filled.password)),
                                  ("filledAt", .string(Timestamp.format(filled.record.lastFilledAt ?? clock.now()))),
                                  ("submitted", .bool(submit))]))
    }
}
