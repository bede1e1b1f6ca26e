import Vault
import WebAuthn

/// The WebAuthn Level 3 reference behaviour, written in Swift through the same protocol packs implement: all
/// three algorithms, a synced passkey, the spec's errors, hiding signals, no rate limit. It is what
/// `credemu` uses for the built-in profile pack `webauthn-spec`, and an example for users who write a policy
/// in code.
public struct SpecPolicy: ProviderPolicy {
    public init() {}
    public var id: String { "webauthn-spec" }
    public var name: String { "WebAuthn Level 3 reference authenticator" }
    public var version: String { "L3-2026.07" }
    public var platforms: [Platform] { Platform.allCases }

    public func knobs(for platform: Platform) -> PolicyKnobs {
        let source = "W3C WebAuthn Level 3 editor's draft (providers.md §1)"
        let knobs = PolicyKnobs(
            aaguid: [UInt8](repeating: 0, count: 16), algorithms: COSEAlgorithm.allCases, backupEligible: true, backupState: true,
            counter: .zero, transports: ["internal", "hybrid"], attestation: .none, userVerification: .performed,
            exclusionOutcome: .invalidStateError, exclusionScope: .relyingParty, conditionalMode: .silent,
            minimumPlayServices: nil, minimumOSVersion: nil, windowSeconds: 300, matchUsername: true,
            countedTimes: ["created", "lastFilled", "lastUsed"], rejectIfPasskeyExists: false, requirePasscode: false,
            conditionalUserPresent: false, conditionalUserVerified: false, conditionalExclusion: .noop,
            androidIneligible: .noCreateOption, appleIneligibleCode: 1001, notification: "Passkey created",
            unknownCredential: .hide, allAcceptedCredentials: .hideAndRestore, allAcceptedScope: .allPasskeys,
            currentUserDetails: .nameAndDisplayName, signalErrorSurface: .resolve, rateLimit: .none,
            clientCapabilities: [("conditionalCreate", true), ("conditionalGet", true), ("extension:appid", true),
                                 ("extension:appidExclude", true), ("extension:credBlob", true), ("extension:credProps", true),
                                 ("extension:credentialProtectionPolicy", true), ("extension:enforceCredentialProtectionPolicy", true),
                                 ("extension:getCredBlob", true), ("extension:hmacCreateSecret", true),
                                 ("extension:largeBlob", true), ("extension:minPinLength", true), ("extension:prf", true),
                                 ("signalAllAcceptedCredentials", true), ("signalCurrentUserDetails", true),
                                 ("signalUnknownCredential", true), ("userVerifyingPlatformAuthenticator", true)],
            conditionalMediation: true, userVerifyingPlatformAuthenticator: true)
        var cited = knobs
        // §10.1.4 and §10.1.5 define outputs at creation and assertion; §6.3.2 decodes the user ID first.
        cited.prf = .evaluatedOnCreateAndGet
        cited.largeBlob = .supported
        // §10.1.1: a passkey is never registered under an AppID, so `appid` is false. A synced passkey has a PRF
        // (hmac-secret), and none of a roaming key's credProtect, credBlob or PIN: the browser echoes false for those.
        cited.appid = .unsupported
        cited.hmacSecret = .supported
        cited.credProtect = .unsupported
        cited.credBlob = .unsupported
        cited.minPinLength = .notProcessed
        cited.signalDecodeOrder = .userIdFirst
        // "the user agent has recently mediated an authentication": any password the browser filled counts.
        cited.countedPasswords = .anyStore
        for name in KnobSpec.all.keys {
            cited.provenance[name] = (source, name.hasPrefix("conditionalCreate.window") ? "the spec gives no time window; 5 minutes as GPM" : nil)
        }
        // §6.3.2 step 7: a discoverable credential source for the same RP ID and user handle is removed (the
        // authenticator's credentials map is keyed by them).
        cited.priorOfSameUser = .replaced
        cited.provenance["passkeys.priorOfSameUser"] = (source + " §6.3.2 authenticatorMakeCredential step 7 (a discoverable credential source with the same rpId and userHandle is replaced)", "the step's wording was not re-read for this knob")
        cited.provenance["signals.currentUserDetailsRespectsUserEdit"] = (source, "§5.1.10 leaves to the authenticator whether a name the user edited is updated; false: the signal's names win")
        // WebAuthn has no password calls: an unused-password report is an Apple platform API.
        cited.unusedPassword = [.ios, .macos].contains(platform) ? .hide : .unsupported
        // §5.11.1: "maxLabels ... at least 5".
        cited.relatedOriginsMaxLabels = platform == .firefox ? 0 : 5
        if platform == .firefox { SpecPolicy.inFirefox(&cited) }
        return cited
    }

    /// What Firefox itself decides, whatever the authenticator (Gecko `dom/webauthn/PublicKeyCredential.cpp` and
    /// `dom/credentialmanagement/CredentialsContainer.cpp`): no signal methods, `create()` never reads `mediation`,
    /// and its own `getClientCapabilities()` (Windows build values).
    static func inFirefox(_ knobs: inout PolicyKnobs) {
        let gecko = "Gecko dom/webauthn/PublicKeyCredential.cpp (GetClientCapabilities, Firefox 135+) and dom/credentialmanagement/CredentialsContainer.cpp (Create ignores mediation)"
        knobs.signalMethods = false
        knobs.conditionalMode = .modal
        knobs.clientCapabilities = SpecPolicy.firefoxCapabilities
        for name in ["signals.methodsExposed", "conditionalCreate.mode"] { knobs.provenance[name] = (gecko, nil) }
        knobs.provenance["capabilities.client"] = (gecko, "the Windows build's values (largeBlob, hybridTransport, passkeyPlatformAuthenticator and userVerifyingPlatformAuthenticator are false on Linux)")
    }

    /// Firefox 135+'s `getClientCapabilities()` on Windows.
    public static let firefoxCapabilities: [(String, Bool)] = [
        ("conditionalCreate", false), ("conditionalGet", true), ("extension:appid", true), ("extension:credProps", true),
        ("extension:credentialProtectionPolicy", true), ("extension:enforceCredentialProtectionPolicy", true),
        ("extension:hmacCreateSecret", true), ("extension:largeBlob", true), ("extension:minPinLength", true),
        ("extension:prf", true), ("hybridTransport", true), ("passkeyPlatformAuthenticator", true), ("relatedOrigins", false),
        ("signalAllAcceptedCredentials", false), ("signalCurrentUserDetails", false), ("signalUnknownCredential", false),
        ("userVerifyingPlatformAuthenticator", true),
    ]
}
