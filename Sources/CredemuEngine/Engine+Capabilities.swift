import WebAuthn

extension Engine {
    /// `PublicKeyCredential.getClientCapabilities()`: the pack's keys, sorted (WebAuthn L3 §5.1.7); keys the
    /// platform omits are absent, not false.
    public func clientCapabilities() -> JSONValue {
        // A browser older than immediate mediation has no immediateGet key (Blink drops it with the feature off).
        .object(knobs.clientCapabilities.filter { $0.0 != "immediateGet" || hasImmediateMediation || knobs.immediateGetSince == nil }
            .sorted { $0.0 < $1.0 }.map { ($0.0, .bool($0.1)) })
    }

    /// `PublicKeyCredential.isConditionalMediationAvailable()`.
    public var isConditionalMediationAvailable: Bool { knobs.conditionalMediation }

    /// `PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable()`.
    public var isUserVerifyingPlatformAuthenticatorAvailable: Bool { knobs.userVerifyingPlatformAuthenticator }

    /// All three, as the CLI and API report them.
    public func capabilities() -> JSONValue {
        .object([
            ("profile", .string(profile.name)),
            ("pack", .string(policy.id)),
            ("platform", .string(profile.platform.rawValue)),
            ("getClientCapabilities", clientCapabilities()),
            ("isConditionalMediationAvailable", .bool(isConditionalMediationAvailable)),
            ("isUserVerifyingPlatformAuthenticatorAvailable", .bool(isUserVerifyingPlatformAuthenticatorAvailable)),
        ])
    }
}
