import Vault
import WebAuthn

/// Every behaviour that differs between providers, resolved for one platform. A `ProviderPolicy` answers
/// with one of these; the engine reads nothing else about the provider.
public struct PolicyKnobs: Sendable {
    public enum UserVerificationHonesty: String, Sendable { case performed, alwaysClaimed }
    /// What a provider does with a create that asks for the other authenticator attachment.
    public enum OtherAttachment: String, Sendable {
        /// The browser does not offer the provider (it shows security keys and phones): NotAllowedError once the
        /// user dismisses that.
        case notOffered
        /// The provider answers anyway (an extension that takes over `navigator.credentials`).
        case answered
    }
    public enum ExclusionOutcome: String, Sendable { case invalidStateError = "InvalidStateError", notAllowedError = "NotAllowedError", noAnswer }
    public enum ExclusionScope: String, Sendable { case relyingParty, sameUser }
    /// Whether the provider reads the RP's `excludeCredentials` at all (`exclusion.excludeCredentials`).
    public enum ExclusionList: String, Sendable, CaseIterable {
        /// §6.3.2 step 3: a listed credential it holds stops the create (`exclusion.outcome`, `.scope`).
        case checked
        /// The list is never matched against the provider's store, so a create for an account that already has a
        /// passkey makes a second one (Proton Pass: its core runs passkey-rs over an empty store).
        case ignored
    }
    public enum ConditionalMode: String, Sendable { case silent, modal, unsupported }
    public enum ConditionalExclusion: String, Sendable { case noop, error }
    public enum AndroidIneligible: String, Sendable {
        case noCreateOption = "CreateCredentialNoCreateOptionException"
        case domNotAllowed = "CreatePublicKeyCredentialDomException"
    }
    public enum UnknownCredentialAction: String, Sendable { case hide, delete, ignore }
    public enum AllAcceptedAction: String, Sendable { case hideAndRestore, deleteMissing, ignore }
    public enum AllAcceptedScope: String, Sendable { case firstPasskey, allPasskeys }
    public enum UserDetailsAction: String, Sendable { case nameAndDisplayName, nameOnly, ignore }
    public enum SignalErrorSurface: String, Sendable { case resolve, unknownError = "UnknownError" }
    /// Which of `signalAllAcceptedCredentials`' members is decoded first: Chrome checks the accepted list before
    /// the user ID (providers.md §1.3), WebKit and the spec the user ID first.
    public enum SignalDecodeOrder: String, Sendable { case acceptedListFirst, userIdFirst }
    /// What `getPublicKey()` gives: the key's SubjectPublicKeyInfo, null (keepassxc-browser's own member), or
    /// `absent`: the response has no member of its own, so the page reaches the prototype's native method on a
    /// plain object, which Chromium refuses ("Illegal invocation"; keepassxc-browser before #2323, October 2024).
    public enum PublicKeyExposure: String, Sendable { case subjectPublicKeyInfo, null, absent }
    /// Who answers a conditional get (`conditionalGet.mode`).
    public enum ConditionalGetMode: String, Sendable {
        /// The provider lists its passkeys in the autofill dropdown and answers the pick.
        case answered
        /// The provider hands the request to the browser's own `get` (keepassxc-browser; an attached
        /// webAuthenticationProxy): its passkeys are never offered, and the request waits for the browser's own
        /// providers as it would without it.
        case passedToBrowser
    }
    /// Immediate mediation's rate limit (`immediateGet.rateLimit`): Chrome's sliding windows per top-frame
    /// registrable domain, each request counted in every window it passes, in order.
    public struct ImmediateRateLimit: Equatable, Sendable, CustomStringConvertible {
        public var windows: [(max: Int, seconds: Int)]
        public var exemptLocalhost: Bool
        public init(windows: [(max: Int, seconds: Int)], exemptLocalhost: Bool) {
            self.windows = windows
            self.exemptLocalhost = exemptLocalhost
        }
        public static let none = ImmediateRateLimit(windows: [], exemptLocalhost: false)
        public static func == (a: Self, b: Self) -> Bool {
            a.exemptLocalhost == b.exemptLocalhost && a.windows.map(\.max) == b.windows.map(\.max) && a.windows.map(\.seconds) == b.windows.map(\.seconds)
        }
        public var description: String {
            windows.isEmpty ? "none" : windows.map { "\($0.max) per \($0.seconds) s" }.joined(separator: " and ") + " per top-frame registrable domain"
                + (exemptLocalhost ? ", localhost exempt" : "")
        }
    }
    /// The PRF extension (WebAuthn L3 §10.1.4) as the provider's responses carry it.
    public enum PRFSupport: String, Sendable {
        /// The response has no `prf` output at all (an extension manager that ignores the input).
        case notProcessed
        /// `prf: {enabled: false}` at creation; `prf: {}` at assertion.
        case unsupported
        /// `prf: {enabled: true}` at creation, no results then; results at assertion.
        case evaluatedOnGet
        /// Also results at creation when the RP gives `eval` (GPM's enclave, passkey-rs).
        case evaluatedOnCreateAndGet
    }
    /// The largeBlob extension (WebAuthn L3 §10.1.5).
    public enum LargeBlobSupport: String, Sendable {
        /// No `largeBlob` output at all.
        case notProcessed
        /// `largeBlob: {supported: false}`; a read finds nothing, a write is not written.
        case unsupported
        /// Blobs are stored per credential: `{supported: true}`, read gives the blob, write `{written: true}`.
        case supported
    }
    /// A CTAP authenticator extension (`extensions.appid`, `.hmacSecret`, `.credProtect`, `.credBlob`,
    /// `.minPinLength`) as the browser and the authenticator behind it process it.
    public enum ExtensionSupport: String, Sendable, CaseIterable {
        /// The client ignores the input: no output, no check (an extension manager's script, Safari for CTAP's).
        case notProcessed
        /// The browser processes the input and the authenticator has no support: Chromium's false outputs
        /// (`{appid: false}`, `{hmacCreateSecret: false}`, `{credBlob: false}`), and an enforced credProtect fails.
        case unsupported
        /// The authenticator answers it (a security key, CTAP 2.1 §12).
        case supported
    }
    /// Which saved passwords can make an automatic upgrade eligible.
    public enum CountedPasswords: String, Sendable {
        /// Only those stored in this provider (GPM: "only consider passwords stored in GPM").
        case ownStore
        /// Any the device holds, whichever manager saved it.
        case anyStore
    }
    /// Which saved passwords' realms an automatic upgrade looks at.
    public enum PasswordMatch: String, Sendable {
        /// Only those saved at the caller's own signon realm.
        case exact
        /// Those and every public-suffix match (same scheme, registrable domain and port: `PasswordSite`), as a
        /// password store's `GetLogins` returns them.
        case exactOrPSL
    }
    public enum PrivateBrowsing: String, Sendable { case allowed, ineligible }
    /// How the provider reaches a device's ceremonies, which decides where a device routes them (`DeviceRouting`).
    public enum Integration: String, Sendable, CaseIterable {
        /// The browser's or the OS's own manager: GPM in Chrome and as Play services on Android, iCloud Keychain.
        case builtIn
        /// A third-party provider the OS lets the user enable (Android 14+ credential providers, iOS 17 / macOS 14
        /// credential provider extensions).
        case osProvider
        /// A browser extension whose page script replaces `navigator.credentials.create` and `get`.
        case `extension`
    }
    /// What the provider does with an unused-password report (Apple's `reportUnusedPasswordCredential(domain:userName:)`).
    public enum UnusedPasswordAction: String, Sendable {
        /// It stops offering the password and keeps it stored.
        case hide
        case delete
        /// The report reaches the provider, which does nothing with it.
        case ignore
        /// The platform has no such call (the web, Android).
        case unsupported
    }
    public enum OverQuota: String, Sendable {
        /// The signal is dropped and the call still resolves (Chrome).
        case drop
        /// The call fails with a retry delay (Android's `SignalCredentialRateLimitExceededException`).
        case reject
    }
    public enum RateLimit: Equatable, Sendable, CustomStringConvertible {
        case none
        /// Chrome's tracker: a bucket of `capacity` tokens per registrable domain, one back every
        /// `refillSeconds`, a token spent only when a signal changes something.
        case tokenBucket(capacity: Int, refillSeconds: Int, exemptLocalhost: Bool, overQuota: OverQuota)
        /// At most `max` calls per profile in any `windowSeconds`.
        case window(max: Int, windowSeconds: Int, overQuota: OverQuota)

