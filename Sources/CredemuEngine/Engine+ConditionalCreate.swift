import Foundation
import Vault
import WebAuthn

extension Engine {
    /// An automatic passkey upgrade: `mediation: "conditional"` on the web, `isConditional` on Android,
    /// `requestStyle: .conditional` on Apple. The provider creates the passkey with no UI when its conditions
    /// hold, and otherwise fails silently with a reason (providers.md §2.1, §3.1; seeds 000 and 001).
    func conditionalCreate(_ options: CreationOptions, rpID checkedRPID: Result<String, CeremonyError>, caller: Caller,
                           settings: PasskeySettings?) throws(CeremonyError) -> RegistrationResponse {
        switch knobs.conditionalMode {
        case .modal:
            return try modalCreate(options, rpID: checkedRPID, caller: caller, settings: settings,
                                   note: knobs.cite("conditionalCreate.mode", "modal") + ": mediation ignored, the provider's sheet was shown")
        case .unsupported, .silent:
            break
        }
        var detail = ceremonyDetail(options, caller: caller)
        do throws(CeremonyError) {
            try checkCreationRequest(options)
            // Client rules first (§5.1.3): these are thrown errors, not silent no-ops.
            if caller.isCrossOrigin {
                throw CeremonyError(.notAllowed("Conditional create is not allowed in a cross-origin iframe."), reason: .crossOriginIframe)
            }
            if options.userVerification == .required {
                throw CeremonyError(.constraint("Conditional create cannot perform the user verification the request requires."),
                                    reason: .userVerificationRequired)
            }
            let rpID = try checkedRPID.get()
            let algorithm = try negotiateAlgorithm(options.pubKeyCredParams)
            if knobs.conditionalMode == .unsupported {
                throw ineligible(.conditionalCreateUnsupported, knobs.cite("conditionalCreate.mode", "unsupported"))
            }
            if largeBlobRequirementUnmet(options.extensionInputs) {
                throw ineligible(.largeBlobUnsupported, "the RP requires large blob support; " + knobs.cite("extensions.largeBlob", knobs.largeBlob.rawValue))
            }
            try checkPlatformSupport()
            guard profile.passkeysEnabled else { throw ineligible(.passkeysDisabled, "passkeys are turned off in the provider") }
            guard profile.automaticPasskeyUpgrades else {
                throw ineligible(.optOut, "the user turned automatic passkey upgrades off (a per-account setting)")
            }
            if knobs.requireSyncedProfile && !(profile.browserSignedIn && profile.syncEnabled) {
                throw ineligible(.passwordStoreUnavailable, knobs.cite("conditionalCreate.requireSyncedProfile", "true") + " and the browser profile is "
                                 + (profile.browserSignedIn ? "signed in but not syncing passwords" : "not signed in"))
            }
            if knobs.requirePasscode && !profile.passcodeSet {
                throw ineligible(.noDevicePasscode, knobs.cite("conditionalCreate.requirePasscode", "true") + " and the device has no passcode")
            }
            if knobs.privateBrowsing == .ineligible && profile.privateBrowsing {
                throw ineligible(.privateBrowsing, knobs.cite("conditionalCreate.privateBrowsing", "ineligible") + " and the tab is a private-browsing one")
            }
            try checkRecentPassword(options, caller: caller)
            if knobs.rejectIfPasskeyExists {
                let existing = try store { () throws(VaultError) in
                    try vault.passkeys(rpID: rpID, userHandle: options.user.id, userName: options.user.name, limit: 1)
                }
                if let passkey = existing.first {
                    throw ineligible(.passkeyExists, knobs.cite("conditionalCreate.rejectIfPasskeyExists", "true") + ": passkey \(passkey.id) exists for \(passkey.userName)")
                }
            }
            if let match = try excludedMatch(options, rpID: rpID) {
                switch knobs.conditionalExclusion {
                case .noop: throw ineligible(.excludedCredential, knobs.cite("conditionalCreate.excludedCredential", "noop") + ": excluded credential \(match.id)")
                case .error: throw exclusionFailure(match, timeout: options.timeout)
                }
            }
            let response = try makeCredential(options, rpID: rpID, algorithm: algorithm, caller: caller, settings: settings,
                                              userPresent: knobs.conditionalUserPresent, userVerified: knobs.conditionalUserVerified,
                                              detail: &detail)
            log("create", "success", .success, detail + [
                ("credentialId", .string(Base64URL.encode(response.credentialID))),
                ("silent", true),
                ("notification", .string(knobs.notification)),
                ("flags", .string(knobs.cite("conditionalCreate.userPresent", "\(knobs.conditionalUserPresent)") + "; "
                                  + knobs.cite("conditionalCreate.userVerified", "\(knobs.conditionalUserVerified)"))),
                response.flagsDetail,
            ])
            return response
        } catch {
            throw failed("create", error, detail)
        }
    }

