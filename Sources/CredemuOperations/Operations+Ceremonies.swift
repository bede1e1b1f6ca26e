import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// `navigator.credentials.create()`: modal or conditional, web or native.
    public func create(_ name: String, _ request: CeremonyRequest, overrides: PasskeySettingOverrides = .init()) throws(OperationError) -> JSONValue {
        try create(on: try engine(name, platform: request.platform), board: name, request, overrides: overrides)
    }

    /// A create answered by `engine`, registered on the ceremony board under `board` (a profile, or a device).
    func create(on engine: Engine, board: String, _ request: CeremonyRequest, overrides: PasskeySettingOverrides = .init()) throws(OperationError) -> JSONValue {
        let (parsed, nativeOrigin) = try options(request, engine, .create, PlatformRequest.creationOptions)
        var options = parsed
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, engine, .create)
        if let mediation = request.mediation { options.mediation = mediation == "modal" ? nil : mediation }
        let settings = overrides.isEmpty ? nil : try overrides.applied(to: engine.knobs.newPasskeySettings)
        let id = try begin(board, request, caller, conditional: false, engine, .create)
        defer { if let id { ceremonies.finish(profile: board, id: id) } }
        try honourHold(engine, .create, request)
        try checkNotAborted(board, id, engine, .create)
        return try run(engine, .create) { () throws(CeremonyError) in try engine.create(options, caller: caller, settings: settings) }.json
    }

    /// Who answers a get: the options are read by `page`, the dropdown comes from `offer`, `answerer` names the engine
    /// that signs (after the pick), and `queued` says whether the simulated user's next decision is queued already.
    struct GetRouting {
        var page: Engine
        var offer: (RequestOptions, Caller) throws(CeremonyError) -> (rpID: String, passkeys: [OfferedPasskey])
        var answerer: (RequestOptions, Caller, [UInt8]?) throws(CeremonyError) -> Engine
        var queued: () throws(OperationError) -> Bool
    }

    /// `navigator.credentials.get()`, with the simulated user's pick when given.
    public func get(_ name: String, _ request: CeremonyRequest) throws(OperationError) -> JSONValue {
        let engine = try engine(name, platform: request.platform)
        let routing = GetRouting(page: engine, offer: { (o, c) throws(CeremonyError) in try engine.autofillOffer(o, caller: c) },
                                 answerer: { _, _, _ in engine },
                                 queued: { () throws(OperationError) in
                                     try !self.stored { () throws(VaultError) in try self.vault.scoped(to: name).pendingDecisions() }.isEmpty
                                 })
        return try get(board: name, request, routing).response
    }

    /// A get routed as `routing` says, registered on the board under `board`; returns the engine that answered too.
    func get(board: String, _ request: CeremonyRequest, _ routing: GetRouting) throws(OperationError) -> (response: JSONValue, engine: Engine) {
        let page = routing.page
        let (parsed, nativeOrigin) = try options(request, page, .get, PlatformRequest.requestOptions)
        var options = parsed
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, page, .get)
        if let mediation = request.mediation { options.mediation = mediation == "modal" ? nil : mediation }
        var pick = try request.pick.map { (id) throws(OperationError) -> [UInt8] in
            guard let bytes = Base64URL.decode(id) else { throw .invalidInput("The pick must be a base64url credential ID.") }
            return bytes
        }
        let conditional = options.mediation == "conditional"
        let id = try begin(board, request, caller, conditional: conditional, page, .get)
        defer { if let id { ceremonies.finish(profile: board, id: id) } }
        try honourHold(page, .get, request)
        try checkNotAborted(board, id, page, .get)
        // A conditional get waits for a pick unless the simulated user's next decision is queued already.
        if conditional, waitsForPick(request), pick == nil, let id, try !routing.queued() {
            pick = try waitForPick(board, id, options, caller, page, routing.offer, request)
        }
        let chosen = pick
        let engine = try run(page, .get) { () throws(CeremonyError) in try routing.answerer(options, caller, chosen) }
        if engine !== page {
            try honourHold(engine, .get, request)
            try checkNotAborted(board, id, engine, .get)
        }
        return (try run(engine, .get) { () throws(CeremonyError) in try engine.get(options, caller: caller, pick: chosen) }.json, engine)
    }

    /// The signal kinds, as the API's path and the CLI's word name them.
    public static let signalKinds = ["unknown", "accepted", "details"]

    /// One of the WebAuthn signals; resolves with nothing to say, as browsers do.
    public func signal(_ name: String, kind: String, _ request: CeremonyRequest) throws(OperationError) {
        guard Operations.signalKinds.contains(kind) else {
            throw .invalidInput("No signal '\(kind)'; the signals are \(Operations.signalKinds.joined(separator: ", ")).")
        }
        let engine = try engine(name, platform: request.platform)
        let caller = try ceremonyCaller(request, nativeOrigin: nil, engine, .signal)
        let signal = try options(request, engine, .signal) { (document) throws(WebAuthnError) in try SignalRequest(kind: kind, document: document) }
        try run(engine, .signal) { () throws(CeremonyError) in try engine.signal(signal, caller: caller) }
    }

    /// Whether a profile's page has the signal methods at all (Firefox's has none), for the shim's configuration; nil
    /// for a profile not made yet, which serving the shim does not make.
    public func pageHasSignalMethods(_ name: String) -> Bool? {
        guard (try? stored({ () throws(VaultError) in try vault.profileSettings(name) })) != nil else { return nil }
        return try? engine(name).knobs.signalMethods
    }

    /// `PublicKeyCredential.getClientCapabilities()` as the profile's platform answers it.
    public func capabilities(_ name: String, platform: String?) throws(OperationError) -> JSONValue {
        try engine(name, platform: platform).capabilities()
    }

    /// The request's options read by `parse`; malformed ones fail as the ceremony would (a TypeError with every
    /// dialect).
    func options<T>(_ request: CeremonyRequest, _ engine: Engine, _ operation: Dialect.Operation,
                            _ parse: (JSONValue) throws(WebAuthnError) -> T) throws(OperationError) -> T {
        try run(engine, operation) { () throws(CeremonyError) in
            do throws(WebAuthnError) { return try parse(try request.document()) } catch { throw CeremonyError(error) }
        }
    }

    func ceremonyCaller(_ request: CeremonyRequest, nativeOrigin: String?, _ engine: Engine,
                                _ operation: Dialect.Operation) throws(OperationError) -> Caller {
        do throws(OperationError) {
            guard let caller = try request.caller(nativeOrigin: nativeOrigin) else {
                throw OperationError.invalidInput("The caller's origin is required (web options carry none).")
            }
            return caller
        } catch {
            guard error.code == .ceremony, case .web(let name) = error.name else { throw error }
            throw .ceremony(CeremonyError(WebAuthnError(name, error.message)), operation, engine)
        }
    }

    /// Registers the ceremony on the board, a conditional get in one of its page's slots (`CeremonyBoard`).
    ///
    /// A ceremony without an ID that will not wait is not registered: nothing could abort it, and the board's
    /// lock stays off the path of callers that run many ceremonies side by side. Returns nil then.
    private func begin(_ name: String, _ request: CeremonyRequest, _ caller: Caller, conditional: Bool, _ engine: Engine,
                       _ operation: Dialect.Operation) throws(OperationError) -> String? {
        if let given = request.ceremony, !CeremonyBoard.isValidID(given) {
            throw .invalidInput("The ceremony ID must be 1 to 64 base64url characters.")
        }
        guard request.ceremony != nil || (conditional && waitsForPick(request)) else { return nil }
        guard let id = ceremonies.begin(profile: name, id: request.ceremony, origin: caller.origin.description, page: request.restrictedTo,
                                        conditional: conditional) else {
            let failure = CeremonyError(WebAuthnError(.operationError, "A request is already pending."), reason: .requestPending)
            throw .ceremony(failure, operation, engine)
        }
        return id
    }

    /// Whether a conditional get of this request waits for the user's pick: on the server, for a request it may
    /// make wait.
    private func waitsForPick(_ request: CeremonyRequest) -> Bool { conditionalGetsWait && request.mayWait }

    /// Fails a ceremony the page aborted before the provider acted, leaving the vault as it was. The user's pick ends
    /// a dropdown too and is no abort: on a device the picked passkey's account answers after the page's.
    private func checkNotAborted(_ name: String, _ id: String?, _ engine: Engine, _ operation: Dialect.Operation) throws(OperationError) {
        guard let id, let ending = ceremonies.ending(profile: name, id: id) else { return }
        if case .picked = ending { return }
        throw .ceremony(abortFailure(ending, engine, operation, id), operation, engine)
    }

    private func abortFailure(_ ending: CeremonyBoard.Ending, _ engine: Engine, _ operation: Dialect.Operation, _ id: String) -> CeremonyError {
        let failure: CeremonyError
        switch ending {
        case .expired:
            failure = CeremonyError(.notAllowed("The operation either timed out or was not allowed: nobody picked a passkey."), reason: .timedOut)
        case .abandoned:
            failure = CeremonyError(WebAuthnError(.abortError, "The operation was aborted: its client went away."), reason: .aborted)
        default:
            failure = CeremonyError(WebAuthnError(.abortError, "The operation was aborted."), reason: .aborted)
        }
        engine.log(operation.rawValue, "aborted", failure.reason, [("ceremony", .string(id)), ("error", .string(failure.error.name.rawValue))])
        return failure
    }

    /// Opens the conditional get's autofill dropdown and waits for the simulated user's pick (`POST
    /// /profiles/{p}/offer/pick`) or the page's abort.
    private func waitForPick(_ board: String, _ id: String, _ options: RequestOptions, _ caller: Caller, _ engine: Engine,
                             _ offer: (RequestOptions, Caller) throws(CeremonyError) -> (rpID: String, passkeys: [OfferedPasskey]),
                             _ request: CeremonyRequest) throws(OperationError) -> [UInt8] {
        let (rpID, offered) = try run(engine, .get) { () throws(CeremonyError) in try offer(options, caller) }
        ceremonies.offer(profile: board, id: id, rpID: rpID, passkeys: offered)
        let ending = ceremonies.wait(profile: board, id: id, cancellation: cancellation(clientGone: request.clientGone))
        guard case .picked(let credentialID) = ending else { throw .ceremony(abortFailure(ending, engine, .get, id), .get, engine) }
        engine.log("offer", "picked", .success, [("ceremony", .string(id)), ("credentialId", .string(Base64URL.encode(credentialID)))])
        return credentialID
    }

    /// The autofill dropdowns open now (one per waiting conditional get); a page sees only its own.
    public func offers(_ name: String, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        _ = try profile(name)
        return .object([("offers", .array(ceremonies.offers(profile: name, view: PageView(page))))])
    }

    /// The simulated user picks a passkey from an open dropdown; a page only from its own.
    public func pickOffered(_ name: String, credentialID text: String, ceremony: String?, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        _ = try profile(name)
        guard let credentialID = Base64URL.decode(text), !credentialID.isEmpty else { throw .invalidInput("'\(text)' is not a base64url credential ID.") }
        guard let id = ceremonies.pick(profile: name, credentialID: credentialID, ceremony: ceremony, view: PageView(page)) else {
            throw .notFound("No open autofill dropdown of profile \(name) offers \(text).")
        }
        return .object([("picked", .string(text)), ("ceremony", .string(id))])
    }

    /// What the dropdown would offer a conditional get with these options now, without waiting (the CLI's
    /// `offer`): a pick is then a queued `pick:ID` decision.
    public func autofillOffer(_ name: String, _ request: CeremonyRequest) throws(OperationError) -> JSONValue {
        let engine = try engine(name, platform: request.platform)
        let (options, nativeOrigin) = try options(request, engine, .get, PlatformRequest.requestOptions)
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, engine, .get)
        let (rpID, offered) = try run(engine, .get) { () throws(CeremonyError) in try engine.autofillOffer(options, caller: caller) }
        return .object([("origin", .string(caller.origin.description)), ("rpId", .string(rpID)), ("passkeys", .array(offered.map(\.json)))])
    }

    /// The page aborted a ceremony: one that is waiting ends with AbortError, one the provider has not yet
    /// acted on never acts. `aborted` is false when it had answered already.
    public func abortCeremony(_ name: String, id: String, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        _ = try profile(name)
        guard CeremonyBoard.isValidID(id) else { throw .invalidInput("The ceremony ID must be 1 to 64 base64url characters.") }
        return .object([("aborted", .bool(ceremonies.abort(profile: name, id: id, view: PageView(page))))])
    }

    /// Waits out a hold armed on the profile; a cancelled or expired hold fails the ceremony, and so does the
    /// request's client going away (nobody reads that answer, but the provider must not act).
    private func honourHold(_ engine: Engine, _ operation: Dialect.Operation, _ request: CeremonyRequest) throws(OperationError) {
        // Dispatched before the hold was armed, as the server saw it: the hold waits for the next ceremony.
        guard request.mayWait else { return }
        let ending = holds.waitIfHeld(profile: engine.profile.name, operation: operation.rawValue,
                                      cancellation: cancellation(clientGone: request.clientGone))
        let failure: CeremonyError
        switch ending {
        case nil, .proceed?: return
        case .timedOut?:
            failure = CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony timed out."), reason: .timedOut)
        case .cancel?:
            failure = CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony was cancelled."), reason: .userCancelled)
        case .clientGone?:
            failure = CeremonyError(WebAuthnError(.abortError, "The operation was aborted: its client went away."), reason: .aborted)
        }
        throw .ceremony(failure, operation, engine)
    }
}
