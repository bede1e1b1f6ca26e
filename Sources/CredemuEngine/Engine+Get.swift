import Foundation
import Signing
import Vault
import WebAuthn

extension Engine {
    /// `navigator.credentials.get()` with the simulated user choosing (WebAuthn L3 §5.1.4, §6.3.3). Hidden
    /// passkeys are never offered.
    ///
    /// - Parameter pick: the credential the user picks when several match; a queued `pick:` decision does
    ///   the same. By default the most recently used (or, failing that, the newest).
    public func get(_ options: RequestOptions, caller: Caller, pick: Pick? = nil) throws(CeremonyError) -> AuthenticationResponse {
        var detail = getDetail(options, caller: caller)
        do throws(CeremonyError) {
            let (rpID, appID) = try checkedGetRequest(options, caller: caller)
            try checkKeyCanAnswer(options.userVerification, timeout: options.timeout)
            try checkConditionalGetAnswered(options, rpID: rpID)
            try checkImmediateGet(options, rpID: rpID, caller: caller, detail: &detail)
            // An immediate request's prompt times out after immediateGet.timeoutMillis, not the RP's timeout.
            let timeout = options.mediation == "immediate" ? Double(knobs.immediateGetTimeoutMillis) : options.timeout
            // One short transaction takes the user's decision, chooses the credential and records its use
            // (counter, time, log entry), so concurrent gets of an incrementing credential get distinct counters.
            // A declined prompt still commits, consuming its decision. Signing runs after it, outside the vault's
            // lock, so ceremonies sign in parallel; a key that parsed signs, so the record stands.
            // Without an allow list the vault picks in last-use order, so the last uses still in memory go first.
            if !options.allowCredentials.contains(where: { $0.type == "public-key" }) {
                try store { () throws(VaultError) in try vault.flushUses() }
            }
            // Beside a batch of events or a move written off the vault's lock: an assertion of a passkey and key in
            // memory, its counter zero, runs no statement. Its effects (the last use, the event) come after every
            // statement it may run, so an attempt that reached for one left nothing (`Vault.atomically(besideWork:)`).
            let outcome = try atomically(besideWork: true) { () throws(CeremonyError) -> Result<(PasskeyRecord, any SigningKey, UInt32, [(String, JSONValue)], CBOR?), CeremonyError> in
                let decision = try nextDecision()
                if let failure = declined(decision, timeout: timeout) { return .failure(failure) }
                var chosen = pick
                if case .pick(let picked) = decision { chosen = picked }
                let record = try chooseCredential(options, rpID: rpID, pick: chosen, appID: appID)
                let key = try signingKey(for: record)
                let signCount = record.settings.counter == .increment ? record.signCount &+ 1 : 0
                let now = clock.now()
                // Extensions first: one that fails leaves no use recorded (a deferred one would outlive a rollback).
                let (authenticatorExtensions, ctapResults) = try assertionAuthenticatorExtensions(options, record: record, appID: appID)
                let extensions = (try assertionExtensionResults(options.extensionInputs, record: record) + ctapResults).sorted { $0.0 < $1.0 }
                // A counter that stays zero leaves only the time to record, which may wait for the log's next batch.
                try store { () throws(VaultError) in
                    try vault.recordAssertion(credentialID: record.credentialID, signCount: signCount, at: now,
                                              deferred: record.settings.counter == .zero)
                }
                detail.append(("credentialId", .string(record.id)))
                detail.append(("userName", .string(record.userName)))
                detail.append(("signCount", .number(Double(signCount))))
                if !extensions.isEmpty { detail.append(("extensions", .array(extensions.map { .string($0.0) }))) }
                log("get", "success", .success, detail)
                return .success((record, key, signCount, extensions, authenticatorExtensions))
            }
            let (record, key, signCount, extensions, authenticatorExtensions) = try outcome.get()
            var flags: AuthenticatorData.Flags = [.userPresent]
            if reportsUserVerification(options.userVerification) { flags.insert(.userVerified) }
            if record.settings.backupEligible { flags.insert(.backupEligible) }
            if record.settings.backupEligible && record.settings.backupState { flags.insert(.backedUp) }
            // The record's RP ID: the AppID's hash for a U2F-era credential found under it (§10.1.1).
            let authData = AuthenticatorData(rpIDHash: rpIDHash(record.rpID), flags: flags, signCount: signCount,
                                             extensions: authenticatorExtensions).bytes
            let clientData = clientData(.get, challenge: options.challenge, caller: caller).bytes
            let signature: [UInt8]
            do throws(SigningError) {
                signature = try key.sign(authData + Digest.sha256(clientData))
            } catch {
                throw CeremonyError(WebAuthnError(.unknownError, "Signing failed: \(error.message)"), reason: .storage)
            }
            return AuthenticationResponse(
                credentialID: record.credentialID, clientDataJSON: clientData, authenticatorData: authData, signature: signature,
                userHandle: record.userHandle, authenticatorAttachment: knobs.attachment, clientExtensionResults: extensions)
        } catch {
            throw failed("get", error, detail)
        }
    }

