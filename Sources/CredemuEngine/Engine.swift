import Foundation
import Signing
import Vault
import WebAuthn

/// The credential provider for one profile: answers ceremonies, autofill and signals from the profile's vault
/// as the profile's policy says the real provider would, and logs what it did.
///
/// Every failure is one `CeremonyError` (web name, message, reason); a failed ceremony leaves the vault's
/// credentials as they were.
public final class Engine: @unchecked Sendable {
    /// The vault handle, scoped to the profile.
    public let vault: Vault
    public let clock: any Clock
    public let profile: Profile
    public let policy: any ProviderPolicy
    /// The policy's knobs on the profile's platform.
    public let knobs: PolicyKnobs
    /// The user-verification knob as every create's event cites it.
    let userVerificationCitation: JSONValue
    /// Whether Chrome's renderer checks this provider's requests before it is asked (`Engine+BlinkChecks`): a platform
    /// whose browser is Chromium, and a provider the browser asks itself (not an extension, whose page script replaced
    /// `navigator.credentials` before Blink's code runs: `device.integration`).
    public let makesBlinkChecks: Bool

    private let keyCache = SigningKeyCache(limit: Engine.keyCacheLimit)
    /// Guards `rpIDHashes`.
    private let cacheLock = NSLock()
    private var rpIDHashes: [String: [UInt8]] = [:]
    private static let keyCacheLimit = 4096

    public init(vault: Vault, profile: Profile? = nil, policy: any ProviderPolicy = SpecPolicy(), clock: any Clock = SystemClock()) {
        let profile = profile ?? Profile(name: vault.profile, pack: policy.id)
        self.vault = vault.profile == profile.name ? vault : vault.scoped(to: profile.name)
        self.clock = clock
        self.profile = profile
        self.policy = policy
        var knobs = policy.knobs(for: profile.platform)
        if profile.overHybrid {
            // A phone's provider answering a desktop (WebAuthn L3 §5.8.4 `hybrid`): what the phone's own provider
            // reports, with the hybrid transport, as a cross-platform authenticator.
            knobs.attachment = "cross-platform"
            knobs.transports = Array(Set(knobs.transports + ["hybrid"])).sorted()
        }
        if knobs.model == .securityKey, profile.authenticator?.transport == "internal" {
            // WebAuthn L3 §11.1: a virtual authenticator on the internal transport is a platform authenticator.
            knobs.attachment = "platform"
        }
        // A key answers the extensions its hardware has (§11.1 `extensions`, its protocol).
        if knobs.model == .securityKey { knobs = (profile.authenticator ?? AuthenticatorOptions()).narrowing(knobs) }
        // A provider that attaches chrome.webAuthenticationProxy (Chrome 146+): Chrome proxies no conditional
        // request to it and reports conditional mediation unavailable (authenticator_common_impl.cc).
        if knobs.webAuthenticationProxy, Engine.atLeast(profile.browserVersion, knobs.webAuthenticationProxySince) {
            knobs.conditionalGet = .passedToBrowser
            knobs.conditionalMediation = false
        }
        // Chromium evaluates PRF at a creation from the version the pack names (Windows Hello: kWebAuthnWinPrfOnCreate,
        // M147); before it, the results come at assertion only.
        if knobs.prf == .evaluatedOnCreateAndGet, !Engine.atLeast(profile.browserVersion, knobs.prfAtCreationSince) {
            knobs.prf = .evaluatedOnGet
        }
        // A third-party provider behind an OS API with no conditional-create or signal entry point (Windows 11's plugin
        // authenticators) gets neither, whatever its pack says of itself.
        if knobs.integration == .osProvider {
            let api = profile.platform.osProviderEntryPoints
            let cited = "Platform.osProviderEntryPoints: \(profile.platform.rawValue)'s API for third-party providers has no such entry point (microsoft/webauthn webauthnplugin.h, pluginauthenticator.h)"
            if !api.conditionalCreate {
                knobs.conditionalMode = .unsupported
                knobs.provenance["conditionalCreate.mode"] = (cited, nil)
            }
            if !api.signals {
                knobs.signalsForwarded = false
                knobs.provenance["signals.forwarded"] = (cited, nil)
            }
        }
        self.knobs = knobs
        self.makesBlinkChecks = profile.platform.rendererIsBlink && knobs.integration != .extension
        self.userVerificationCitation = .string(knobs.cite("authenticator.userVerification", knobs.userVerification.rawValue))
    }

    /// Whether a browser version is at least `since` (an unknown version is taken as current; no `since`: every one).
    static func atLeast(_ version: String?, _ since: String?) -> Bool {
        guard let since = since.flatMap(Version.init), let version = version.flatMap(Version.init) else { return true }
        return version >= since
    }

