import CredemuEngine
import CredemuOperations
import WebAuthn

/// What one forged response came to: a correct server refuses every one.
public struct ForgedCell: Sendable {
    public enum Outcome: String, Sendable {
        /// The server refused the forgery, as it must.
        case refused
        /// The server took it: a finding.
        case accepted
        /// The server's own options or answers make the forgery meaningless (UV=0 where UV was never required).
        case ruledOut
        /// The forgery could not be made or sent (no genuine response to start from, the genuine one refused).
        case notRun
    }

    public var forgery: Forgery
    public var ceremony: Forgery.Ceremony
    public var outcome: Outcome
    /// The server's words for a refusal; why, for `ruledOut` and `notRun`.
    public var message: String
    public var status: Int?

    public var title: String { "\(forgery.label) (\(ceremony == .registration ? "registration" : "sign-in"))" }
    public var rule: String { forgery.rule(ceremony) }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("forgery", .string(forgery.rawValue)), ("ceremony", .string(ceremony.rawValue)),
                                              ("title", .string(title)), ("outcome", .string(outcome.rawValue))]
        if !message.isEmpty { members.append(("message", .string(message))) }
        if let status { members.append(("status", .number(Double(status)))) }
        if outcome == .accepted { members += [("rule", .string(rule)), ("fix", .string(forgery.fix))] }
        return .object(members)
    }
}

/// The other half of conformance: after the variants a correct server must accept, the forged responses it must
/// refuse (`Forgery`), each made from a response the first column's pack really made for the server's own options
/// and sent to the same finish endpoint. They run in profiles of their own, `probe-forgeries` and (for the
/// counter) `probe-forgeries-key`, a security key whose counter grows.
extension Prober {
    struct Genuine {
        var options: JSONValue
        var response: JSONValue
        var values: [String: String]
        var client: HTTPClient
        var profile: String
    }

    func forge(_ policy: any ProviderPolicy, _ platform: Platform, upgradeAccepted: Bool) throws(ProbeError) -> [ForgedCell] {
        let profile = "probe-forgeries", keyProfile = "probe-forgeries-key"
        let keyPack = ops.registry.all.first { $0.knobs(for: ($0 as? PolicyPack)?.defaultPlatform ?? .chromeDesktop).model == .securityKey }
        try operation { () throws(OperationError) in
            for name in [profile, keyProfile] where (try? ops.profile(name)) != nil { try ops.removeProfile(name) }
            _ = try ops.createProfile(profile, settings: [("pack", .string(policy.id)), ("platform", .string(platform.rawValue))], allowPackPath: false)
            if let keyPack {
                _ = try ops.createProfile(keyProfile, settings: [("pack", .string(keyPack.id)), ("authenticator", Prober.keyHardware)], allowPackPath: false)
            }
        }
        let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        var out: [ForgedCell] = []
        // The accounts assertions are forged for: A signs in, B lends its credential.
        var accountA: (Genuine, Bool)?, accountB: (Genuine, Bool)?
        func account(_ name: String) throws(ProbeError) -> (Genuine, Bool)? {
            guard let genuine = try register(profile: profile, platform: platform, username: "forged-\(name)-\(runID)@probe.credemu.test", uv: "preferred", attestation: "none") else { return nil }
            let finish = try finishRegistration(genuine.response, genuine, log: logger(profile, named: "forgery.account"))
            return (genuine, Prober.accepted(finish))
        }
        for forgery in forgeries {
            for ceremony in forgery.ceremonies {
                var cell = ForgedCell(forgery: forgery, ceremony: ceremony, outcome: .notRun, message: "")
                switch ceremony {
                case .registration:
                    try forgeRegistration(forgery, profile: profile, platform: platform, runID: runID, upgradeAccepted: upgradeAccepted, into: &cell)
                case .assertion:
                    if forgery == .counterRegression {
                        try forgeCounter(keyProfile: keyPack == nil ? nil : keyProfile, platform: platform, runID: runID, into: &cell)
                        break
                    }
                    if accountA == nil { accountA = try account("a") }
                    if forgery == .otherUsersCredential && accountB == nil { accountB = try account("b") }
                    try forgeAssertion(forgery, a: accountA, b: accountB, platform: platform, into: &cell)
                }
                out.append(cell)
            }
        }
        return out
    }

