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
            clientCapabilities: [("conditionalCreate", true), ("conditionalGet", true), ("extension:credProps", true),
                                 ("signalAllAcceptedCredentials", true), ("signalCurrentUserDetails", true),
                                 ("signalUnknownCredential", true), ("userVerifyingPlatformAuthenticator", true)],
            conditionalMediation: true, userVerifyingPlatformAuthenticator: true)
        var cited = knobs
        for name in KnobSpec.all.keys {
            cited.provenance[name] = (source, name.hasPrefix("conditionalCreate.window") ? "the spec gives no time window; 5 minutes as GPM" : nil)
        }
        return cited
    }
}
