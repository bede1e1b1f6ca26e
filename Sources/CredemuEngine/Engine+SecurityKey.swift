import Vault
import WebAuthn

extension Reason {
    /// The key cannot make a discoverable credential (U2F only, no resident keys) and the RP requires one.
    public static let residentKeyUnsupported = Reason(rawValue: "residentKeyUnsupported")
    /// The key has no discoverable slot left (CTAP2_ERR_KEY_STORE_FULL).
    public static let keyStoreFull = Reason(rawValue: "keyStoreFull")
    /// The RP requires user verification and the key cannot do it (no PIN, U2F only).
    public static let userVerificationUnavailable = Reason(rawValue: "userVerificationUnavailable")
    /// The key tried to verify the user and failed (the wrong PIN).
    public static let userVerificationFailed = Reason(rawValue: "userVerificationFailed")
    /// Nobody touched the key; the request settled at its timeout.
    public static let userNotPresent = Reason(rawValue: "userNotPresent")
}

/// A roaming authenticator's rules (a profile whose pack's `authenticator.model` is `securityKey`): what its
/// hardware, the profile's `AuthenticatorOptions`, lets it do (WebAuthn L3 §6.3.2 and §6.3.3 for the steps, CTAP 2.1
/// §6.1 and §6.2 for the key's errors, §11.1 for the options).
extension Engine {
    /// The key's hardware, or nil for a passkey provider.
    public var securityKey: AuthenticatorOptions? {
        knobs.model == .securityKey ? (profile.authenticator ?? AuthenticatorOptions()) : nil
    }

    /// The algorithms the authenticator makes credentials with: a U2F-only key's are ES256 alone.
    var offeredAlgorithms: [COSEAlgorithm] {
        securityKey?.isU2F == true ? knobs.algorithms.filter { $0 == .es256 } : knobs.algorithms
    }

    /// Whether a create with these options makes a discoverable credential: always for a passkey provider; on a
    /// key, when the RP requires one, or prefers one and the key can with a slot left (§5.4.6 `residentKey`, an absent
    /// or unknown one read from `requireResidentKey`). Chromium's rule (device/fido/make_credential_request_handler.cc
    /// `SpecializeRequestForAuthenticator`): "preferred" also needs a PIN or built-in UV to be obtainable, and Chrome's
    /// delegate always `SupportsPIN()`, so only the slots count; a full key downgrades it (`kStorageFull`).
    func makesDiscoverable(_ options: CreationOptions) throws(CeremonyError) -> Bool {
        guard let key = securityKey else { return true }
        switch options.residentKey {
        case "required": return true
        case "discouraged": return false
        case "preferred":
            guard key.supportsResidentKeys else { return false }
            return try keySlotsUsed(key) < key.residentKeyCapacity
        default: return options.requireResidentKey
        }
    }

    /// The user verification a create asks of the authenticator: on a key that makes a discoverable credential,
    /// "required" whatever the RP said (Chromium's `upgrade_uv` in `SpecializeRequestForAuthenticator`: a resident key
    /// on a roaming authenticator is always made with UV), so a key without UV cannot make one (measured: Chromium
    /// 156's virtual authenticator answers NotAllowedError at once); the RP's otherwise.
    func creationVerification(_ options: CreationOptions) throws(CeremonyError) -> UserVerification {
        guard securityKey != nil, try makesDiscoverable(options) else { return options.userVerification }
        return .required
    }

    /// What `credProps.rk` says of a new credential: whether it is discoverable, or nil (no `rk`) for a
    /// non-discoverable one on a CTAP 2.0 key with resident keys, which CTAP 2.0 lets make every credential resident,
    /// so Chromium cannot tell (device/fido/make_credential_task.cc: `is_resident_key` is set only when rk was
    /// required, or the key has no resident keys, or it speaks CTAP 2.1).
    func reportedResidentKey(discoverable: Bool) -> Bool? {
        guard let key = securityKey, !discoverable, key.protocol == .ctap2, key.hasResidentKey else { return discoverable }
        return nil
    }