    /// A silent, expected no-op: NotAllowedError on the web, no UI, the reason in the log.
    func ineligible(_ reason: Reason, _ why: String) -> CeremonyError {
        CeremonyError(.notAllowed("The operation either timed out or was not allowed: no passkey was created (\(reason): \(why))."),
                      reason: reason, silent: true)
    }

    /// The platform versions the pack requires for conditional create (Play services, OS).
    func checkPlatformSupport() throws(CeremonyError) {
        // An unset version means a current device: only a version set below the minimum fails.
        func below(_ actual: String?, _ minimum: String?) -> Bool {
            guard let minimum, let min = Version(minimum), let actual, let have = Version(actual) else { return false }
            return have < min
        }
        if below(profile.playServicesVersion, knobs.minimumPlayServices) {
            throw CeremonyError(.notAllowed("Conditional create needs Google Play services \(knobs.minimumPlayServices!) or newer; the device has \(profile.playServicesVersion!)."),
                                reason: .platformUnsupported)
        }
        if below(profile.osVersion, knobs.minimumOSVersion) {
            throw CeremonyError(.notAllowed("Conditional create needs OS \(knobs.minimumOSVersion!) or newer; the device has \(profile.osVersion!)."),
                                reason: .platformUnsupported)
        }
    }

    /// The heart of the upgrade: a stored password for this account, filled or used within the window
    /// (GPM: `kNoMatchingPassword`, `kNoRecentlyUsedPassword`).
    func checkRecentPassword(_ options: CreationOptions, caller: Caller) throws(CeremonyError) {
        let realm = caller.signonRealm
        // A password the RP reported unused is not one the provider offers, so it is not counted either.
        let all = try store { () throws(VaultError) in
            try knobs.passwordMatch == .exactOrPSL ? vault.passwords(sameSiteAs: realm) : vault.passwords(origin: realm)
        }.filter { $0.retiredAt == nil }
        // A password another manager holds is not this provider's to count (GPM: "only consider passwords stored in GPM").
        let saved = knobs.countedPasswords == .ownStore ? all.filter { $0.savedIn == nil } : all
        let matching = knobs.matchUsername ? saved.filter { $0.username == options.user.name } : saved
        guard !matching.isEmpty else {
            let elsewhere = all.filter { $0.savedIn != nil && (!knobs.matchUsername || $0.username == options.user.name) }.compactMap(\.savedIn)
            throw ineligible(.noMatchingPassword, "no saved password for '\(options.user.name)' at \(realm)"
                             + (knobs.passwordMatch == .exactOrPSL ? " or a public-suffix match of it" : "")
                             + " (" + knobs.cite("conditionalCreate.passwordMatch", knobs.passwordMatch.rawValue)
                             + (knobs.matchUsername ? "; " + knobs.cite("conditionalCreate.matchUsername", "true") : "") + ")"
                             + (elsewhere.isEmpty || saved.count == all.count ? "" : "; the one saved in \(elsewhere.joined(separator: ", ")) is not counted: "
                                + knobs.cite("conditionalCreate.countedPasswords", knobs.countedPasswords.rawValue)))
        }
        let now = clock.now()
        let window = TimeInterval(knobs.windowSeconds)
        let latest = matching.compactMap { lastCountedUse($0) }.max()
        guard let latest, now.timeIntervalSince(latest) <= window else {
            let ago = latest.map { "\(Int(saturating: now.timeIntervalSince($0))) s ago" } ?? "never filled or used"
            throw ineligible(.noRecentlyUsedPassword, "the matching password was last counted \(ago); "
                             + knobs.cite("conditionalCreate.windowSeconds", "\(knobs.windowSeconds)") + ", "
                             + knobs.cite("conditionalCreate.countedTimes", knobs.countedTimes.joined(separator: "+")))
        }
    }

    /// The newest of the password's times the pack counts.
    func lastCountedUse(_ p: PasswordRecord) -> Date? {
        var times: [Date] = []
        if knobs.countedTimes.contains("created") { times.append(p.createdAt) }
        if knobs.countedTimes.contains("lastFilled"), let t = p.lastFilledAt { times.append(t) }
        if knobs.countedTimes.contains("lastUsed"), let t = p.lastUsedAt { times.append(t) }
        return times.max()
    }
}

extension Caller {
    /// Where the caller's passwords are saved: the web origin, or `android://HASH@package` for an app.
    public var signonRealm: String {
        switch origin {
        case .web: return origin.description
        case .androidApp(let hash): return "android://" + Base64URL.encode(hash) + "@" + (androidPackageName ?? "")
        }
    }
}