    /// The signing key of a stored passkey, parsed once and kept in memory.
    func signingKey(for record: PasskeyRecord) throws(CeremonyError) -> any SigningKey {
        if let cached = keyCache.key(for: record.credentialID) { return cached }
        let key: any SigningKey
        do {
            key = try SigningKeys.importPKCS8(try vault.privateKey(for: record.credentialID), expecting: record.algorithm)
        } catch let error as VaultError {
            throw Engine.storageFailure(error)
        } catch {
            throw CeremonyError(WebAuthnError(.unknownError, "The private key of credential \(record.id) is unusable: \(error)."), reason: .storage)
        }
        remember(key, for: record.credentialID)
        return key
    }

    /// SHA-256 of an RP ID, computed once per RP.
    func rpIDHash(_ rpID: String) -> [UInt8] {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let hash = rpIDHashes[rpID] { return hash }
        let hash = Digest.sha256(rpID.utf8)
        if rpIDHashes.count >= Engine.keyCacheLimit { rpIDHashes.removeAll(keepingCapacity: true) }
        rpIDHashes[rpID] = hash
        return hash
    }

    func remember(_ key: any SigningKey, for credentialID: [UInt8]) { keyCache.remember(key, for: credentialID) }

    func forget(_ credentialID: [UInt8]) { keyCache.forget(credentialID) }

    /// A vault failure during a ceremony, as the caller sees it: input the vault refuses is the caller's
    /// mistake (a TypeError), anything else the store's.
    static func storageFailure(_ error: VaultError) -> CeremonyError {
        if error.code == .invalidInput { return CeremonyError(.typeError(error.message), reason: .malformedRequest) }
        return CeremonyError(WebAuthnError(.unknownError, "The credential store failed: \(error.message)"), reason: .storage)
    }

    /// Runs a vault operation, turning its failure into a ceremony failure.
    func store<T>(_ body: () throws(VaultError) -> T) throws(CeremonyError) -> T {
        do {
            return try body()
        } catch {
            throw Engine.storageFailure(error)
        }
    }

    /// The RP ID a ceremony runs under: the one given, checked against the caller, or the default.
    func relyingPartyID(_ requested: String?, caller: Caller) throws(CeremonyError) -> String {
        do {
            guard let requested else { return try RelyingPartyID.defaultID(for: caller.origin) }
            do {
                try RelyingPartyID.validate(requested, for: caller.origin)
            } catch where error.name == .securityError {
                try relatedOrigin(requested, caller: caller, refused: error)
            }
            return requested
        } catch {
            throw CeremonyError(error)
        }
    }

    func clientData(_ type: ClientData.CeremonyType, challenge: [UInt8], caller: Caller) -> ClientData {
        ClientData(type: type, challenge: challenge, origin: caller.serializedOrigin, crossOrigin: caller.isCrossOrigin,
                   topOrigin: caller.isCrossOrigin ? caller.topOrigin?.description : nil, androidPackageName: caller.androidPackageName)
    }

    /// The user-verification bit this provider reports when the RP asks for `requirement`.
    func reportsUserVerification(_ requirement: UserVerification) -> Bool {
        // A key verifies only with a PIN set and entered (`checkKeyCanAnswer` refused a required one it cannot).
        if let key = securityKey, !(key.supportsUserVerification && key.isUserVerified) { return false }
        switch knobs.userVerification {
        case .performed: return requirement != .discouraged
        case .alwaysClaimed: return true
        }
    }

    /// Appends an event for the profile; the log never makes a ceremony fail.
    public func log(_ kind: String, _ outcome: String, _ reason: Reason, _ detail: [(String, JSONValue)]) {
        var fields: [(String, JSONValue)] = []
        fields.reserveCapacity(3 + detail.count)
        fields.append(("pack", .string(policy.id)))
        fields.append(("platform", .string(profile.platform.rawValue)))
        if let device = profile.device { fields.append(("device", .string(device))) }
        fields.append(contentsOf: detail)
        _ = try? vault.appendEvent(kind: kind, outcome: outcome, reason: reason.rawValue, detail: .object(fields), at: clock.now())
    }

    /// Logs a failure and returns it for throwing.
    func failed(_ kind: String, _ failure: CeremonyError, _ detail: [(String, JSONValue)]) -> CeremonyError {
        log(kind, failure.silent ? "noop" : "error", failure.reason,
            detail + [("error", .string(failure.error.name.rawValue)), ("message", .string(failure.error.message))])
        return failure
    }
}