    /// A genuine registration of the pack for the server's options, not yet sent; nil when no options came or the
    /// provider refused them.
    func register(profile: String, platform: Platform, username: String, uv: String, attestation: String) throws(ProbeError) -> Genuine? {
        let client = HTTPClient(limits: limits, runDeadline: deadline)
        let values = ["username": username, "displayName": "Probe forgery", "userVerification": uv, "attestation": attestation]
        let log = logger(profile, named: "forgery.registration")
        if let signIn = adapter.signIn { _ = try exchange(client, "signIn", signIn.path, ProbeAdapter.fill(signIn.body, values), log) }
        let begin = try exchange(client, "registration.begin", adapter.registration.begin.path, ProbeAdapter.fill(adapter.registration.begin.body, values), log)
        guard (200..<300).contains(begin.status), let options = Prober.options(begin.json, at: adapter.registration.optionsPath) else { return nil }
        let request = CeremonyRequest(options: .json(options), origin: origin, platform: platform.rawValue, mediation: "modal")
        guard let response = try? ops.create(.profile(profile), request).response else { return nil }
        return Genuine(options: options, response: response, values: values, client: client, profile: profile)
    }

    func finishRegistration(_ response: JSONValue, _ genuine: Genuine, log: Logger) throws(ProbeError) -> Exchange {
        let body = ProbeAdapter.write(response, into: ProbeAdapter.fill(adapter.registration.finish.body, genuine.values), at: adapter.registration.responsePath)
        return try exchange(genuine.client, "registration.finish", adapter.registration.finish.path, body, log)
    }

    /// A genuine sign-in of `account` (or, with `using`, by another credential answering its options).
    func signIn(_ account: Genuine, uv: String, using other: Genuine? = nil) throws(ProbeError) -> Genuine? {
        var values = account.values
        values["userVerification"] = uv
        let log = logger(account.profile, named: "forgery.signIn")
        let ceremony = adapter.authentication
        let begin = try exchange(account.client, "authentication.begin", ceremony.begin.path, ProbeAdapter.fill(ceremony.begin.body, values), log)
        guard (200..<300).contains(begin.status), var options = Prober.options(begin.json, at: ceremony.optionsPath) else { return nil }
        let signer = other ?? account
        let id = signer.response["id"]?.stringValue ?? ""
        if other != nil { options = options.setting("allowCredentials", .array([.object([("type", "public-key"), ("id", .string(id))])])) }
        let request = CeremonyRequest(options: .json(options), origin: origin, platform: nil, mediation: "modal", pick: id)
        guard let response = try? ops.get(.profile(signer.profile), request).response else { return nil }
        return Genuine(options: options, response: response, values: values, client: account.client, profile: account.profile)
    }

    func finishSignIn(_ response: JSONValue, _ genuine: Genuine, log: Logger) throws(ProbeError) -> Exchange {
        let ceremony = adapter.authentication
        let body = ProbeAdapter.write(response, into: ProbeAdapter.fill(ceremony.finish.body, genuine.values), at: ceremony.responsePath)
        return try exchange(genuine.client, "authentication.finish", ceremony.finish.path, body, log)
    }

    func key(_ genuine: Genuine, _ profile: String) throws(ProbeError) -> ForgeryContext? {
        guard let id = genuine.response["id"]?.stringValue.flatMap(Base64URL.decode),
              let pkcs8 = try? ops.vault.scoped(to: profile).privateKey(for: id) else { return nil }
        return try? ForgeryContext(pkcs8: pkcs8)
    }

    /// Sends `forged` and records the verdict: refused is what a correct server does.
    func judge(_ exchange: Exchange, into cell: inout ForgedCell, log: Logger) {
        cell.status = exchange.status
        cell.outcome = Prober.accepted(exchange) ? .accepted : .refused
        cell.message = cell.outcome == .refused ? Prober.message(exchange) : "the server accepted it"
        log.forged(cell)
    }

    func forgeRegistration(_ forgery: Forgery, profile: String, platform: Platform, runID: String, upgradeAccepted: Bool,
                           into cell: inout ForgedCell) throws(ProbeError) {
        let uv = forgery == .noUserVerification ? "required" : "preferred"
        let username = "forged-\(forgery.rawValue)-\(runID)@probe.credemu.test"
        guard let genuine = try register(profile: profile, platform: platform, username: username, uv: uv,
                                         attestation: forgery == .badAttestation ? "direct" : "none") else {
            cell.message = "the server issued no registration options, or the provider refused them"
            return
        }
        if forgery == .noUserVerification && genuine.options["authenticatorSelection"]?["userVerification"]?.stringValue != "required" {
            cell.outcome = .ruledOut
            cell.message = "the server's options did not say userVerification \"required\" when asked to, so UV=0 is not a fault"
            return
        }
        guard var context = try key(genuine, profile) else { cell.message = "the provider's key for the response could not be read"; return }
        context.offeredAlgorithms = (genuine.options["pubKeyCredParams"]?.arrayValue ?? []).compactMap {
            $0["alg"]?.numberValue.flatMap { COSEAlgorithm(rawValue: Int($0)) }
        }
        let forged: JSONValue
        do { forged = try forgery.apply(to: genuine.response, context) } catch {
            cell.outcome = error.code == .noUnofferedAlgorithm ? .ruledOut : .notRun
            cell.message = error.message
            return
        }
        let log = logger(profile, named: "forgery.\(forgery.rawValue)")
        judge(try finishRegistration(forged, genuine, log: log), into: &cell, log: log)
        // §7.1 step 15 checks UP only outside conditional create, which the interface does not tell apart.
        if forgery == .noUserPresence && cell.outcome == .accepted && upgradeAccepted {
            cell.outcome = .ruledOut
            cell.message = "the server accepts UP=0 registrations (it took the automatic upgrade) and this interface does not say which registration is modal (WebAuthn L3 §7.1 step 15 waives UP for mediation conditional)"
        }
    }

