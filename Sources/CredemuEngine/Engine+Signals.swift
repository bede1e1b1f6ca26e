import Foundation
import Vault
import WebAuthn

extension Engine {
    /// Sends a signal to the provider. It resolves telling the caller nothing, as the spec requires; the
    /// event log records what the provider did. It throws only what the platform throws: `TypeError` for bad
    /// base64url (Safari: `UnknownError`) or for a platform without signal methods (Firefox), `SecurityError` for an
    /// RP ID the caller may not use, and Android's rate-limit exception with a retry delay.
    public func signal(_ request: SignalRequest, caller: Caller) throws(CeremonyError) {
        var detail = signalDetail(request, caller: caller)
        do throws(CeremonyError) {
            let decoded = try checkSignal(request, caller: caller)
            if case .unknownCredential = request { detail.append(("credentialId", .string(Base64URL.encode(decoded.0)))) }
            if case .unknownCredential = request {} else { reviewSignal(request, decodedUser: decoded.0, accepted: decoded.1) }
            guard knobs.signalsForwarded else {
                log("signal", "ignored", .success, detail + [("knob", .string(knobs.cite("signals.forwarded", "false")))])
                return
            }
            let action = signalAction(request)
            if action == "ignore" {
                log("signal", "ignored", .success, detail + [("knob", .string(knobs.cite(signalKnob(request), action)))])
                return
            }
            let limit = knobs.rateLimit(for: request.kind)
            try atomically { () throws(CeremonyError) in
                guard try admitSignal(limit, caller: caller) else {
                    reviewRateLimited(limit)
                    log("signal", "dropped", .rateLimited, detail + [("knob", .string(knobs.cite(PolicyKnobs.rateLimitKnob(request.kind), "\(limit)")))])
                    return
                }
                let changes = try applySignal(decoded, request: request)
                if !changes.isEmpty { try spendSignalToken(limit, caller: caller) }
                detail.append(("changes", .array(changes.map { .object([("credentialId", .string($0.0)), ("action", .string($0.1))]) })))
                detail.append(("knob", .string(knobs.cite(signalKnob(request), action))))
                if case .currentUserDetails = request {
                    detail.append(("userEdits", .string(knobs.cite("signals.currentUserDetailsRespectsUserEdit", "\(knobs.detailsRespectUserEdit)"))))
                }
                log("signal", changes.isEmpty ? "noop" : "applied", .success, detail)
            }
        } catch {
            if error.reason == .rateLimited { reviewRateLimited(knobs.rateLimit(for: request.kind)) }
            throw failed("signal", error, detail)
        }
    }

    /// What a signal's event says of its request; the outcome adds to it.
    func signalDetail(_ request: SignalRequest, caller: Caller) -> [(String, JSONValue)] {
        [("signal", .string(request.kind)), ("origin", .string(caller.serializedOrigin)), ("rpId", .string(request.rpId))]
    }

    /// A signal the page's API refused before any provider heard of it (a device's), logged as this provider's own
    /// `signal` would log it; returned for throwing.
    public func refusedSignal(_ failure: CeremonyError, _ request: SignalRequest, caller: Caller) -> CeremonyError {
        failed("signal", failure, signalDetail(request, caller: caller))
    }

    /// What the page's API checks before any provider hears of a signal: the method exists, the IDs decode, the RP
    /// ID is the caller's. Returns the decoded user or credential ID and accepted list.
    @discardableResult
    public func checkSignal(_ request: SignalRequest, caller: Caller) throws(CeremonyError) -> ([UInt8], [[UInt8]]) {
        guard knobs.signalMethods else {
            // The page calls a property that is not there: V8's message.
            throw CeremonyError(.typeError("PublicKeyCredential.\(request.methodName) is not a function"), reason: .signalMethodsMissing)
        }
        let decoded = try decodeSignal(request)
        _ = try relyingPartyID(request.rpId, caller: caller)
        return decoded
    }

    private func signalKnob(_ request: SignalRequest) -> String {
        switch request {
        case .unknownCredential: return "signals.unknownCredential"
        case .allAcceptedCredentials: return "signals.allAcceptedCredentials"
        case .currentUserDetails: return "signals.currentUserDetails"
        }
    }

    private func signalAction(_ request: SignalRequest) -> String {
        switch request {
        case .unknownCredential: return knobs.unknownCredential.rawValue
        case .allAcceptedCredentials: return knobs.allAcceptedCredentials.rawValue
        case .currentUserDetails: return knobs.currentUserDetails.rawValue
        }
    }

