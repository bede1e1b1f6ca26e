import Vault
import WebAuthn

/// The ceremonies of one device: each goes to the provider accounts `DeviceRouting` names, and each credential is
/// answered by its own provider's engine, with that provider's knobs and in that account's vault and log.
public final class DeviceSession: Answering, @unchecked Sendable {
    public let device: Device
    public let routing: DeviceRouting
    /// The device's accounts in its order, each an engine whose profile runs on the device (`Profile.on(_:)`).
    public let engines: [Engine]
    public let sheet: Sheet

    public init(device: Device, engines: [Engine], sheet: Sheet) {
        self.device = device
        self.engines = engines
        self.sheet = sheet
        routing = DeviceRouting(device: device, accounts: engines.map {
            DeviceRouting.Account(name: $0.profile.name, integration: $0.knobs.integration, offersInAutofill: $0.knobs.conditionalGet == .answered)
        })
    }

    public func engine(_ account: DeviceRouting.Account) -> Engine { engines.first { $0.profile.name == account.name }! }

    /// No account the platform reaches: the page's request fails as a browser with no provider fails it.
    var noProvider: CeremonyError {
        let why = routing.accounts.compactMap { a in routing.unreachable(a).map { "\(a.name) is \($0)" } }.joined(separator: "; ")
        return CeremonyError(.notAllowed("The operation either timed out or was not allowed: no provider on device \(device.name) is reachable (\(why))."),
                             reason: .noProvider)
    }

    /// The engine a create goes to, and the platform's rule that chose it.
    public func createEngine() throws(CeremonyError) -> (engine: Engine, rule: String) {
        guard let (account, rule) = routing.createTarget() else { throw noProvider }
        return (engine(account), rule)
    }

    /// The engine whose API the page sees first (an extension's override, or the browser's own): it answers
    /// `getClientCapabilities()` and checks a signal's form.
    public func pageEngine() throws(CeremonyError) -> Engine {
        guard let first = routing.getOrder().first else { throw noProvider }
        return engine(first)
    }

    /// The engine that answers a get: the one holding `pick` (the picked account's, when the pick names one), else the
    /// first in the platform's order holding a usable passkey, else the first in that order (which then fails as its
    /// provider does).
    ///
    /// A refusal here (the caller may not use the RP ID) is logged by the page's provider as its own `get` logs it, so
    /// a device's log says why the page's call failed as a profile's does.
    public func getEngine(_ options: RequestOptions, caller: Caller, pick: Pick?) throws(CeremonyError) -> Engine {
        var order = routing.getOrder().map(engine)
        guard let first = order.first else { throw noProvider }
        // A conditional request goes past the providers that hand it to the browser (conditionalGet.mode).
        if options.mediation == "conditional" { order = order.filter { $0.knobs.conditionalGet == .answered } }
        do throws(CeremonyError) {
            for engine in order {
                if let pick {
                    if pick.names(engine), try engine.mayUse(pick.credentialID, options, caller: caller) { return engine }
                } else if try !engine.usableCredentials(options, caller: caller, limit: 1).isEmpty {
                    return engine
                }
            }
        } catch {
            throw first.refusedGet(error, options, caller: caller)
        }
        return first
    }

    /// A conditional get's dropdown on the device: each provider that lists passkeys in autofill, in the platform's
    /// order, at most `Engine.offerLimit` passkeys in all.
    public func autofillOffer(_ options: RequestOptions, caller: Caller) throws(CeremonyError) -> (rpID: String, passkeys: [OfferedPasskey]) {
        // The page's API checks the RP ID, whether or not any provider lists passkeys in the dropdown.
        let rpID = try pageEngine().relyingPartyID(options.rpId, caller: caller)
        var out: [OfferedPasskey] = []
        for account in routing.autofillOrder() where out.count < Engine.offerLimit {
            let offered = try engine(account).autofillOffer(options, caller: caller).passkeys
            out += offered.prefix(Engine.offerLimit - out.count).map { var p = $0; p.provider = account.name; return p }
        }
        return (rpID, out)
    }

    /// A signal on the device: the page's API checks its form, then every provider the platform sends it to acts
    /// on it by its own knobs. The first provider failure (an Android rate limit) is the caller's, after all have
    /// been sent it.
    public func signal(_ request: SignalRequest, caller: Caller) throws(CeremonyError) -> [String] {
        let page = try pageEngine()
        do throws(CeremonyError) {
            try page.checkSignal(request, caller: caller)
        } catch {
            // Logged as the page's provider logs its own refusal (a malformed ID, a wrong RP ID).
            throw page.refusedSignal(error, request, caller: caller)
        }
        var failure: CeremonyError?
        let targets = routing.signalTargets()
        for account in targets {
            do throws(CeremonyError) {
                try engine(account).signal(request, caller: caller)
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return targets.map(\.name)
    }
}
