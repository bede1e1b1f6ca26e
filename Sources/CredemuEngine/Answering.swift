import WebAuthn

/// Who answers the ceremonies of one ceremony target: the provider accounts behind it and the rule that routes
/// each ceremony among them. A profile is one account answering everything itself (`SingleAccount`); a device
/// routes by its platform (`DeviceSession`). Every ceremony of credemu runs through this one step.
public protocol Answering {
    /// Every account behind the target, in its order.
    var engines: [Engine] { get }
    /// The browser's sheet: the keys plugged in and the phones it reaches, and the target's simulated user.
    var sheet: Sheet { get }
    /// The engine a create goes to, and the rule that chose it.
    func createEngine() throws(CeremonyError) -> (engine: Engine, rule: String)
    /// The engine whose API the page sees: it reads the options, answers `getClientCapabilities()` and checks a
    /// signal's form.
    func pageEngine() throws(CeremonyError) -> Engine
    /// The engine that answers a get (the one holding `pick`, when given).
    func getEngine(_ options: RequestOptions, caller: Caller, pick: Pick?) throws(CeremonyError) -> Engine
    /// A conditional get's dropdown.
    func autofillOffer(_ options: RequestOptions, caller: Caller) throws(CeremonyError) -> (rpID: String, passkeys: [OfferedPasskey])
    /// A signal, sent to every account the target sends it to; returns those accounts.
    func signal(_ request: SignalRequest, caller: Caller) throws(CeremonyError) -> [String]
}

/// A profile as a ceremony target: its one account answers every ceremony itself, on the profile's own platform
/// and device state.
public struct SingleAccount: Answering {
    public let engine: Engine
    public let sheet: Sheet

    public init(_ engine: Engine, sheet: Sheet? = nil) {
        self.engine = engine
        self.sheet = sheet ?? Sheet(queue: engine.vault)
    }

    public var engines: [Engine] { [engine] }
    public func createEngine() throws(CeremonyError) -> (engine: Engine, rule: String) { (engine, "the profile's own provider") }
    public func pageEngine() throws(CeremonyError) -> Engine { engine }
    public func getEngine(_ options: RequestOptions, caller: Caller, pick: Pick?) throws(CeremonyError) -> Engine { engine }

    public func autofillOffer(_ options: RequestOptions, caller: Caller) throws(CeremonyError) -> (rpID: String, passkeys: [OfferedPasskey]) {
        try engine.autofillOffer(options, caller: caller)
    }

    public func signal(_ request: SignalRequest, caller: Caller) throws(CeremonyError) -> [String] {
        try engine.signal(request, caller: caller)
        return [engine.profile.name]
    }
}

extension Answering {
    /// Who answers a create the platform routed to `routed`: a modal one is the browser's sheet's, which may give it
    /// to a security key or a phone; a conditional one (an automatic upgrade) stays with the manager.
    public func createAnswerer(_ options: CreationOptions, caller: Caller, routed: Engine) throws(CeremonyError) -> Engine {
        guard options.mediation != "conditional" else { return routed }
        return try sheet.create(options, caller: caller, routed: routed, candidates: engines)
    }

    /// Who answers a get: the account holding the pick or a usable passkey (`getEngine`), or for a modal get what
    /// the browser's sheet gives it to instead.
    public func getAnswerer(_ options: RequestOptions, caller: Caller, pick: Pick?) throws(CeremonyError) -> Engine {
        let routed = try getEngine(options, caller: caller, pick: pick)
        guard options.mediation != "conditional" else { return routed }
        // An immediate request reaches the internal transport only (immediateGet.transports): no key, no phone.
        if options.mediation == "immediate", Set(routed.knobs.immediateGetTransports).isSubset(of: ["internal"]) { return routed }
        return try sheet.get(options, caller: caller, routed: routed, candidates: engines, pick: pick)
    }
}
