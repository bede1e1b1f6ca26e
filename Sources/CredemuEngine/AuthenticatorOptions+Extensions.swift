import WebAuthn

/// Which of the pack's extensions a key's hardware processes: the §11.1 `extensions` list (absent: every one), and
/// what its protocol has (a U2F-only key none of CTAP 2's; a CTAP 2.0 key not CTAP 2.1's largeBlob, credBlob and
/// minPinLength, as Chromium's virtual authenticator needs `ctap2_1` for them, devtools protocol
/// `WebAuthn.VirtualAuthenticatorOptions`).
extension AuthenticatorOptions {
    /// The identifiers a `extensions` list may name for each knob, the first the WebAuthn input's name. A key with
    /// hmac-secret answers prf through it, and one with CTAP 2.2's prf answers hmacCreateSecret too (Chromium's
    /// `SpecializeRequestForAuthenticator` maps prf onto either; measured: its virtual key with `prf` alone answers
    /// `hmacCreateSecret: true`).
    static let extensionIdentifiers: [String: [String]] = [
        "appid": ["appid", "appidExclude"], "hmacSecret": ["hmacCreateSecret", "hmac-secret", "prf"],
        "credProtect": ["credentialProtectionPolicy", "credProtect"], "credBlob": ["credBlob", "getCredBlob"],
        "minPinLength": ["minPinLength"], "largeBlob": ["largeBlob"], "prf": ["prf", "hmac-secret", "hmacCreateSecret"],
    ]

    /// Whether the key processes the extension behind `knob` (a name of `extensionIdentifiers`).
    func hasExtension(_ knob: String) -> Bool {
        switch knob {
        case "appid": break  // the browser's: a U2F-era credential is asserted with the AppID's hash by any key
        case "largeBlob", "credBlob", "minPinLength": if `protocol` != .ctap2_1 { return false }
        default: if isU2F { return false }
        }
        return (AuthenticatorOptions.extensionIdentifiers[knob] ?? [knob]).contains(where: processes)
    }

    /// The pack's knobs as this key answers: an extension it does not process is `unsupported` (Chromium still
    /// processes the input: its false outputs, no results), or absent for minPinLength, which has no client output.
    func narrowing(_ knobs: PolicyKnobs) -> PolicyKnobs {
        var k = knobs
        if !hasExtension("appid"), k.appid != .notProcessed { k.appid = .unsupported }
        if !hasExtension("hmacSecret"), k.hmacSecret != .notProcessed { k.hmacSecret = .unsupported }
        if !hasExtension("credProtect"), k.credProtect != .notProcessed { k.credProtect = .unsupported }
        if !hasExtension("credBlob"), k.credBlob != .notProcessed { k.credBlob = .unsupported }
        if !hasExtension("minPinLength") { k.minPinLength = .notProcessed }
        if !hasExtension("largeBlob"), k.largeBlob != .notProcessed { k.largeBlob = .unsupported }
        if !hasExtension("prf"), k.prf != .notProcessed { k.prf = .unsupported }
        return k
    }
}
