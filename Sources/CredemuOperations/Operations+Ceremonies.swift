import Foundation
import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// The accounts that answer a target's ceremonies: a profile's own, on its platform or another its pack
    /// models; a device's, routed by its platform (a request naming a platform there is refused, not half obeyed).
    public func answerers(_ target: CeremonyTarget, platform: String? = nil) throws(OperationError) -> any Answering {
        switch target {
        case .profile(let name):
            let engine = try engine(name, platform: platform)
            return SingleAccount(engine, sheet: try sheet(engine.profile, queue: engine.vault, device: nil))
        case .device(let name):
            guard platform == nil else {
                throw .invalidInput("A device's ceremonies run on its own platform; change the device's platform setting instead of giving one.")
            }
            return try session(name)
        }
    }

    /// A routing step's failure (no reachable provider) as the operation's own ceremony error, rendered in the
    /// target's first engine.
    func routed<T>(_ answering: any Answering, _ operation: Dialect.Operation, _ body: () throws(CeremonyError) -> T) throws(OperationError) -> T {
        do {
            return try body()
        } catch {
            guard let first = answering.engines.first else { throw .invalidInput("The target has no provider accounts.") }
            throw .ceremony(error, operation, first)
        }
    }

    /// `navigator.credentials.create()` on a target: modal or conditional, web or native, answered by the account
    /// its routing picks.
    public func create(_ target: CeremonyTarget, _ request: CeremonyRequest, overrides: PasskeySettingOverrides = .init()) throws(OperationError) -> Answer {
        let lease = try lease(target)
        defer { leases.end(lease) }
        let answering = try answerers(target, platform: request.platform)
        var engine = try routed(answering, .create) { () throws(CeremonyError) in try answering.createEngine().engine }
        let (parsed, nativeOrigin) = try options(request, engine, .create, PlatformRequest.creationOptions)
        var options = parsed
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, engine, .create)
        if let mediation = request.mediation { options.mediation = mediation == "modal" ? nil : mediation }
        let routedEngine = engine
        engine = try run(routedEngine, .create) { () throws(CeremonyError) in try answering.createAnswerer(options, caller: caller, routed: routedEngine) }
        try involve(lease, engine, .create)
        let settings = overrides.isEmpty ? nil : try overrides.applied(to: engine.knobs.newPasskeySettings)
        let id = try begin(target, request, caller, conditional: false, engine, .create)
        defer { if let id { ceremonies.finish(target: target, id: id) } }
        try honourHold(engine, .create, request, lease)
        try checkNotAborted(target, id, engine, .create)
        let chosen = engine
        let response = try acting(lease, engine, .create) { () throws(CeremonyError) in try chosen.create(options, caller: caller, settings: settings) }.json
        return Answer(response: try forged(response, .registration, target, engine, offered: options.pubKeyCredParams.compactMap { COSEAlgorithm(rawValue: $0.alg) }),
                      accounts: [engine.profile.name])
    }

    /// `navigator.credentials.get()` on a target, with the simulated user's pick when given: the page's engine
    /// reads the options, the dropdown is the target's, and the chosen passkey is answered by its own account.
    public func get(_ target: CeremonyTarget, _ request: CeremonyRequest) throws(OperationError) -> Answer {
        let lease = try lease(target)
        defer { leases.end(lease) }
        let answering = try answerers(target, platform: request.platform)
        let page = try routed(answering, .get) { () throws(CeremonyError) in try answering.pageEngine() }
        try involve(lease, page, .get)
        let (parsed, nativeOrigin) = try options(request, page, .get, PlatformRequest.requestOptions)
        var options = parsed
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, page, .get)
        if let mediation = request.mediation { options.mediation = mediation == "modal" ? nil : mediation }
        var pick = try request.pick.map { (text) throws(OperationError) -> Pick in try PageView(request.restrictedTo).pick(text) }
        let conditional = options.mediation == "conditional"
        let id = try begin(target, request, caller, conditional: conditional, page, .get)
        defer { if let id { ceremonies.finish(target: target, id: id) } }
        try honourHold(page, .get, request, lease)
        try checkNotAborted(target, id, page, .get)
        // A conditional get waits for a pick unless the simulated user's next decision is queued already.
        if conditional, waitsForPick(request), pick == nil, let id, try !decisionQueued(answering) {
            pick = try waitForPick(target, id, options, caller, page, answering, request, lease)
        }
        // A queued pick routes the get as a given one does; the engine that answers takes it from the queue.
        var routing = pick
        if routing == nil { routing = try queuedPick(answering) }
        let routed = routing
        var engine = try run(page, .get) { () throws(CeremonyError) in try answering.getAnswerer(options, caller: caller, pick: routed) }
        // Chrome's sheet with no credential anywhere waits for the user (any queued decision answers it at once).
        if pick == nil, engine.showsSheetForNoCredential(options, caller: caller), try !decisionQueued(answering) {
            try waitOnSheet(target, id, options, caller, engine, answering, request, lease)
            let waited = engine
            engine = try run(waited, .get) { () throws(CeremonyError) in try answering.getAnswerer(options, caller: caller, pick: nil) }
        }
        let chosen = pick
        if engine !== page {
            try involve(lease, engine, .get)
            try honourHold(engine, .get, request, lease)
            try checkNotAborted(target, id, engine, .get)
        }
        let response = try acting(lease, engine, .get) { () throws(CeremonyError) in try engine.get(options, caller: caller, pick: chosen) }.json
        return Answer(response: try forged(response, .assertion, target, engine), accounts: [engine.profile.name])
    }

    /// The simulated user's next decision on the target's own queue when it is a pick (`user next pick:ID@ACCOUNT`).
    private func queuedPick(_ answering: any Answering) throws(OperationError) -> Pick? {
        let next = try stored { () throws(VaultError) in try answering.sheet.queue.peekDecision() }
        guard let next, case .pick(let pick) = UserDecision(next) else { return nil }
        return pick
    }

    /// Whether the simulated user's next decision is queued already on any account behind the target.
    private func decisionQueued(_ answering: any Answering) throws(OperationError) -> Bool {
        for engine in answering.engines where try !stored({ () throws(VaultError) in try engine.vault.pendingDecisions() }).isEmpty {
            return true
        }
        return false
    }

    /// The signal kinds, as the API's path and the CLI's word name them.
    public static let signalKinds = ["unknown", "accepted", "details"]

    /// One of the WebAuthn signals on a target; resolves with nothing to say, as browsers do. Returns the accounts
    /// it was sent to.
    @discardableResult
    public func signal(_ target: CeremonyTarget, kind: String, _ request: CeremonyRequest) throws(OperationError) -> [String] {
        guard Operations.signalKinds.contains(kind) else {
            throw .invalidInput("No signal '\(kind)'; the signals are \(Operations.signalKinds.joined(separator: ", ")).")
        }
        let lease = try lease(target)
        defer { leases.end(lease) }
        let answering = try answerers(target, platform: request.platform)
        let page = try routed(answering, .signal) { () throws(CeremonyError) in try answering.pageEngine() }
        for engine in answering.engines { try involve(lease, engine, .signal) }
        let caller = try ceremonyCaller(request, nativeOrigin: nil, page, .signal)
        let signal = try options(request, page, .signal) { (document) throws(WebAuthnError) in try SignalRequest(kind: kind, document: document) }
        return try acting(lease, page, .signal) { () throws(CeremonyError) in try answering.signal(signal, caller: caller) }
    }

    /// What the shim's configuration says of a target's page, as its packs decide: whether it has the signal
    /// methods at all (Firefox's has none), whether `mediation: "immediate"` is a value of its enum
    /// (`immediateGet.sinceBrowserVersion` and the profile's browser version), and whether the response a create
    /// gives has its own `getPublicKey` (`response.getPublicKey` absent: the create's account). Nil for a target
    /// not made yet, which serving the shim does not make.
    public func pageFacts(_ target: CeremonyTarget) -> PageFacts? {
        if case .profile(let name) = target, (try? stored({ () throws(VaultError) in try vault.profileSettings(name) })) ?? nil == nil { return nil }
        guard let answering = try? answerers(target), let page = try? answering.pageEngine() else { return nil }
        let creating = (try? answering.createEngine().engine) ?? page
        return PageFacts(signalMethods: page.knobs.signalMethods, immediateMediation: page.hasImmediateMediation,
                         publicKeyMethodAbsent: creating.knobs.publicKeyExposure == .absent, blinkChecks: page.makesBlinkChecks)
    }

    /// `PublicKeyCredential.getClientCapabilities()` as the target's page answers it.
    public func capabilities(_ target: CeremonyTarget, platform: String? = nil) throws(OperationError) -> Answer {
        let answering = try answerers(target, platform: platform)
        let page = try routed(answering, .get) { () throws(CeremonyError) in try answering.pageEngine() }
        return Answer(response: page.capabilities(), accounts: [page.profile.name])
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
    private func begin(_ target: CeremonyTarget, _ request: CeremonyRequest, _ caller: Caller, conditional: Bool, _ engine: Engine,
                       _ operation: Dialect.Operation) throws(OperationError) -> String? {
        if let given = request.ceremony, !CeremonyBoard.isValidID(given) {
            throw .invalidInput("The ceremony ID must be 1 to 64 base64url characters.")
        }
        guard request.ceremony != nil || (conditional && waitsForPick(request)) else { return nil }
        guard let id = ceremonies.begin(target: target, id: request.ceremony, origin: caller.serializedOrigin, page: request.restrictedTo,
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
    private func checkNotAborted(_ target: CeremonyTarget, _ id: String?, _ engine: Engine, _ operation: Dialect.Operation) throws(OperationError) {
        guard let id, let ending = ceremonies.ending(target: target, id: id) else { return }
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
        case .removed:
            // Nothing is logged: the log is the removed profile's, and a profile made under its name must not inherit it.
            return Operations.removedFailure
        default:
            failure = CeremonyError(WebAuthnError(.abortError, "The operation was aborted."), reason: .aborted)
        }
        engine.log(operation.rawValue, "aborted", failure.reason, [("ceremony", .string(id)), ("error", .string(failure.error.name.rawValue))])
        return failure
    }

    /// Opens the conditional get's autofill dropdown and waits for the simulated user's pick (`POST
    /// /profiles/{p}/offer/pick`) or the page's abort.
    private func waitForPick(_ target: CeremonyTarget, _ id: String, _ options: RequestOptions, _ caller: Caller, _ engine: Engine,
                             _ answering: any Answering, _ request: CeremonyRequest, _ lease: TargetLeases.Lease) throws(OperationError) -> Pick {
        let (rpID, offered) = try run(engine, .get) { () throws(CeremonyError) in try answering.autofillOffer(options, caller: caller) }
        ceremonies.offer(target: target, id: id, rpID: rpID, passkeys: offered)
        let ending = ceremonies.wait(target: target, id: id, cancellation: cancellation(clientGone: request.clientGone, lease: lease))
        guard case .picked(let pick) = ending else { throw .ceremony(abortFailure(ending, engine, .get, id), .get, engine) }
        engine.log("offer", "picked", .success, [("ceremony", .string(id)), ("credentialId", .string(Base64URL.encode(pick.credentialID)))]
                   + (pick.account.map { [("provider", .string($0))] } ?? []))
        return pick
    }

    /// Chrome's sheet for a modal get that finds no credential anywhere (`modalGet.noCredential` sheetUntilDismissed): it
    /// offers a phone and security keys and stays until the simulated user decides (any decision queued on the target:
    /// `cancel` dismisses it, `use:NAME` picks a key or phone), the page aborts, or the request's timeout as Chromium
    /// clamps it (`Engine.sheetTimeoutMillis`) passes: then NotAllowedError. A bounded wait: it polls the queue every
    /// `BoundedWait.pollInterval` and ends with its client or its target.
    private func waitOnSheet(_ target: CeremonyTarget, _ id: String?, _ options: RequestOptions, _ caller: Caller, _ engine: Engine,
                             _ answering: any Answering, _ request: CeremonyRequest, _ lease: TargetLeases.Lease) throws(OperationError) {
        let millis = Engine.sheetTimeoutMillis(options.timeout)
        let timedOut = CeremonyError(.notAllowed("The operation either timed out or was not allowed: no provider holds a credential for the request; the browser's sheet offered a phone and security keys, none was used, and it timed out after \(millis) ms (\(engine.knobs.cite("modalGet.noCredential", "sheetUntilDismissed")))."),
                                     reason: .timedOut, settlesAfterMillis: request.mayWait ? nil : millis)
        // A request the server answers on a pool thread may not wait there: its page settles it at the timeout
        // (`settlesAfterMillis`, as the shim does for every such failure) and its abort ends it sooner; only a
        // dismissal queued before it is seen.
        guard request.mayWait else { throw .ceremony(engine.refusedGet(timedOut, options, caller: caller), .get, engine) }
        let condition = NSCondition()
        condition.lock()
        let end = BoundedWait.wait(condition, until: Date().addingTimeInterval(Double(millis) / 1000),
                                   cancellation: cancellation(clientGone: request.clientGone, lease: lease)) {
            if let id, ceremonies.ending(target: target, id: id) != nil { return false }
            return !((try? decisionQueued(answering)) ?? true)
        }
        condition.unlock()
        let failure: CeremonyError
        switch end {
        case .done:
            try checkNotAborted(target, id, engine, .get)
            return
        case .timedOut:
            failure = timedOut
        case .cancelled(.removed):
            throw .ceremony(Operations.removedFailure, .get, engine)
        case .cancelled:
            failure = CeremonyError(WebAuthnError(.abortError, "The operation was aborted: its client went away."), reason: .aborted)
        }
        throw .ceremony(engine.refusedGet(failure, options, caller: caller), .get, engine)
    }

    /// Refuses a target that does not exist (a profile is made on first use only if it is `default`).
    func checkExists(_ target: CeremonyTarget) throws(OperationError) {
        switch target {
        case .profile(let name): _ = try profile(name)
        case .device(let name): _ = try device(name)
        }
    }

    /// The autofill dropdowns open now on a target (one per waiting conditional get); a page sees only its own.
    public func offers(_ target: CeremonyTarget, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        try checkExists(target)
        return .object([("offers", .array(ceremonies.offers(target: target, view: PageView(page))))])
    }

    /// The simulated user picks a passkey from an open dropdown; a page only from its own. On a device `ID@ACCOUNT`
    /// picks that provider's entry of a passkey two providers hold (`Pick`).
    public func pickOffered(_ target: CeremonyTarget, credentialID text: String, ceremony: String?, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        try checkExists(target)
        let view = PageView(page)
        let pick = try view.pick(text)
        guard let id = ceremonies.pick(target: target, pick, ceremony: ceremony, view: view) else {
            throw .notFound("No open autofill dropdown of \(target) offers \(text).")
        }
        return .object([("picked", .string(text)), ("ceremony", .string(id))])
    }

    /// What the dropdown would offer a conditional get with these options now, without waiting (the CLI's
    /// `offer`): a pick is then a queued `pick:ID` decision. On a device each passkey names its account.
    public func autofillOffer(_ target: CeremonyTarget, _ request: CeremonyRequest) throws(OperationError) -> JSONValue {
        let answering = try answerers(target, platform: request.platform)
        let page = try routed(answering, .get) { () throws(CeremonyError) in try answering.pageEngine() }
        let (options, nativeOrigin) = try options(request, page, .get, PlatformRequest.requestOptions)
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, page, .get)
        let (rpID, offered) = try run(page, .get) { () throws(CeremonyError) in try answering.autofillOffer(options, caller: caller) }
        return .object([("origin", .string(caller.serializedOrigin)), ("rpId", .string(rpID)), ("passkeys", .array(offered.map(\.json)))])
    }

    /// The page aborted a ceremony: one that is waiting ends with AbortError, one the provider has not yet
    /// acted on never acts. `aborted` is false when it had answered already.
    public func abortCeremony(_ target: CeremonyTarget, id: String, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        try checkExists(target)
        guard CeremonyBoard.isValidID(id) else { throw .invalidInput("The ceremony ID must be 1 to 64 base64url characters.") }
        return .object([("aborted", .bool(ceremonies.abort(target: target, id: id, view: PageView(page))))])
    }

    /// Waits out a hold armed on the profile; a cancelled or expired hold fails the ceremony, and so does the
    /// request's client going away (nobody reads that answer, but the provider must not act).
    private func honourHold(_ engine: Engine, _ operation: Dialect.Operation, _ request: CeremonyRequest,
                            _ lease: TargetLeases.Lease) throws(OperationError) {
        // Dispatched before the hold was armed, as the server saw it: the hold waits for the next ceremony.
        guard request.mayWait else { return }
        let ending = holds.waitIfHeld(profile: engine.profile.name, operation: operation.rawValue,
                                      cancellation: cancellation(clientGone: request.clientGone, lease: lease))
        let failure: CeremonyError
        switch ending {
        case nil, .proceed?: return
        case .timedOut?:
            failure = CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony timed out."), reason: .timedOut)
        case .cancel?:
            failure = CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony was cancelled."), reason: .userCancelled)
        case .clientGone?:
            failure = CeremonyError(WebAuthnError(.abortError, "The operation was aborted: its client went away."), reason: .aborted)
        case .removed?:
            failure = Operations.removedFailure
        }
        throw .ceremony(failure, operation, engine)
    }

    // MARK: Leases (`TargetLeases`)

    /// A ceremony whose authenticator or profile was removed while it ran: NotAllowedError, as Chrome's when the
    /// security key it waited on is pulled out.
    static let removedFailure = CeremonyError(.notAllowed("The operation either timed out or was not allowed: the authenticator was removed."),
                                              reason: .authenticatorRemoved)

    /// The ceremony's lease on its target; a target being removed is answered as one that is gone.
    func lease(_ target: CeremonyTarget) throws(OperationError) -> TargetLeases.Lease {
        guard let lease = leases.begin(target) else { throw .notFound("\(target) is being removed.") }
        return lease
    }

    /// Names the engine's profile as acting for the ceremony; one removed since the ceremony began fails it.
    func involve(_ lease: TargetLeases.Lease, _ engine: Engine, _ operation: Dialect.Operation) throws(OperationError) {
        guard leases.involve(lease, profile: engine.profile.name) else { throw .ceremony(Operations.removedFailure, operation, engine) }
    }

    /// One write for a target with no wait before it (a password saved, used or filled): leased as a ceremony is, so
    /// it never lands after the target's removal.
    @discardableResult
    func leased<T>(_ target: CeremonyTarget, _ body: () throws(OperationError) -> T) throws(OperationError) -> T {
        let lease = try lease(target)
        defer { leases.end(lease) }
        guard let done = try leases.act(lease, body) else { throw .notFound("\(target) was removed.") }
        return done
    }

    /// The ceremony's one write, unless its target or an acting profile was removed meanwhile.
    func acting<T>(_ lease: TargetLeases.Lease, _ engine: Engine, _ operation: Dialect.Operation,
                   _ body: () throws(CeremonyError) -> T) throws(OperationError) -> T {
        let done = try leases.act(lease) { () throws(OperationError) -> T in try run(engine, operation, body) }
        guard let done else { throw .ceremony(Operations.removedFailure, operation, engine) }
        return done
    }
}