    /// Runs `body` in one vault transaction, keeping its `CeremonyError`s; `besideWork` as `Vault.atomically`'s.
    func atomically<T>(besideWork: Bool = false, _ body: () throws(CeremonyError) -> T) throws(CeremonyError) -> T {
        do {
            return try vault.atomically(besideWork: besideWork) { try body() }
        } catch let error as CeremonyError {
            throw error
        } catch let error as VaultError {
            throw Engine.storageFailure(error)
        } catch {
            throw CeremonyError(WebAuthnError(.unknownError, "\(error)"), reason: .storage)
        }
    }

    /// The credentials a get may use (never hidden ones), then the user's choice among them: the first offered,
    /// or the one picked, looked up by its ID (so a pick need not be among the first `offerLimit`). A pick naming
    /// another account picked that account's entry, which this one does not offer (`Pick`).
    func chooseCredential(_ options: RequestOptions, rpID: String, pick: Pick?, appID: String? = nil) throws(CeremonyError) -> PasskeyRecord {
        let candidates = try self.candidates(options, rpID: rpID, limit: 1, appID: appID)
        guard let first = candidates.first else {
            let allowed = options.allowCredentials.count { $0.type == "public-key" }
            let scope = allowed == 0 ? "no discoverable credential" : "none of the \(allowed) allowed credentials"
            throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the provider holds \(scope) for \(rpID)."),
                                reason: .noCredential)
        }
        guard let pick else { return first }
        guard pick.names(self), let chosen = try offered(pick.credentialID, options, rpID: rpID, appID: appID) else {
            throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the credential \(pick) the user was to pick is not offered for \(rpID)\(pick.account == nil ? "" : " by \(profile.name)")."),
                                reason: .noCredential)
        }
        return chosen
    }

    /// The most a conditional get's dropdown lists (`autofillOffer`): the most recently used first.
    public static let offerLimit = 100

    /// What a get may offer: the allowed credentials, or the RP's discoverable ones; never hidden ones. Most
    /// recently used (or, failing that, newest) first, as an account chooser lists them; at most `limit`. Without an
    /// allow list the vault picks and orders them (`Vault.offeredPasskeys`), so the RP's size costs nothing. A
    /// credential's credProtect level may keep it out (`protectionAllows`). With an AppID, allowed credentials under
    /// it are tried when none is under the RP ID, as Chromium's get_assertion_task.cc retries with the AppID.
    func candidates(_ options: RequestOptions, rpID: String, limit: Int, appID: String? = nil) throws(CeremonyError) -> [PasskeyRecord] {
        let verified = reportsUserVerification(options.userVerification)
        if !options.allowCredentials.contains(where: { $0.type == "public-key" }) {
            let cap = knobs.credProtect == .supported && !verified ? 1 : 3
            return try store { () throws(VaultError) in try vault.offeredPasskeys(rpID: rpID, limit: limit, maxCredProtect: cap) }
        }
        var found: [PasskeyRecord] = []
        try store { () throws(VaultError) in
            // Look the allowed IDs up one by one: an RP's allow list is short, a vault may be large.
            for descriptor in options.allowCredentials where descriptor.type == "public-key" {
                let id = descriptor.id
                if let record = try vault.passkey(id: id), !record.hidden, !found.contains(where: { $0.credentialID == id }) { found.append(record) }
            }
        }
        // Those under the RP ID, or failing any, under the AppID.
        var candidates: [PasskeyRecord] = []
        for record in found where record.rpID == rpID {
            if try protectionAllows(record, listed: true, verified: verified) { candidates.append(record) }
        }
        if candidates.isEmpty, let appID {
            for record in found where record.rpID == appID {
                if try protectionAllows(record, listed: true, verified: verified) { candidates.append(record) }
            }
        }
        // One candidate (an allow list of one, most gets) is returned as it is: no sorted copy.
        guard candidates.count > 1 || candidates.count > limit else { return candidates }
        return Array(candidates.sorted { a, b in
            (a.lastUsedAt ?? a.createdAt, a.createdAt) > (b.lastUsedAt ?? b.createdAt, b.createdAt)
        }.prefix(limit))
    }

    /// The picked credential, if a get with these options may use it.
    func offered(_ id: [UInt8], _ options: RequestOptions, rpID: String, appID: String? = nil) throws(CeremonyError) -> PasskeyRecord? {
        let allowed = options.allowCredentials.filter { $0.type == "public-key" }.map(\.id)
        guard allowed.isEmpty || allowed.contains(id) else { return nil }
        guard let record = try store({ () throws(VaultError) in try vault.passkey(id: id) }),
              record.rpID == rpID || (appID != nil && !allowed.isEmpty && record.rpID == appID), !record.hidden,
              !allowed.isEmpty || record.settings.discoverable,
              try protectionAllows(record, listed: !allowed.isEmpty, verified: reportsUserVerification(options.userVerification)) else { return nil }
        return record
    }
}

