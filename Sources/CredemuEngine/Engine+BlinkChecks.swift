import WebAuthn

extension Reason {
    /// Blink refused the request before any provider was asked (a list or blob over its bound, an extension input
    /// that belongs to the other ceremony, immediate mediation's conditions).
    public static let refusedByBrowser = Reason(rawValue: "refusedByBrowser")
    /// An immediate get without transient user activation (Blink consumes the activation it checks).
    public static let userActivationRequired = Reason(rawValue: "userActivationRequired")
}

/// The checks Chrome's renderer makes before any provider is asked, with Blink's messages and in Blink's order
/// (`third_party/blink/renderer/modules/credentialmanagement/authentication_credentials_container.cc`, chromium/chromium
/// at 0399231b98c3: `create()` and `ForwardRequestToAuthenticator()`). Every engine whose `makesBlinkChecks` holds makes
/// them: GPM, a security key, iCloud Keychain or any other provider Chrome asks itself; an extension's page script
/// replaced `navigator.credentials` before this code runs, so its pack meets none of them.
///
/// Create: the `excludeCredentials` list's bound, then the extension refusals (`checkCreationExtensions`), then the user
/// handle's 64 bytes (after the options became mojo). Get: immediate mediation's allow list and user activation, then
/// the `allowCredentials` bound, then the extension refusals (`checkRequestExtensions`: `credProps`, `largeBlob.support`
/// and the blob's 2 KiB among them).
extension Engine {
    /// `mojom::blink::kPublicKeyCredentialDescriptorListMaxSize`: the most descriptors Blink passes on.
    static let blinkMaxDescriptors = 64
    /// `kMaxLargeBlobSize`: the largest `largeBlob.write` Blink passes on (the vault's own bound, `Vault.largeBlobLimit`,
    /// holds for every other path).
    static let blinkMaxLargeBlobBytes = 2048

    /// The client's checks of a create before anything of the provider is read, in Blink's order.
    func checkCreationRequest(_ options: CreationOptions) throws(CeremonyError) {
        try checkBlinkCreation(options)
        try checkCreationExtensions(options.extensionInputs)
        try checkUserHandle(options)
    }

    /// A create's checks before its extensions: the exclude list's bound.
    func checkBlinkCreation(_ options: CreationOptions) throws(CeremonyError) {
        guard makesBlinkChecks, options.excludeCredentials.count > Engine.blinkMaxDescriptors else { return }
        throw CeremonyError(WebAuthnError(.rangeError, "The `excludeCredentials` attribute exceeds the maximum allowed size (64)."),
                            reason: .refusedByBrowser)
    }

    /// The user handle's bound (WebAuthn L3 §5.4.3: at most 64 bytes), after the extension refusals: Blink's TypeError
    /// and text where it checks, the spec's client rule elsewhere.
    func checkUserHandle(_ options: CreationOptions) throws(CeremonyError) {
        guard options.user.id.count > 64 else { return }
        throw CeremonyError(.typeError(makesBlinkChecks ? "User handle exceeds 64 bytes."
                                       : "publicKey.user.id must be between 1 and 64 bytes long; it is \(options.user.id.count)."),
                            reason: .malformedRequest)
    }

    /// A get's checks before its extensions: an immediate request with an allow list, then without user activation
    /// (the activation consumed: the caller's to do, as only the page has it), then the allow list's bound.
    func checkBlinkRequest(_ options: RequestOptions, caller: Caller) throws(CeremonyError) {
        guard makesBlinkChecks else { return }
        if options.mediation == "immediate" {
            if !options.allowCredentials.isEmpty {
                throw CeremonyError(.notAllowed("An allowCredentials is not allowed with immediate mediation."), reason: .refusedByBrowser)
            }
            if !caller.hasUserActivation {
                throw CeremonyError(.notAllowed("A user activation is required to request immediate credentials."), reason: .userActivationRequired)
            }
        }
        if options.allowCredentials.count > Engine.blinkMaxDescriptors {
            throw CeremonyError(WebAuthnError(.rangeError, "The `allowCredentials` attribute exceeds the maximum allowed size (64)."),
                                reason: .refusedByBrowser)
        }
    }
}