        public var description: String {
            switch self {
            case .none: return "none"
            case let .tokenBucket(capacity, refill, exempt, overQuota):
                return "token bucket of \(capacity) per registrable domain, +1 every \(refill) s\(exempt ? ", localhost exempt" : ""), over quota: \(overQuota.rawValue)"
            case let .window(max, window, overQuota):
                return "\(max) calls in any \(window) s, over quota: \(overQuota.rawValue)"
            }
        }
    }

    /// What the pack describes (`authenticator.model`).
    public enum Model: String, Sendable, CaseIterable {
        /// A passkey provider a device enables: a password manager, the platform's own.
        case passkeyProvider
        /// A roaming authenticator, its hardware set by the profile's `authenticator` options (`AuthenticatorOptions`).
        case securityKey
    }

    // Authenticator
    public var model: Model = .passkeyProvider
    public var aaguid: [UInt8]
    public var algorithms: [COSEAlgorithm]
    public var backupEligible: Bool
    public var backupState: Bool
    public var counter: CounterMode
    public var transports: [String]
    public var attestation: AttestationCapability
    public var userVerification: UserVerificationHonesty
    /// The attachment the provider's credentials report ("platform" or "cross-platform").
    public var attachment: String
    public var otherAttachment: OtherAttachment
    // Exclusion in a modal create
    public var exclusionOutcome: ExclusionOutcome
    public var exclusionScope: ExclusionScope
    public var exclusionList: ExclusionList = .checked
    // Conditional create
    public var conditionalMode: ConditionalMode
    public var minimumPlayServices: String?
    public var minimumOSVersion: String?
    public var windowSeconds: Int
    public var matchUsername: Bool
    public var countedTimes: [String]
    public var rejectIfPasskeyExists: Bool
    public var requirePasscode: Bool
    public var conditionalUserPresent: Bool
    public var conditionalUserVerified: Bool
    public var conditionalExclusion: ConditionalExclusion
    public var androidIneligible: AndroidIneligible
    public var appleIneligibleCode: Int
    public var notification: String
    // Signals
    public var unknownCredential: UnknownCredentialAction
    public var allAcceptedCredentials: AllAcceptedAction
    public var allAcceptedScope: AllAcceptedScope
    public var currentUserDetails: UserDetailsAction
    public var signalErrorSurface: SignalErrorSurface
    public var signalDecodeOrder: SignalDecodeOrder = .acceptedListFirst
    /// Whether the page has the three signal methods at all (Firefox has none).
    public var signalMethods: Bool = true
    /// Whether the browser hands a signal to the provider at all (`signals.forwarded`): when not, every signal resolves
    /// and the provider never hears of it, whatever `signals.unknownCredential` and the others say it would do.
    public var signalsForwarded: Bool = true
    /// Each signal's rate limit, by `SignalRequest.kind`; a limit of one kind keeps one state for every signal
    /// that has it (Chrome's quota tracker is shared by the three).
    public var rateLimits: [String: RateLimit]
    // Responses and extensions
    public var publicKeyExposure: PublicKeyExposure = .subjectPublicKeyInfo
    public var prf: PRFSupport = .notProcessed
    /// The browser version from which `evaluatedOnCreateAndGet` holds (`extensions.prfAtCreationSince`); below it the
    /// results come at assertion only (nil: every version).
    public var prfAtCreationSince: String?
    public var largeBlob: LargeBlobSupport = .notProcessed
    /// FIDO AppID (`appid`, `appidExclude`): supported, credentials registered under the AppID are found.
    public var appid: ExtensionSupport = .notProcessed
    /// hmac-secret at creation (`hmacCreateSecret`).
    public var hmacSecret: ExtensionSupport = .notProcessed
    /// credProtect levels stored and enforced (`credentialProtectionPolicy`).
    public var credProtect: ExtensionSupport = .notProcessed
    /// credBlob stored at creation, read by `getCredBlob`.
    public var credBlob: ExtensionSupport = .notProcessed
    /// The minimum PIN length in the authenticator data (`minPinLength`); never unsupported.
    public var minPinLength: ExtensionSupport = .notProcessed
    // Automatic-upgrade gates beyond the password
    /// The browser profile must be signed in and syncing passwords (GPM desktop: `kPasswordStoreError` otherwise).
    public var requireSyncedProfile: Bool = false
    public var countedPasswords: CountedPasswords = .anyStore
    public var passwordMatch: PasswordMatch = .exact
    // The account's passkeys
    /// What a new passkey does to the older ones of its account (same RP ID and user handle): `passkeys.priorOfSameUser`.
    public var priorOfSameUser: PriorOfSameUser = .kept
    /// The backup flags a passkey imported from another manager (a CXF document, a move) gets: `import.backupFlags`.
    public var importedBackupFlags: ImportedBackupFlags = .asCreated
    /// A current-user-details signal leaves a passkey the user edited alone (and, changing nothing, spends no token).
    public var detailsRespectUserEdit: Bool = false
    public var privateBrowsing: PrivateBrowsing = .allowed
    /// WebAuthn L3 §5.11.1's maxLabels for related origins; 0: the browser has no related-origin requests (an RP ID
    /// outside the caller's site is a SecurityError).
    public var relatedOriginsMaxLabels: Int = 0
    /// The browser version from which related origin requests exist (nil: every version the pack models).
    public var relatedOriginsSince: String?
    /// How the provider plugs into a device (`device.integration`).
    public var integration: Integration = .builtIn
    // Conditional and immediate gets
    /// Who answers a conditional get (`conditionalGet.mode`).
    public var conditionalGet: ConditionalGetMode = .answered
    /// A modal get that finds no credential anywhere (`modalGet.noCredential`): false, it fails at once; true, the
    /// browser's sheet (a phone, a security key) stays until the user dismisses it or the timeout (Chrome).
    public var noCredentialSheet = false
    /// Whether the provider attaches `chrome.webAuthenticationProxy` (`conditionalGet.webAuthenticationProxy`, from
    /// `conditionalGet.webAuthenticationProxySince`): then Chrome proxies no conditional request and reports
    /// conditional mediation unavailable.
    public var webAuthenticationProxy: Bool = false
    public var webAuthenticationProxySince: String?
    /// The browser version from which `mediation: "immediate"` exists (nil: never; the value is a TypeError).
    public var immediateGetSince: String?
    public var immediateGetTimeoutMillis: Int = 500
    public var immediateGetRateLimit: ImmediateRateLimit = .none
    /// An immediate get in a private-browsing tab is NotAllowedError at once.
    public var immediateGetRefusedInPrivate: Bool = true
    /// The transports an immediate get reaches (Chrome: internal only, no security key, no phone).
    public var immediateGetTransports: [String] = ["internal"]
    // Passwords
    public var unusedPassword: UnusedPasswordAction = .unsupported
    // Apple error codes that depend on the OS version (ASAuthorizationError.h availability)
    public var appleMatchedExcludedSince: String?
    public var appleDeviceNotConfiguredSince: String?
    // Capabilities
    public var clientCapabilities: [(String, Bool)]
    public var conditionalMediation: Bool
    public var userVerifyingPlatformAuthenticator: Bool

