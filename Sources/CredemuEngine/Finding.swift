import Vault
import WebAuthn

/// Something an RP's own request did against the seeds' guidance, with the criterion it comes from and a
/// fix. The engine records findings in the event log (kind "finding") while it serves the RP.
public struct Finding: Equatable, Sendable {
    public var criterion: String
    public var code: String
    public var message: String
    public var fix: String

    public var json: JSONValue {
        .object([("criterion", .string(criterion)), ("code", .string(code)), ("message", .string(message)), ("fix", .string(fix))])
    }

    /// The findings recorded for a profile, oldest first.
    public static func list(_ vault: Vault) throws -> [Finding] {
        try vault.events(kind: "finding").map { event in
            Finding(criterion: event.detail["criterion"]?.stringValue ?? "", code: event.reason,
                    message: event.detail["message"]?.stringValue ?? "", fix: event.detail["fix"]?.stringValue ?? "")
        }
    }
}

extension Engine {
    func record(_ finding: Finding) {
        log("finding", "finding", Reason(rawValue: finding.code), [("criterion", .string(finding.criterion)),
                                                                   ("message", .string(finding.message)), ("fix", .string(finding.fix))])
    }

    /// Checks a create request against N2.6-AC03, AC04, AC05, WebAuthn §5.1.3 and §5.4.4 before it runs.
    func reviewCreate(_ options: CreationOptions, caller: Caller, rpID: String) {
        let conditional = options.mediation == "conditional"
        let unlisted = (try? vault.countAccountPasskeys(rpID: rpID, userHandle: options.user.id, userName: options.user.name,
                                                        excluding: options.excludeCredentials.map(\.id))) ?? 0
        if unlisted > 0 {
            record(Finding(criterion: "N2.6-AC04", code: "missingExclusionIds",
                           message: "The provider holds \(unlisted) passkey(s) for \(options.user.name) on \(rpID) that excludeCredentials does not list.",
                           fix: "Send every server-known credential ID of the account in excludeCredentials."))
        }
        let discoverable = options.residentKey.map { $0 == "required" || $0 == "preferred" } ?? options.requireResidentKey
        if options.authenticatorAttachment == "cross-platform", discoverable {
            // WebAuthn L3 §5.4.4: the attachment filters the authenticators; Chromium then offers no platform manager.
            record(Finding(criterion: "WebAuthn L3 §5.4.4", code: "crossPlatformPasskey",
                           message: "The create asks authenticatorAttachment \"cross-platform\" for a discoverable credential (a passkey): the platform's password manager (GPM, iCloud Keychain) is not offered, so its users can register only with a phone or a security key.",
                           fix: "Leave authenticatorAttachment unset for passkeys (give hints such as [\"security-key\"] to steer the browser's UI instead, WebAuthn L3 §5.8.7); ask for cross-platform only to register a security key as a second factor."))
        }
        guard conditional else { return }
        if options.userVerification == .required {
            record(Finding(criterion: "WebAuthn L3 §5.1.3 / N2.6", code: "conditionalCreateRequiresUV",
                           message: "A conditional create asked for userVerification \"required\"; no user verification can happen without UI.",
                           fix: "Use userVerification \"preferred\" (or \"discouraged\") for the automatic upgrade, and accept UV=0."))
        }
        // The log's state for the origin and the account: marks (`EventMark`), one indexed lookup each.
        let realm = caller.signonRealm
        let lastAutofill = (try? vault.latestMark(.autofill, realm)) ?? nil
        if let last = lastAutofill, let filled = last.value, filled != options.user.name {
            record(Finding(criterion: "N2.6-AC03", code: "accountMismatch",
                           message: "The conditional create is for '\(options.user.name)', but the password just autofilled at \(realm) was for '\(filled)'.",
                           fix: "Build the creation options for the account that completed this sign-in, not an earlier one."))
        }
        // A qualifying sign-in is an autofill, or a filled password marked used, at this origin.
        let lastSignIn = max(lastAutofill?.eventID ?? 0, ((try? vault.latestMark(.passwordUsed, realm)) ?? nil)?.eventID ?? 0)
        let previous = (try? vault.latestMark(.conditionalCreate, caller.serializedOrigin, options.user.name)) ?? nil
        if let previous, lastSignIn < previous.eventID {
            record(Finding(criterion: "N2.6-AC05", code: "repeatedAutomaticAttempt",
                           message: "A second automatic upgrade for '\(options.user.name)' came without a new qualifying password sign-in.",
                           fix: "Send one conditional request per completed sign-in; try again only after the next password sign-in."))
        }
    }

