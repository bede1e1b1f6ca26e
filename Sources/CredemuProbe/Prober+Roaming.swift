import CredemuEngine
import CredemuOperations
import WebAuthn

/// The security key and the phone beside each pack: the probe's `securityKey`, `hybrid` and `securityKeySignIn`
/// variants, sent through the browser's sheet as the user's `use:NAME` choice.
extension Prober {
    /// A column's key (a profile of a security-key pack plugged into the column's profile) and phone (a device on
    /// a phone platform the pack models, with an account of the pack), and why a variant is not sent.
    struct Roaming {
        var key: String?
        var phone: String?
        var notApplicable: [ProbeVariant: String] = [:]

        /// The name the user picks in the sheet for a variant, if it is one of these.
        func choice(_ variant: ProbeVariant) -> String? {
            switch variant {
            case .securityKey, .securityKeySignIn: return key
            case .hybrid: return phone
            default: return nil
            }
        }
    }

    /// The hardware every probe key has: CTAP 2.1 over USB with a PIN the user enters, so UV follows the
    /// server's options, and room for discoverable credentials (WebAuthn L3 §11.1 options).
    static let keyHardware: JSONValue = .object([("protocol", "ctap2_1"), ("transport", "usb"), ("hasResidentKey", true),
                                                  ("hasUserVerification", true), ("isUserVerified", true)])

    /// The phone platforms a desktop reaches over hybrid, in the order the probe prefers: an Android phone's
    /// provider (GPM through Play services), an iPhone's, Chrome on Android.
    static let phonePlatforms: [Platform] = [.android, .ios, .chromeAndroid]

    /// Replaces the column's key and phone from an earlier run and makes those the pack can have.
    func prepareRoaming(_ policy: any ProviderPolicy, _ platform: Platform, profile: String) throws(ProbeError) -> Roaming {
        let key = profile + "-key", phone = profile + "-phone", phoneAccount = profile + "-phone-account"
        try operation { () throws(OperationError) in
            if (try? ops.device(phone)) != nil { try ops.removeDevice(phone) }
            for name in [key, phoneAccount] where (try? ops.profile(name)) != nil { try ops.removeProfile(name) }
        }
        var roaming = Roaming()
        let knobs = policy.knobs(for: platform)
        if knobs.model == .securityKey {
            let why = knobs.cite("authenticator.model", "securityKey") + ": the column is a security key itself, so its modal registration and sign-ins are the key's"
            roaming.notApplicable[.securityKey] = why
            roaming.notApplicable[.securityKeySignIn] = why
            roaming.notApplicable[.hybrid] = knobs.cite("authenticator.model", "securityKey") + ": a security key is no phone"
            return roaming
        }
        if let keyPack = ops.registry.all.first(where: { $0.knobs(for: ($0 as? PolicyPack)?.defaultPlatform ?? .chromeDesktop).model == .securityKey }) {
            try operation { () throws(OperationError) in
                _ = try ops.createProfile(key, settings: [("pack", .string(keyPack.id)), ("authenticator", Prober.keyHardware)], allowPackPath: false)
            }
            roaming.key = key
        } else {
            roaming.notApplicable[.securityKey] = "no pack of the registry is a security key (authenticator.model securityKey)"
            roaming.notApplicable[.securityKeySignIn] = roaming.notApplicable[.securityKey]
        }
        if platform.isPhone {
            roaming.notApplicable[.hybrid] = "the column runs on a phone (\(platform.rawValue)); hybrid is a desktop reaching a phone"
        } else if let phonePlatform = Prober.phonePlatforms.first(where: policy.platforms.contains) {
            try operation { () throws(OperationError) in
                _ = try ops.createProfile(phoneAccount, settings: [("pack", .string(policy.id)), ("platform", .string(phonePlatform.rawValue))], allowPackPath: false)
                _ = try ops.createDevice(phone, settings: [("platform", .string(phonePlatform.rawValue)), ("providers", .array([.string(phoneAccount)]))])
            }
            roaming.phone = phone
        } else {
            roaming.notApplicable[.hybrid] = "the pack models no phone (it models \(policy.platforms.map(\.rawValue).joined(separator: ", ")))"
        }
        return roaming
    }

    /// A create or get from a variant that the user's choice in the browser's sheet (`use:NAME` on the column's
    /// queue) sends to a key or a phone; the queue is left empty whatever the ceremony did.
    func choosing<T>(_ use: String?, in profile: String, _ body: () throws(OperationError) -> T) throws(OperationError) -> T {
        guard let use else { return try body() }
        return try deciding("use:" + use, in: profile, body)
    }

    /// A ceremony with the user's next decision queued on the column's queue first, which is left empty whatever the
    /// ceremony did.
    func deciding<T>(_ decision: String, in profile: String, _ body: () throws(OperationError) -> T) throws(OperationError) -> T {
        _ = try ops.queueDecisions(.profile(profile), [decision])
        defer { _ = try? ops.clearDecisions(.profile(profile)) }
        return try body()
    }

    /// The server's options asking a platform authenticator rule out a key or a phone: the browser's sheet does not
    /// offer them then (Chromium's `make_credential_request_handler.cc`).
    static func attachmentRulesOut(_ variant: ProbeVariant, _ options: JSONValue) -> String? {
        guard variant == .securityKey || variant == .hybrid,
              options["authenticatorSelection"]?["authenticatorAttachment"]?.stringValue == "platform" else { return nil }
        return "the server's options ask authenticatorAttachment \"platform\", which a \(variant == .hybrid ? "phone over hybrid" : "security key") is not"
    }

    /// Two sign-ins with the key's credential, the user picking the key in the sheet: the second's signCount must
    /// have grown. The first refused is the cell.
    func securityKeySignIns(_ account: Account?, roaming: Roaming, platform: Platform, knobs: PolicyKnobs, registration: ProbeCell) throws(ProbeError) -> ProbeCell {
        if let why = roaming.notApplicable[.securityKeySignIn] { return ProbeCell(outcome: .notApplicable, message: why) }
        guard let account, let key = roaming.key else {
            return ProbeCell(outcome: .notRun, message: registration.outcome == .accepted ? "the key's registration left no credential"
                             : "the security key's registration was not accepted, so there is no key credential to sign in with")
        }
        let first = try authenticate(.securityKeySignIn, account: account, platform: platform, knobs: knobs, use: key)
        guard first.outcome == .accepted else { return first }
        var second = try authenticate(.securityKeySignIn, account: account, platform: platform, knobs: knobs, use: key)
        second.sent = "first: \(first.sent); second: \(second.sent)"
        return second
    }

    /// The attestation statement's format and whether it carries a certificate chain.
    static func attestation(_ response: JSONValue) -> (fmt: String, x5c: Bool) {
        guard let text = response["response"]?["attestationObject"]?.stringValue, let bytes = Base64URL.decode(text),
              let object = try? CBOR.decode(bytes, options: .lenient) else { return ("?", false) }
        return (object["fmt"]?.textValue ?? "?", object["attStmt"]?["x5c"] != nil)
    }

    /// A response from a phone over hybrid: cross-platform, with the hybrid transport.
    static func hybrid(_ response: JSONValue) -> Bool {
        response["authenticatorAttachment"]?.stringValue == "cross-platform"
            && (response["response"]?["transports"]?.arrayValue ?? []).contains { $0.stringValue == "hybrid" }
    }
}