    /// Where each knob's value comes from: knob name to (source text, unconfirmed note).
    public var provenance: [String: (source: String, unconfirmed: String?)]

    public init(aaguid: [UInt8], algorithms: [COSEAlgorithm], backupEligible: Bool, backupState: Bool, counter: CounterMode,
                transports: [String], attestation: AttestationCapability, userVerification: UserVerificationHonesty,
                exclusionOutcome: ExclusionOutcome, exclusionScope: ExclusionScope, conditionalMode: ConditionalMode,
                minimumPlayServices: String?, minimumOSVersion: String?, windowSeconds: Int, matchUsername: Bool,
                countedTimes: [String], rejectIfPasskeyExists: Bool, requirePasscode: Bool, conditionalUserPresent: Bool,
                conditionalUserVerified: Bool, conditionalExclusion: ConditionalExclusion, androidIneligible: AndroidIneligible,
                appleIneligibleCode: Int, notification: String, unknownCredential: UnknownCredentialAction,
                allAcceptedCredentials: AllAcceptedAction, allAcceptedScope: AllAcceptedScope, currentUserDetails: UserDetailsAction,
                signalErrorSurface: SignalErrorSurface, rateLimit: RateLimit, clientCapabilities: [(String, Bool)],
                conditionalMediation: Bool, userVerifyingPlatformAuthenticator: Bool,
                attachment: String = "platform", otherAttachment: OtherAttachment = .notOffered,
                provenance: [String: (source: String, unconfirmed: String?)] = [:]) {
        self.attachment = attachment
        self.otherAttachment = otherAttachment
        self.aaguid = aaguid
        self.algorithms = algorithms
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.counter = counter
        self.transports = transports
        self.attestation = attestation
        self.userVerification = userVerification
        self.exclusionOutcome = exclusionOutcome
        self.exclusionScope = exclusionScope
        self.conditionalMode = conditionalMode
        self.minimumPlayServices = minimumPlayServices
        self.minimumOSVersion = minimumOSVersion
        self.windowSeconds = windowSeconds
        self.matchUsername = matchUsername
        self.countedTimes = countedTimes
        self.rejectIfPasskeyExists = rejectIfPasskeyExists
        self.requirePasscode = requirePasscode
        self.conditionalUserPresent = conditionalUserPresent
        self.conditionalUserVerified = conditionalUserVerified
        self.conditionalExclusion = conditionalExclusion
        self.androidIneligible = androidIneligible
        self.appleIneligibleCode = appleIneligibleCode
        self.notification = notification
        self.unknownCredential = unknownCredential
        self.allAcceptedCredentials = allAcceptedCredentials
        self.allAcceptedScope = allAcceptedScope
        self.currentUserDetails = currentUserDetails
        self.signalErrorSurface = signalErrorSurface
        self.rateLimits = ["unknown": rateLimit, "accepted": rateLimit, "details": rateLimit]
        self.clientCapabilities = clientCapabilities
        self.conditionalMediation = conditionalMediation
        self.userVerifyingPlatformAuthenticator = userVerifyingPlatformAuthenticator
        self.provenance = provenance
    }