    func forgeAssertion(_ forgery: Forgery, a: (Genuine, Bool)?, b: (Genuine, Bool)?, platform: Platform, into cell: inout ForgedCell) throws(ProbeError) {
        guard let (account, accepted) = a, accepted else {
            cell.message = "the server took no genuine registration, so there is no account to sign in to"
            return
        }
        var other: Genuine?
        if forgery == .otherUsersCredential {
            guard let (genuineB, acceptedB) = b, acceptedB else { cell.message = "the server took no second account's registration"; return }
            other = genuineB
        }
        let uv = forgery == .noUserVerification ? "required" : "preferred"
        guard let genuine = try signIn(account, uv: uv, using: other) else {
            cell.message = "the server issued no sign-in options, or the provider refused them"
            return
        }
        if forgery == .noUserVerification && genuine.options["userVerification"]?.stringValue != "required" {
            cell.outcome = .ruledOut
            cell.message = "the server's sign-in options did not say userVerification \"required\" when asked to, so UV=0 is not a fault"
            return
        }
        guard var context = try key(other ?? account, (other ?? account).profile) else { cell.message = "the provider's key could not be read"; return }
        context.userHandle = account.options["user"]?["id"]?.stringValue.flatMap(Base64URL.decode)
        let log = logger(account.profile, named: "forgery.\(forgery.rawValue)")
        let forged: JSONValue
        do { forged = try forgery.apply(to: genuine.response, context) } catch { cell.message = error.message; return }
        if forgery == .replayed {
            let first = try finishSignIn(forged, genuine, log: log)
            guard Prober.accepted(first) else { cell.message = "the server refused the genuine sign-in, so there is nothing to replay: " + Prober.message(first); return }
        }
        judge(try finishSignIn(forged, genuine, log: log), into: &cell, log: log)
    }

    /// A security key's credential signs in twice (its counter grows), then a third sign-in is signed with the
    /// first's counter.
    func forgeCounter(keyProfile: String?, platform: Platform, runID: String, into cell: inout ForgedCell) throws(ProbeError) {
        guard let keyProfile else { cell.message = "no pack of the registry is a security key, whose counter grows"; return }
        guard let account = try register(profile: keyProfile, platform: platform, username: "forged-counter-\(runID)@probe.credemu.test", uv: "preferred", attestation: "none"),
              Prober.accepted(try finishRegistration(account.response, account, log: logger(keyProfile, named: "forgery.account"))) else {
            cell.message = "the server took no security-key registration"
            return
        }
        let log = logger(keyProfile, named: "forgery.counterRegression")
        var first: UInt32?
        for _ in 0..<2 {
            guard let genuine = try signIn(account, uv: "preferred"), Prober.accepted(try finishSignIn(genuine.response, genuine, log: log)) else {
                cell.message = "the server refused a genuine security-key sign-in, so no counter grew"
                return
            }
            if first == nil { first = Prober.authData(genuine.response).map { $0[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } } }
        }
        guard let genuine = try signIn(account, uv: "preferred"), var context = try key(account, keyProfile) else {
            cell.message = "the server issued no third sign-in's options"
            return
        }
        context.signCount = first ?? 1
        let forged: JSONValue
        do { forged = try Forgery.counterRegression.apply(to: genuine.response, context) } catch { cell.message = error.message; return }
        judge(try finishSignIn(forged, genuine, log: log), into: &cell, log: log)
    }
}

extension Prober.Logger {
    func forged(_ cell: ForgedCell) {
        _ = try? vault.appendEvent(kind: "probe", outcome: cell.outcome == .refused ? "refused" : cell.outcome.rawValue, reason: "success",
                                   detail: .object([("variant", .string(variant)), ("result", cell.json)]), at: now())
    }
}