    /// Checks a signal against seed 003's guidance before it runs.
    func reviewSignal(_ request: SignalRequest, decodedUser: [UInt8]?, accepted: [[UInt8]]) {
        switch request {
        case .allAcceptedCredentials:
            guard let user = decodedUser else { return }
            let used = (try? vault.countUsedPasskeys(rpID: request.rpId, userHandle: user, notIn: accepted)) ?? 0
            if used > 0 {
                record(Finding(criterion: "seed-003", code: accepted.isEmpty ? "emptyAcceptedList" : "partialAcceptedList",
                               message: "The accepted list for the user omits \(used) passkey(s) the RP signed in with successfully; the provider may hide or delete them.",
                               fix: "Send the complete set of credential IDs the server accepts for the user; an empty list only when the server confirms none."))
            }
            if let again = (try? vault.firstMarked(.unknownSignal, among: accepted.map { Base64URL.encode($0) })) ?? nil {
                record(Finding(criterion: "seed-003", code: "unknownThenAccepted",
                               message: "Credential \(again) was signalled unknown, then listed as accepted.",
                               fix: "Signal an unknown credential only when the server conclusively does not accept it."))
            }
        case let .currentUserDetails(_, _, _, displayName):
            guard knobs.currentUserDetails == .nameOnly, let user = decodedUser,
                  (try? vault.hasOtherDisplayName(rpID: request.rpId, userHandle: user, than: displayName)) == true else { return }
            record(Finding(criterion: "seed-003", code: "displayNameNotSupported",
                           message: "A display-name update was signalled on \(profile.platform.rawValue), where the provider keeps only the name.",
                           fix: "Report only the fields the platform supports (Apple: the name); do not rely on the display name changing."))
        case .unknownCredential:
            break
        }
    }

    /// Checks passkeys this provider just imported (a move, `Operations.move`) against what the RP saw from the
    /// exporter, which it may have stored: one finding per kind of change, counting the passkeys.
    ///
    /// WebAuthn L3 §6.1.3 makes BE a credential's permanent property and §7.2 has an RP that uses the backup
    /// state refuse an assertion whose BE differs from `credentialRecord.backupEligible` (its backup-eligibility step; go-webauthn and others do);
    /// BS may change. An assertion carries no AAGUID, so the one stored at registration goes on naming the exporter.
    /// CXF's importer sends counter 0 for good (§Passkey).
    public func reviewMove(_ moved: [PasskeyRecord], importedAs settings: PasskeySettings, from exporter: String) {
        // Counted, not named: a scenario's matrix holds the findings, and credential IDs are random (the move's answer names them).
        func count(_ changed: (PasskeySettings) -> Bool) -> Int? {
            let count = moved.filter { changed($0.settings) }.count
            return count == 0 ? nil : count
        }
        let flags = { (s: PasskeySettings) in "BE=\(s.backupEligible ? 1 : 0) BS=\(s.backupState ? 1 : 0)" }
        if let n = count({ $0.backupEligible != settings.backupEligible }) {
            record(Finding(criterion: "WebAuthn L3 §7.2", code: "backupEligibilityChangedByMove",
                           message: "\(n) passkey(s) moved from \(exporter) (registered with \(settings.backupEligible ? "BE=0" : "BE=1")) now assert with \(flags(settings)) from \(profile.name): an RP that checks BE against the registration's, as §7.2 says when it uses the backup state, refuses every sign-in with them.",
                           fix: "Do not refuse an assertion only because BE differs from the registration's: the credential moved to another manager (CXF). Verify the signature, then update the stored flags (or re-register the passkey)."))
        }
        if let n = count({ $0.backupState != settings.backupState && $0.backupEligible == settings.backupEligible }) {
            record(Finding(criterion: "WebAuthn L3 §6.1.3", code: "backupStateChangedByMove",
                           message: "\(n) passkey(s) moved from \(exporter) now assert with \(flags(settings)) from \(profile.name), not the registration's BS: a policy keyed on the stored backup state (prompting for another factor, or not) now decides on stale data.",
                           fix: "Read BS from every assertion and store the latest (§6.1.3: the backup state may change over a credential's lifetime)."))
        }
        if let n = count({ $0.aaguid != settings.aaguid }) {
            record(Finding(criterion: "WebAuthn L3 §6.5.1 / CXF", code: "aaguidChangedByMove",
                           message: "\(n) passkey(s) moved from \(exporter) to \(profile.name), whose AAGUID is \(AAGUID.format(settings.aaguid)): assertions carry no AAGUID, so the one the RP stored at registration goes on naming the exporter.",
                           fix: "Label a passkey by its registration's AAGUID as where it was made, not where it lives now; do not allow or refuse sign-ins by the stored AAGUID."))
        }
        if let n = count({ $0.counter != .zero }) {
            record(Finding(criterion: "CXF §Passkey / WebAuthn L3 §7.2", code: "counterStoppedByMove",
                           message: "\(n) passkey(s) counted under \(exporter); imported into \(profile.name) they send signature counter 0 from now on (CXF's importer must not count): an RP that requires a counter that counted to go on increasing refuses them.",
                           fix: "Follow §7.2: compare counters only when either is nonzero, and treat a counter that stays 0 as no counter, not as a cloned authenticator."))
        }
    }

    func reviewRateLimited(_ limit: PolicyKnobs.RateLimit) {
        record(Finding(criterion: "seed-003", code: "signalRateLimitExceeded",
                       message: "A signal went past the platform's rate limit (\(limit)) and was \(limit.overQuotaText).",
                       fix: "Coalesce signals and reconcile on a documented schedule within the limit; back off by retryMillis on Android."))
    }
}

extension PolicyKnobs.RateLimit {
    var overQuotaText: String {
        switch self {
        case .none: return "refused"
        case .tokenBucket(_, _, _, let o), .window(_, _, let o): return o == .drop ? "dropped" : "rejected"
        }
    }
}
