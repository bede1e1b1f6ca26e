import CredemuEngine
import CredemuOperations
import WebAuthn

/// The stale-account-context checks (issue 35.2; seed 002 N2.5-AC03, seed 000 N2.6-AC03 and N2.6-AC06): account A
/// signs in and begins a registration, the provider makes the credential, and before its answer reaches the server
/// the session signs out, switches to account B or signs in as A again. The server must refuse the answer and store
/// the credential for no one.
///
/// What is observed: the finish step's answer, then whether the credential signs in, as A and as B, each on a fresh
/// session, with an assertion the provider makes for the server's challenge whatever its `allowCredentials` lists
/// (a server accepting it holds the credential for that account). A server that stores the credential but refuses
/// every sign-in with it (say, because the assertion's user handle is A's and the account is B) is beyond this; so
/// is what the server keeps for accounts the probe does not sign in as.
extension Prober {
    typealias Check = StaleContextCheck

    /// The checks, with responses made by `policy` on `platform` (the first provider of the run: the checks are
    /// about the server's sessions and come out the same with any pack). They need an adapter with `signIn` and
    /// `signOut`; without one each is reported as `needsAdapter`, never skipped.
    func staleContext(_ policy: any ProviderPolicy, _ platform: Platform) throws(ProbeError) -> [StaleContextCheck] {
        let provider = "\(policy.id)@\(platform.rawValue)"
        guard let signIn = adapter.signIn, let signOut = adapter.signOut else {
            let why = adapter.signIn == nil
                ? "the \(adapter.name == ProbeAdapter.conformance.name ? "FIDO2 Conformance Test API" : "adapter") has no session (no signIn step): "
                    + "signing out or switching accounts cannot be expressed; run with --adapter and signIn and signOut steps (docs/probe.md)"
                : "the adapter has no signOut step: add one (\"signOut\": {\"path\": \"/logout\"}) to run the stale-account-context checks (docs/probe.md)"
            return Check.Kind.allCases.map { Check(kind: $0, outcome: .needsAdapter, message: why, provider: provider) }
        }
        let run = StaleRun(profile: Prober.profile(policy, platform), platform: platform, provider: provider,
                           names: "\(policy.id)-stale-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))", signIn: signIn, signOut: signOut)
        var out: [Check] = []
        for kind in [Check.Kind.signedOut, .switchedAccount, .supersededSignIn] { out += try stale(kind, run) }
        return out
    }

    struct StaleRun {
        var profile: String
        var platform: Platform
        var provider: String
        /// The prefix of the check's generated user names.
        var names: String
        var signIn: ProbeAdapter.Step
        var signOut: ProbeAdapter.Step

        func username(_ kind: Check.Kind, _ account: String) -> String { "\(names)-\(kind.rawValue)-\(account)@probe.credemu.test" }

        static func values(_ username: String) -> [String: String] {
            ["username": username, "displayName": "Probe stale context", "userVerification": "preferred", "attestation": "none"]
        }
    }

    /// One check: A begins a registration, the session changes as `kind` says, the answer goes to the server on
    /// that session, then the credential tries to sign in as A and as B. A switch also checks the options B gets.
    private func stale(_ kind: Check.Kind, _ run: StaleRun) throws(ProbeError) -> [Check] {
        let log = logger(run.profile, named: "staleContext.\(kind.rawValue)")
        let a = run.username(kind, "a"), b = run.username(kind, "b")
        func done(_ outcome: Check.Outcome, _ message: String) -> [Check] {
            let check = Check(kind: kind, outcome: outcome, message: message, provider: run.provider)
            guard kind == .switchedAccount, outcome == .notRun else { return [check] }
            return [check, Check(kind: .optionsAfterSwitch, outcome: .notRun, message: "no switch happened: " + message, provider: run.provider)]
        }
        let client = HTTPClient(limits: limits, runDeadline: deadline)
        let signedIn = try exchange(client, "signIn", run.signIn.path, ProbeAdapter.fill(run.signIn.body, StaleRun.values(a)), log, method: run.signIn.method)
        guard Prober.sessionChanged(signedIn) else { return done(.notRun, "the server refused account A's sign-in: " + Prober.message(signedIn)) }
        let registration = adapter.registration
        let begin = try exchange(client, "registration.begin", registration.begin.path, ProbeAdapter.fill(registration.begin.body, StaleRun.values(a)), log)
        guard (200..<300).contains(begin.status), let options = Prober.options(begin.json, at: registration.optionsPath) else {
            return done(.notRun, "account A's registration options request failed: " + Prober.message(begin))
        }
        let response: JSONValue
        do {
            response = try ops.create(.profile(run.profile), CeremonyRequest(options: .json(options), origin: origin, platform: run.platform.rawValue, mediation: "modal")).response
        } catch where error.code != .storage {
            return done(.notRun, "the provider refused account A's registration options: \(error.name): \(ProbeError.quote(error.message))")
        } catch {
            throw ProbeError(.vault, "The probe's vault refused: \(error.message)")
        }

        // The session changes while the answer is on its way.
        let (step, account, when): (ProbeAdapter.Step, String, String) = switch kind {
        case .signedOut: (run.signOut, a, "after the session signed out")
        case .switchedAccount: (run.signIn, b, "after account B signed in on the session")
        default: (run.signIn, a, "after account A signed in again")
        }
        let name = kind == .signedOut ? "signOut" : "signIn"
        let changed = try exchange(client, name, step.path, ProbeAdapter.fill(step.body, StaleRun.values(account)), log, method: step.method)
        guard Prober.sessionChanged(changed) else { return done(.notRun, "the server refused the \(name) step: " + Prober.message(changed)) }

        let finish = try exchange(client, "registration.finish", registration.finish.path,
                                  ProbeAdapter.write(response, into: ProbeAdapter.fill(registration.finish.body, StaleRun.values(a)), at: registration.responsePath), log)
        let accepted = Prober.accepted(finish)
        var out: [Check] = []
        if kind == .switchedAccount { out.append(try optionsAfterSwitch(client, b: b, a: options, run, log)) }

        let id = response["id"]?.stringValue ?? ""
        var signedInAs: [String] = []
        for (who, username) in [("A", a), ("B", b)] where try signsIn(with: id, as: username, run, log) { signedInAs.append("account " + who) }
        let answer = accepted ? "the server accepted the answer to account A's registration \(when) (HTTP \(finish.status))"
                              : "the server refused the answer to account A's registration \(when) (\(Prober.message(finish)))"
        let check: Check
        switch (accepted, signedInAs.isEmpty) {
        case (false, true):
            check = Check(kind: kind, outcome: .passed, message: answer + "; the credential signs in as neither account A nor account B", provider: run.provider)
        case (true, true):
            check = Check(kind: kind, outcome: .finding, message: answer + ", though the credential signs in as neither account: the provider keeps a passkey the server said it took", provider: run.provider)
        default:
            check = Check(kind: kind, outcome: .finding, message: answer + "; the credential then signed in as \(signedInAs.joined(separator: " and ")): the server stored it", provider: run.provider)
        }
        log.note(check)
        return [check] + out
    }