extension Engine {
    /// How long Chrome's sheet waits for a request's timeout: Chromium's `AdjustTimeout`
    /// (content/browser/webauth/authenticator_common_impl.cc): without one, 10 minutes; otherwise clamped to 10 s ..
    /// 10 min (Chromium takes it as given only with its virtual-authenticator testing API on, which credemu is not).
    public static func sheetTimeoutMillis(_ timeout: Double?) -> Int {
        guard let timeout, timeout.isFinite else { return 600_000 }
        return Int(min(max(timeout, 10_000), 600_000))
    }

    /// A modal get whose answering provider holds nothing it may use, where the pack shows the browser's sheet
    /// (`modalGet.noCredential` sheetUntilDismissed): the caller waits on the sheet (`Operations`) before `get`.
    /// A request the browser refuses before any UI (`checkedGetRequest`: Blink's checks, a get's extensions, a bad RP
    /// ID or AppID) shows no sheet: `get` refuses it at once, and logs it; nor does a key of WebDriver's testing API,
    /// which turns the browser's UI off (`AuthenticatorOptions.testingAPI`).
    public func showsSheetForNoCredential(_ options: RequestOptions, caller: Caller) -> Bool {
        guard knobs.noCredentialSheet, securityKey?.testingAPI != true, options.mediation != "conditional", options.mediation != "immediate",
              let (rpID, appID) = try? checkedGetRequest(options, caller: caller) else { return false }
        return (try? candidates(options, rpID: rpID, limit: 1, appID: appID))?.isEmpty ?? false
    }

    /// A get's checks before any provider or sheet, in the order the browser makes them: the mediation value, Blink's
    /// (`checkBlinkRequest`), the extensions', the RP ID's and the AppID's (Chromium's `AuthenticatorCommonImpl`
    /// refuses these before its request handler shows any UI). Returns the RP ID and the AppID the get uses.
    func checkedGetRequest(_ options: RequestOptions, caller: Caller) throws(CeremonyError) -> (rpID: String, appID: String?) {
        try checkImmediateMediationExists(options)
        try checkBlinkRequest(options, caller: caller)
        try checkRequestExtensions(options)
        let rpID = try relyingPartyID(options.rpId, caller: caller)
        return (rpID, try requestAppID(options, caller: caller))
    }

    /// What a get's event says of its request; the outcome adds to it (there is room reserved for that).
    func getDetail(_ options: RequestOptions, caller: Caller) -> [(String, JSONValue)] {
        var detail: [(String, JSONValue)] = []
        detail.reserveCapacity(8)
        detail.append(("origin", .string(caller.serializedOrigin)))
        detail.append(("rpId", .string(options.rpId ?? caller.origin.effectiveDomain ?? "")))
        detail.append(("mediation", .string(options.mediation ?? "modal")))
        detail.append(("allowCredentials", .number(Double(options.allowCredentials.count))))
        return detail
    }

    /// A get the page's API refused before any provider was asked (a device routing it: a wrong origin, a pick of no
    /// credential), logged as this provider's own `get` would log it; returned for throwing.
    public func refusedGet(_ failure: CeremonyError, _ options: RequestOptions, caller: Caller) -> CeremonyError {
        failed("get", failure, getDetail(options, caller: caller))
    }

    /// The passkeys a get with these options may use, most recently used first, at most `limit`: what a device asks
    /// each of its providers before it routes a get (`DeviceSession`). Logs nothing.
    public func usableCredentials(_ options: RequestOptions, caller: Caller, limit: Int) throws(CeremonyError) -> [PasskeyRecord] {
        let rpID = try relyingPartyID(options.rpId, caller: caller)
        return try candidates(options, rpID: rpID, limit: limit, appID: try? requestAppID(options, caller: caller))
    }

    /// Whether a get with these options may use the passkey `id` of this provider.
    public func mayUse(_ id: [UInt8], _ options: RequestOptions, caller: Caller) throws(CeremonyError) -> Bool {
        let rpID = try relyingPartyID(options.rpId, caller: caller)
        return try offered(id, options, rpID: rpID, appID: try? requestAppID(options, caller: caller)) != nil
    }
}