    /// The key's discoverable credentials, counted up to its capacity.
    func keySlotsUsed(_ key: AuthenticatorOptions) throws(CeremonyError) -> Int {
        try store { () throws(VaultError) in try vault.countDiscoverablePasskeys(limit: key.residentKeyCapacity) }
    }

    /// Refuses what the key's hardware cannot do before it is asked to act, in the order a browser meets it: the
    /// touch, then user verification (§6.3.2 steps 3 to 5), for a create or a get; `forResidentKey`: the requirement is
    /// Chrome's for a discoverable credential (`creationVerification`), not the RP's.
    func checkKeyCanAnswer(_ requirement: UserVerification, timeout: Double?, forResidentKey: Bool = false) throws(CeremonyError) {
        guard let key = securityKey else { return }
        guard key.isUserConsenting else {
            let millis = Int(saturating: timeout ?? 300_000)
            throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: nobody touched the security key; the request settled at its \(millis) ms timeout."),
                                reason: .userNotPresent, settlesAfterMillis: millis)
        }
        guard requirement == .required else { return }
        guard key.supportsUserVerification else {
            let why = key.isU2F ? "a U2F-only key cannot verify the user" : "the security key has no PIN set"
            let asker = forResidentKey ? "Chrome makes a discoverable credential on a security key only with user verification"
                : "the RP requires user verification"
            throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: \(asker) and \(why)."),
                                reason: .userVerificationUnavailable)
        }
        guard key.isUserVerified else {
            throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the security key's user verification failed (the wrong PIN)."),
                                reason: .userVerificationFailed)
        }
    }

    /// A create's refusals by the key's storage: a discoverable credential it cannot make (§6.3.2 step 4), or no slot
    /// left for one (CTAP2_ERR_KEY_STORE_FULL, which Chrome shows as "this security key is full").
    func checkKeyCanStore(_ options: CreationOptions) throws(CeremonyError) {
        guard let key = securityKey else { return }
        let required = options.residentKey == "required" || (options.residentKey == nil && options.requireResidentKey)
        if required && !key.supportsResidentKeys {
            let why = key.isU2F ? "a U2F-only key cannot store passkeys" : "the security key cannot store discoverable credentials"
            throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the RP requires a discoverable credential and \(why)."),
                                reason: .residentKeyUnsupported)
        }
        guard required else { return }
        let used = try keySlotsUsed(key)
        guard used >= key.residentKeyCapacity else { return }
        throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the security key is full (\(used) of \(key.residentKeyCapacity) discoverable credentials)."),
                            reason: .keyStoreFull)
    }

    /// The settings a new credential gets: the pack's, with a key's backup flags from its options (§11.1) and a
    /// U2F-only key's zero AAGUID.
    func newCredentialSettings(_ options: CreationOptions) throws(CeremonyError) -> PasskeySettings {
        guard let key = securityKey else {
            var settings = knobs.newPasskeySettings
            settings.discoverable = try makesDiscoverable(options)
            return settings
        }
        return keyCredentialSettings(discoverable: try makesDiscoverable(options), backupEligible: key.defaultBackupEligibility,
                                     backupState: key.defaultBackupEligibility && key.defaultBackupState)
    }

    /// The settings of a credential the key holds: the pack's (AAGUID, counter, attestation), these flags, and a
    /// U2F-only key's zero AAGUID; also what WebDriver's Add Credential injects (WebAuthn L3 §11.5).
    public func keyCredentialSettings(discoverable: Bool, backupEligible: Bool, backupState: Bool) -> PasskeySettings {
        var settings = knobs.newPasskeySettings
        settings.discoverable = discoverable
        settings.backupEligible = backupEligible
        settings.backupState = backupState
        if securityKey?.isU2F == true { settings.aaguid = [UInt8](repeating: 0, count: 16) }
        return settings
    }

    /// The transports a registration reports: the pack's, or, for a key reached over one it does not list, that one.
    var reportedTransports: [String] {
        guard let key = securityKey, !knobs.transports.contains(key.transport) else { return knobs.transports }
        return [key.transport]
    }
}
