import WebAuthn

extension Engine {
    /// Related origin requests (WebAuthn L3 §5.11): an RP ID that is not a registrable suffix of the caller's
    /// domain is allowed when the RP's `https://RPID/.well-known/webauthn` lists the caller's origin among its first
    /// `relatedOrigins.maxLabels` labels (§5.11.1; Chromium: 5). The file is the profile's `relatedOrigins`
    /// setting, never fetched. Throws `refused` (the plain RP ID check's SecurityError) when the browser has no
    /// related-origin requests or the RP serves no list, and a SecurityError naming the list otherwise.
    func relatedOrigin(_ rpID: String, caller: Caller, refused: WebAuthnError) throws(WebAuthnError) {
        let maxLabels = knobs.relatedOriginsMaxLabels
        // An app origin's RP ID is checked by the platform's own association files, not this one.
        guard maxLabels > 0, caller.origin.effectiveDomain != nil, RelyingPartyID.isValidDomain(rpID) else { throw refused }
        // A public suffix is never an RP ID, whatever a well-known file says (Chrome's kRejectRpIdsInsideCallersPublicSuffix,
        // on by default from M152; the spec's RP ID must be a registrable domain suffix).
        guard !RelyingPartyID.isPublicSuffix(rpID) else { throw refused }
        // A browser older than the one that added related origin requests checks the RP ID alone.
        // Its error is the plain check's, word for word.
        if let since = knobs.relatedOriginsSince.flatMap(Version.init), let version = profile.browserVersion.flatMap(Version.init), version < since {
            throw refused
        }
        guard let origins = profile.relatedOrigins[rpID] else {
            throw WebAuthnError(.securityError, refused.message + " https://\(rpID)/.well-known/webauthn lists no related origins (profile setting relatedOrigins).")
        }
        guard RelyingPartyID.relatedOriginsAllow(origins, caller: caller.origin, maxLabels: maxLabels) else {
            throw WebAuthnError(.securityError, "The origin \(caller.origin) is not among the related origins https://\(rpID)/.well-known/webauthn lists within "
                                + knobs.cite("relatedOrigins.maxLabels", "\(maxLabels)") + " labels.")
        }
    }
}