    /// N2.6-AC03: after B signed in on the session, the registration options must name B, not A (A's `user.id` or
    /// `user.name` in them is the earlier account's context, reused).
    private func optionsAfterSwitch(_ client: HTTPClient, b: String, a options: JSONValue, _ run: StaleRun, _ log: Logger) throws(ProbeError) -> Check {
        let registration = adapter.registration
        let begin = try exchange(client, "registration.begin", registration.begin.path, ProbeAdapter.fill(registration.begin.body, StaleRun.values(b)), log)
        guard (200..<300).contains(begin.status), let theirs = Prober.options(begin.json, at: registration.optionsPath) else {
            return Check(kind: .optionsAfterSwitch, outcome: .notRun, message: "account B's registration options request failed: " + Prober.message(begin), provider: run.provider)
        }
        let idA = options["user"]?["id"]?.stringValue, nameA = options["user"]?["name"]?.stringValue
        let idB = theirs["user"]?["id"]?.stringValue, nameB = theirs["user"]?["name"]?.stringValue
        let shown = "user.id \(Prober.clipID(idB)), user.name \"\(ProbeError.quote(nameB ?? "", limit: 60))\""
        let check = (idA != nil && idB == idA) || (nameA != nil && nameB == nameA)
            ? Check(kind: .optionsAfterSwitch, outcome: .finding, message: "after account B signed in on the session, the registration options name account A (\(shown)): a passkey made for them would be A's", provider: run.provider)
            : Check(kind: .optionsAfterSwitch, outcome: .passed, message: "after account B signed in on the session, the registration options name account B (\(shown)), not A", provider: run.provider)
        log.note(check)
        return check
    }

    /// Whether the credential `id` signs in as `username` on a fresh session: the provider answers the server's
    /// challenge with it whatever `allowCredentials` lists, and the server accepts the assertion.
    private func signsIn(with id: String, as username: String, _ run: StaleRun, _ log: Logger) throws(ProbeError) -> Bool {
        let client = HTTPClient(limits: limits, runDeadline: deadline)
        let values = StaleRun.values(username)
        guard Prober.sessionChanged(try exchange(client, "signIn", run.signIn.path, ProbeAdapter.fill(run.signIn.body, values), log, method: run.signIn.method)) else { return false }
        let ceremony = adapter.authentication
        let begin = try exchange(client, "authentication.begin", ceremony.begin.path, ProbeAdapter.fill(ceremony.begin.body, values), log)
        guard (200..<300).contains(begin.status), let options = Prober.options(begin.json, at: ceremony.optionsPath) else { return false }
        let asked = options.setting("allowCredentials", .array([.object([("type", "public-key"), ("id", .string(id))])]))
        let request = CeremonyRequest(options: .json(asked), origin: origin, platform: run.platform.rawValue, mediation: "modal", pick: id)
        let assertion: JSONValue
        do {
            assertion = try ops.get(.profile(run.profile), request).response
        } catch where error.code != .storage {
            return false
        } catch {
            throw ProbeError(.vault, "The probe's vault refused: \(error.message)")
        }
        var cell = ProbeCell(outcome: .accepted, message: "")
        try finishSignIn(assertion, values: values, client: client, into: &cell, log)
        return cell.outcome == .accepted
    }

    /// A session step (sign-in or sign-out) that went through: a 2xx, or a 3xx (a form's redirect), whose
    /// `status`, if any, is "ok".
    static func sessionChanged(_ exchange: Exchange) -> Bool {
        guard (200..<400).contains(exchange.status) else { return false }
        return exchange.json?["status"]?.stringValue.map { $0 == "ok" } ?? true
    }
}

extension Prober.Logger {
    /// A stale-context check's verdict in the event log.
    func note(_ check: StaleContextCheck) {
        append(check.outcome.rawValue, [("result", check.json)])
    }
}