    /// The decoded IDs: (credential or user ID, accepted IDs), in the order the pack says: Chrome checks the
    /// accepted list before the user ID (providers.md §1.3), WebKit and the spec the user ID first.
    private func decodeSignal(_ request: SignalRequest) throws(CeremonyError) -> ([UInt8], [[UInt8]]) {
        func decode(_ s: String, _ field: String) throws(CeremonyError) -> [UInt8] {
            if let bytes = Base64URL.decode(s) { return bytes }
            switch knobs.signalErrorSurface {
            case .resolve: throw CeremonyError(.typeError("Invalid base64url string for \(field)."))
            case .unknownError:
                // WebKit's proxy says this of a bad user ID too (WebAuthenticatorCoordinatorProxy.mm).
                throw CeremonyError(WebAuthnError(.unknownError, "Unable to parse credential ID."), reason: .malformedRequest)
            }
        }
        switch request {
        case let .unknownCredential(_, credentialId):
            return (try decode(credentialId, "credentialId"), [])
        case let .allAcceptedCredentials(_, userId, ids):
            var accepted: [[UInt8]] = []
            var user: [UInt8]?
            if knobs.signalDecodeOrder == .userIdFirst { user = try decode(userId, "userId") }
            for id in ids { accepted.append(try decode(id, "allAcceptedCredentialIds")) }
            if let user { return (user, accepted) }
            return (try decode(userId, "userId"), accepted)
        case let .currentUserDetails(_, userId, _, _):
            return (try decode(userId, "userId"), [])
        }
    }

    /// Applies the pack's action; returns (credential ID, what was done) for each passkey changed, in the order the
    /// vault lists the account's passkeys. Only the passkeys named, or the account's, are read; the changes are
    /// made in SQL, so an RP's or an account's size costs nothing but the rows changed.
    private func applySignal(_ decoded: ([UInt8], [[UInt8]]), request: SignalRequest) throws(CeremonyError) -> [(String, String)] {
        let now = clock.now()
        var changes: [(String, String)] = []
        switch request {
        case .unknownCredential:
            let found = try store { () throws(VaultError) in try vault.passkey(id: decoded.0) }
            guard let passkey = found, passkey.rpID == request.rpId else { return [] }
            switch knobs.unknownCredential {
            case .hide:
                if passkey.hidden { return [] }
                try store { () throws(VaultError) in try vault.setHidden(credentialID: passkey.credentialID, hidden: true, at: now) }
                changes.append((passkey.id, "hidden"))
            case .delete:
                try store { () throws(VaultError) in _ = try vault.removePasskey(credentialID: passkey.credentialID) }
                forget(passkey.credentialID)
                changes.append((passkey.id, "deleted"))
            case .ignore: break
            }
        case .allAcceptedCredentials:
            let user = decoded.0
            if knobs.allAcceptedScope == .firstPasskey {
                let first = try store { () throws(VaultError) in try vault.firstPasskey(rpID: request.rpId, userHandle: user) }
                guard let passkey = first else { return [] }
                let listed = decoded.1.contains(passkey.credentialID)
                switch knobs.allAcceptedCredentials {
                case .hideAndRestore:
                    if !listed && !passkey.hidden {
                        try store { () throws(VaultError) in try vault.setHidden(credentialID: passkey.credentialID, hidden: true, at: now) }
                        changes.append((passkey.id, "hidden"))
                    } else if listed && passkey.hidden {
                        try store { () throws(VaultError) in try vault.setHidden(credentialID: passkey.credentialID, hidden: false, at: now) }
                        changes.append((passkey.id, "restored"))
                    }
                case .deleteMissing:
                    if !listed {
                        try store { () throws(VaultError) in _ = try vault.removePasskey(credentialID: passkey.credentialID) }
                        forget(passkey.credentialID)
                        changes.append((passkey.id, "deleted"))
                    }
                case .ignore: break
                }
                return changes
            }
            switch knobs.allAcceptedCredentials {
            case .hideAndRestore:
                let (hidden, restored) = try store { () throws(VaultError) in
                    (try vault.hidePasskeys(rpID: request.rpId, userHandle: user, notIn: decoded.1, at: now),
                     try vault.restorePasskeys(rpID: request.rpId, userHandle: user, in: decoded.1))
                }
                let all = (hidden.map { ($0, "hidden") } + restored.map { ($0, "restored") }).sorted { $0.0 < $1.0 }
                changes = all.map { ($0.0.id, $0.1) }
            case .deleteMissing:
                let deleted = try store { () throws(VaultError) in try vault.removePasskeys(rpID: request.rpId, userHandle: user, notIn: decoded.1) }
                for passkey in deleted { forget(passkey.credentialID) }
                changes = deleted.map { ($0.id, "deleted") }
            case .ignore: break
            }
        case let .currentUserDetails(_, _, name, displayName):
            let nameOnly = knobs.currentUserDetails == .nameOnly
            // A passkey the user renamed keeps its names where the pack says so (GPM's UpdatePasskey returns false for
            // it: no change, so no quota token either).
            let renamed = try store { () throws(VaultError) in
                try vault.renameUser(rpID: request.rpId, userHandle: decoded.0, name: name, displayName: nameOnly ? nil : displayName,
                                     sparingUserEdits: knobs.detailsRespectUserEdit)
            }
            changes = renamed.map { ($0.id, nameOnly ? "renamed (name only)" : "renamed") }
        }
        return changes
    }