    /// The rate limit of a signal kind ("unknown", "accepted", "details").
    public func rateLimit(for kind: String) -> RateLimit { rateLimits[kind] ?? .none }

    /// The knob that sets a signal kind's rate limit.
    public static func rateLimitKnob(_ kind: String) -> String {
        "signals.rateLimit." + (["unknown": "unknownCredential", "accepted": "allAcceptedCredentials", "details": "currentUserDetails"][kind] ?? kind)
    }

    /// What BE/BS a passkey the provider imported (CXF, `vault move`) carries from then on. CXF's passkey has no
    /// backup flags (§Passkey), so the importer decides; no provider documents what it decides.
    public enum ImportedBackupFlags: String, Sendable, CaseIterable {
        /// The pack's `authenticator.backupEligible` and `backupState`, as a passkey it made.
        case asCreated
        /// BE as the pack's own, BS 0: not backed up until the provider syncs it.
        case notBackedUp
    }

    /// The backup state an imported passkey starts with: nil keeps the pack's new-passkey state.
    public var importedBackupState: Bool? { importedBackupFlags == .notBackedUp ? false : nil }

    /// The settings a new passkey gets from this provider.
    public var newPasskeySettings: PasskeySettings {
        PasskeySettings(backupEligible: backupEligible, backupState: backupEligible && backupState, counter: counter,
                        aaguid: aaguid, attestation: attestation, discoverable: true)
    }

    /// "knob = value (source; unconfirmed: why)" for the event log.
    public func cite(_ knob: String, _ value: String) -> String {
        guard let p = provenance[knob] else { return "\(knob) = \(value)" }
        return "\(knob) = \(value) (\(p.source)" + (p.unconfirmed.map { "; unconfirmed: \($0)" } ?? "") + ")"
    }
}
