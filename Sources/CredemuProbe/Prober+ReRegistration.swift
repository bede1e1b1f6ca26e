import CredemuEngine
import CredemuOperations
import WebAuthn

/// The `reRegistration` variant (issue 24.1): an account registers twice in the same provider, then signs in with
/// its first passkey's ID, so the server sees what each provider does with the older passkey of an account
/// (`passkeys.priorOfSameUser`): GPM shadows it and a security key overwrites it, so the old ID stops signing in;
/// Apple and the extensions keep both.
extension Prober {
    func reRegistration(profile: String, platform: Platform, knobs: PolicyKnobs, username: String, roaming: Roaming,
                        plainSignIn: ProbeCell) throws(ProbeError) -> ProbeCell {
        let variant = ProbeVariant.reRegistration
        // The first registration: a modal one, as the `modal` variant's, under this variant's name in the log.
        let (first, registered) = try register(variant, profile: profile, platform: platform, knobs: knobs, username: username, roaming: roaming)
        guard let account = registered else {
            if first.outcome != .rejected { return first }
            return ProbeCell(outcome: .notRun, message: "the server refused the account's first registration (\(first.message)), so there is nothing to register again")
        }
        // The knob in short (the event log's create event cites its source in full).
        let prior = "passkeys.priorOfSameUser = \(knobs.priorOfSameUser.rawValue)"
            + (knobs.provenance["passkeys.priorOfSameUser"]?.unconfirmed == nil ? "" : ", unconfirmed")
        let log = logger(profile, variant)
        let values = ["username": username, "displayName": "Probe \(variant.rawValue)", "userVerification": "preferred", "attestation": "none"]

        // The second registration of the same account.
        let begin = try exchange(account.client, "registration.begin", adapter.registration.begin.path,
                                 ProbeAdapter.fill(adapter.registration.begin.body, values), log)
        guard (200..<300).contains(begin.status), let options = Prober.options(begin.json, at: adapter.registration.optionsPath) else {
            var cell = ProbeCell(outcome: .rejected, message: "the options request for the account's second registration failed: " + Prober.message(begin), status: begin.status)
            cell.traits = [.secondPasskeyOfAccount]
            log.verdict(cell)
            return cell
        }
        let userID = options["user"]?["id"]?.stringValue
        if userID != account.userID {
            return ProbeCell(outcome: .ruledOut, message: "the server's options for the account's second registration name another user.id (\(Prober.clipID(userID)) after \(Prober.clipID(account.userID))), so every provider keeps both passkeys as two accounts; WebAuthn L3 §5.4.3: user.id is the handle of the user account")
        }
        let excluded = (options["excludeCredentials"]?.arrayValue ?? []).contains { $0["id"]?.stringValue == account.credentialID }
        let request = CeremonyRequest(options: .json(options), origin: origin, platform: platform.rawValue, mediation: "modal")
        let response: JSONValue
        do {
            response = try ops.create(.profile(profile), request).response
        } catch {
            if excluded && error.name != .web(.typeError) {
                return ProbeCell(outcome: .ruledOut, message: "the server's excludeCredentials names the account's first passkey, so the provider refuses a second one (\(error.name.rawValue)): nothing is shadowed or replaced, as the server means")
            }
            return engineRefusal(error, variant)
        }
        var cell = ProbeCell(outcome: .accepted, message: "")
        (cell.traits, cell.sent) = Prober.registrationTraits(response)
        cell.traits.append(.secondPasskeyOfAccount)
        let newID = response["id"]?.stringValue ?? ""
        let body = ProbeAdapter.write(response, into: ProbeAdapter.fill(adapter.registration.finish.body, values), at: adapter.registration.responsePath)
        let finish = try exchange(account.client, "registration.finish", adapter.registration.finish.path, body, log)
        cell.status = finish.status
        guard Prober.accepted(finish) else {
            cell.outcome = .rejected
            cell.message = Prober.message(finish)
            cell.note = knobs.priorOfSameUser == .kept
                ? "the provider keeps the account's first passkey beside the refused one (\(prior))"
                : "the provider had already made the refused passkey, which \(knobs.priorOfSameUser.rawValue) the account's first one (\(prior)): with this pack the user can no longer sign in"
            log.verdict(cell)
            return cell
        }

        // The sign-in with the first passkey's ID, or, where the pack no longer has it, what the browser offers instead.
        guard plainSignIn.outcome == .accepted else {
            return ProbeCell(outcome: .notRun, message: "the server accepted the second registration, but it refused this pack's plain sign-in, so a sign-in after the re-registration would show nothing new")
        }
        let signInValues = ["username": account.username, "displayName": "", "userVerification": "preferred", "attestation": "none"]
        let ceremony = adapter.authentication
        let signIn = try exchange(account.client, "authentication.begin", ceremony.begin.path, ProbeAdapter.fill(ceremony.begin.body, signInValues), log)
        guard (200..<300).contains(signIn.status), let getOptions = Prober.options(signIn.json, at: ceremony.optionsPath) else {
            var cell = ProbeCell(outcome: .rejected, message: "the options request after the re-registration failed: " + Prober.message(signIn), status: signIn.status)
            cell.traits = [.newestPasskeyOfAccount]
            log.verdict(cell)
            return cell
        }
        let allowed = (getOptions["allowCredentials"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        let listsOld = allowed.isEmpty || allowed.contains(account.credentialID)
        let listing = allowed.isEmpty ? "the server's allowCredentials is empty (the user picks from the provider's list)"
            : listsOld ? "the server still lists the first passkey's ID in allowCredentials" : "the server no longer lists the first passkey's ID in allowCredentials"
        // The user accepts what the browser offers; a sheet that offers nothing (modalGet.noCredential) the user closes
        // at once, so the probe never waits out its timeout.
        func get(_ pick: String?) -> Result<JSONValue, OperationError> {
            let request = CeremonyRequest(options: .json(getOptions), origin: origin, platform: platform.rawValue, mediation: "modal", pick: pick)
            do {
                return .success(try deciding("accept", in: profile) { () throws(OperationError) in try ops.get(.profile(profile), request).response })
            } catch { return .failure(error) }
        }
        var used: ProbeTrait = .olderPasskeyOfAccount
        var assertion: JSONValue
        var note: String
        switch get(listsOld ? account.credentialID : nil) {
        case .success(let answer) where answer["id"]?.stringValue == account.credentialID:
            assertion = answer
            note = "the first passkey's ID still signs in with this pack (\(prior)); \(listing)"
        case .success(let answer):
            assertion = answer
            used = .newestPasskeyOfAccount
            note = "\(listing), which this pack still holds (\(prior)); its sheet offers only the newest one here"
        case .failure(let error) where error.name != .web(.notAllowedError):
            return engineRefusal(error, variant)
        case .failure:
            used = .newestPasskeyOfAccount
            note = "the first passkey's ID no longer signs in with this pack (\(prior)); \(listing)"
            switch get(nil) {
            case .success(let answer): assertion = answer
            case .failure(let error) where error.name == .web(.notAllowedError):
                var cell = ProbeCell(outcome: .rejected, message: "the server's allowCredentials names none of the passkeys this pack still has for the account (only the first, \(Prober.clipID(account.credentialID)), not the new \(Prober.clipID(newID))): the browser finds no passkey (NotAllowedError) and the user cannot sign in")
                cell.traits = [.newestPasskeyOfAccount]
                cell.note = note
                log.verdict(cell)
                return cell
            case .failure(let error): return engineRefusal(error, variant)
            }
        }
        var signedIn = ProbeCell(outcome: .accepted, message: "")
        (signedIn.traits, signedIn.sent) = Prober.assertionTraits(assertion, again: false)
        signedIn.traits.append(used)
        signedIn.sent = "second registration: \(cell.sent); sign-in with the \(used == .olderPasskeyOfAccount ? "first" : "new") passkey: \(signedIn.sent)"
        signedIn.note = note
        try finishSignIn(assertion, values: signInValues, client: account.client, into: &signedIn, log)
        log.verdict(signedIn)
        return signedIn
    }

    /// A credential ID or user handle cut for a message; the server's user handle is its text, so control
    /// characters (a terminal's escape sequences) are shown escaped.
    static func clipID(_ id: String?) -> String {
        guard let id else { return "none" }
        return ProbeError.quote(id, limit: 12)
    }
}