    // MARK: Rate limits

    /// Chrome's quota tracker keys its buckets by the caller origin's registrable domain, not the RP ID's
    /// (`passkey_change_quota_tracker.cc`), and exempts a localhost origin.
    private func quotaDomain(_ caller: Caller) -> String {
        guard case .web(_, let host, _) = caller.origin else { return caller.serializedOrigin }
        return RelyingPartyID.registrableDomain(host)
    }

    private func isExempt(_ limit: PolicyKnobs.RateLimit, _ caller: Caller) -> Bool {
        guard case .tokenBucket(_, _, let exemptLocalhost, _) = limit, exemptLocalhost, case .web(_, let host, _) = caller.origin else { return false }
        return host == "localhost" || host.hasSuffix(".localhost") || host == "127.0.0.1" || host == "[::1]"
    }

    /// Whether the signal may proceed; a rejected one throws with its retry delay, a dropped one returns false.
    private func admitSignal(_ limit: PolicyKnobs.RateLimit, caller: Caller) throws(CeremonyError) -> Bool {
        let now = clock.now()
        switch limit {
        case .none:
            return true
        case let .tokenBucket(capacity, refill, _, overQuota):
            if isExempt(limit, caller) { return true }
            let (tokens, last) = try bucket(quotaDomain(caller), capacity: capacity, refillSeconds: refill, now: now)
            if tokens >= 1 { return true }
            let wait = Int(saturating: (last.addingTimeInterval(TimeInterval(refill)).timeIntervalSince(now) * 1000).rounded(.up))
            return try overQuotaOutcome(overQuota, retryMillis: max(wait, 0))
        case let .window(max, windowSeconds, overQuota):
            let key = "window"
            var calls = (try store { () throws(VaultError) in try vault.quotaState(key) })?
                .split(separator: ",").compactMap { Int64($0) } ?? []
            let cutoff = now.timeIntervalSince1970 * 1000 - Double(windowSeconds) * 1000
            calls = calls.filter { Double($0) > cutoff }
            if calls.count >= max {
                let wait = Int(saturating: (Double(calls[0]) - cutoff).rounded(.up))
                return try overQuotaOutcome(overQuota, retryMillis: wait)
            }
            calls.append(Timestamp.millis(now))
            let state = calls.map(String.init).joined(separator: ",")
            try store { () throws(VaultError) in try vault.setQuotaState(key, state) }
            return true
        }
    }

    private func overQuotaOutcome(_ overQuota: PolicyKnobs.OverQuota, retryMillis: Int) throws(CeremonyError) -> Bool {
        switch overQuota {
        case .drop: return false
        case .reject:
            throw CeremonyError(.notAllowed("The app has exceeded the number of allowed signal API calls; retry after \(retryMillis) ms."),
                                reason: .rateLimited, retryMillis: retryMillis)
        }
    }

    /// Chrome's tracker spends a token only when a signal changed something.
    private func spendSignalToken(_ limit: PolicyKnobs.RateLimit, caller: Caller) throws(CeremonyError) {
        guard case let .tokenBucket(capacity, refill, _, _) = limit, !isExempt(limit, caller) else { return }
        let domain = quotaDomain(caller)
        let (tokens, last) = try bucket(domain, capacity: capacity, refillSeconds: refill, now: clock.now())
        let state = "\(tokens - 1),\(Timestamp.millis(last))"
        try store { () throws(VaultError) in try vault.setQuotaState("bucket:" + domain, state) }
    }

    /// The bucket of a registrable domain, refilled up to now: (tokens, time of the last refill).
    private func bucket(_ domain: String, capacity: Int, refillSeconds: Int, now: Date) throws(CeremonyError) -> (Int, Date) {
        let key = "bucket:" + domain
        let parts = (try store { () throws(VaultError) in try vault.quotaState(key) })?.split(separator: ",").compactMap { Int64($0) }
        guard let parts, parts.count == 2 else { return (capacity, now) }
        var tokens = Int(parts[0])
        var last = Date(timeIntervalSince1970: Double(parts[1]) / 1000)
        // More periods than the capacity fill the bucket all the same; counting them all could overflow.
        let periods = min(Int(saturating: now.timeIntervalSince(last) / Double(refillSeconds)), capacity)
        if periods > 0 {
            tokens = min(capacity, tokens + periods)
            last = tokens == capacity ? now : last.addingTimeInterval(Double(periods * refillSeconds))
        }
        return (tokens, last)
    }
}
