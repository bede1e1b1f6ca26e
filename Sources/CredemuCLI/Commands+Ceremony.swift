import CredemuEngine
import CredemuOperations
import Vault
import WebAuthn

extension Option {
    /// The caller of a ceremony.
    static let origin = Option("origin", .text("ORIGIN"),
                               "The caller's origin: https://host[:port], http://localhost[:port] or android:apk-key-hash:HASH.")
    /// `--origin` for a create or a get, where native request shapes carry or imply their origin.
    static let ceremonyOrigin = Option("origin", .text("ORIGIN"), """
        The caller's origin: https://host[:port], http://localhost[:port] or android:apk-key-hash:HASH; required unless the
        options are a native app's request, which carries or implies its origin.
        """)
    static let topOrigin = Option("top-origin", .text("ORIGIN"), "The top-level origin when the caller is a cross-origin iframe.")
    static let optionsFile = Option("options", .text("FILE"), "Read the options from FILE instead of standard input.")
    static let platform = Option("platform", .oneOf(Platform.allCases.map(\.rawValue), placeholder: "P"),
                                 "Run on another platform of the profile's account (one its pack models).")
    static let androidPackage = Option("android-package", .text("PKG"), "The calling app's package, for android:apk-key-hash origins.")
    /// A new credential's settings over the pack's.
    static let newCredentialSettings: [Option] = {
        let section = "Settings of the new credential (default: the pack's, e.g. GPM: BE=1 BS=1, counter 0, fmt none):"
        return [
            Option("backup-eligible", .oneOf(["true", "false", "1", "0"]), "BE flag.", section: section),
            Option("backup-state", .oneOf(["true", "false", "1", "0"]), "BS flag (needs BE).", section: section),
            Option("counter", .oneOf(CounterMode.allCases.map(\.rawValue)), "Signature counter behaviour.", section: section),
            Option("attestation", .oneOf(AttestationCapability.allCases.map(\.rawValue)),
                   "\"packed\": self-attestation when the RP asks for direct attestation.", section: section),
            Option("aaguid", .text("UUID"), "The AAGUID in attested credential data.", section: section),
        ]
    }()
}

extension Commands {
    static let create: Command = Command(
        "create", summary: "Register a passkey (modal, or --mediation conditional for an automatic upgrade).",
        discussion: """
        Runs navigator.credentials.create() for the caller ORIGIN with the PublicKeyCredentialCreationOptionsJSON in FILE
        (or standard input), bare or wrapped as {"publicKey": ..., "mediation": ...}. A modal create asks the simulated
        user (accepts unless `credemu user next` queued otherwise); a conditional create (automatic passkey upgrade) runs
        the profile's pack: recent matching password, opt-out, existing passkey, exclusion. Prints the
        RegistrationResponseJSON. A failure prints the web error with its reason and its Android and Apple renderings; an
        ineligible conditional create is "silent": true.
        """,
        options: [
            .ceremonyOrigin, .topOrigin, .optionsFile,
            Option("mediation", .oneOf(["conditional", "modal"]),
                   "conditional (Android isConditional, Apple .conditional) or modal; overrides the options' own."),
            .platform, .androidPackage,
        ] + Option.newCredentialSettings
    ) { context, args in try context.create(args) }

    static let get: Command = Command(
        "get", summary: "Sign in with a passkey: request options JSON in, AuthenticationResponseJSON out.",
        discussion: """
        Runs navigator.credentials.get() for the caller ORIGIN with the PublicKeyCredentialRequestOptionsJSON in FILE (or
        standard input). Hidden passkeys are never offered. When several credentials match, the simulated user picks the
        most recently used one, or CREDENTIAL_ID (base64url) with --pick. --mediation immediate is Chrome's immediate
        mediation where the pack's browser has it (immediateGet.*): NotAllowedError at once with no usable passkey, in a
        private-browsing tab or over its rate limit (kept by a server process; each CLI run starts with none), internal
        transport only, the prompt's timeout 500 ms; a TypeError where the browser has no such value.
        """,
        options: [
            .ceremonyOrigin, .topOrigin, .optionsFile,
            Option("pick", .text("CREDENTIAL_ID"), "The credential the user picks (as a queued `user next pick:ID` does); ID@ACCOUNT on a device picks that provider's entry."),
            Option("mediation", .oneOf(["conditional", "modal", "immediate"]),
                   "conditional, modal or immediate (conditional: the dropdown's pick, as a queued decision; immediate: see above)."),
            .flag("no-user-activation", "The page has no transient user activation (Chrome refuses an immediate get without one)."),
            .platform, .androidPackage,
        ]
    ) { context, args in try context.get(args) }

    static let offer: Command = Command(
        "offer", summary: "What a conditional get's autofill dropdown offers now (pick with 'user next pick:ID').",
        discussion: """
        What the autofill dropdown of a conditional get with these request options (FILE or standard input) offers now:
        the RP's usable passkeys, most recently used first; hidden ones never. The offer is logged. From the CLI a
        conditional get answers at once: queue the pick first ('credemu user next pick:ID'). A server keeps a conditional
        get pending until POST /profiles/{p}/offer/pick.
        """,
        options: [.origin.asRequired, .optionsFile, .platform]
    ) { context, args in try context.offer(args) }

    static let signal: Command = Command(
        "signal", summary: "Send signalUnknownCredential / signalAllAcceptedCredentials / signalCurrentUserDetails.",
        discussion: """
        Sends PublicKeyCredential.signalUnknownCredential ({rpId, credentialId}), signalAllAcceptedCredentials ({rpId,
        userId, allAcceptedCredentialIds}) or signalCurrentUserDetails ({rpId, userId, name, displayName}), JSON from FILE
        or standard input. Prints {"resolved": true}: a signal tells the caller nothing. What the provider did (hid,
        restored, deleted, renamed, ignored, dropped over quota) is in `credemu events`.
        """,
        positionals: [Positional("KIND", "a kind", allowed: Operations.signalKinds)],
        options: [.origin.asRequired, .optionsFile, .platform]
    ) { context, args in try context.signal(args) }

    static let capabilities: Command = Command(
        "capabilities", summary: "getClientCapabilities(), isConditionalMediationAvailable(), isUVPAA() for the profile.",
        discussion: """
        The profile's getClientCapabilities() (keys sorted, omitted where the platform omits them),
        isConditionalMediationAvailable() and isUserVerifyingPlatformAuthenticatorAvailable(), from its pack. A device's
        are its own platform's: --platform is for a profile.
        """,
        options: [.platform]
    ) { context, args in try context.capabilities(args) }
}

extension Context {
    /// The ceremony target the global options name: `--device NAME`, else the profile.
    var target: CeremonyTarget { deviceName.map { .device($0) } ?? .profile(profileName) }

    func create(_ args: Arguments) throws -> ExitStatus {
        let overrides = try settingOverrides(args)
        let request = try ceremonyRequest(args)
        answered(try perform { (ops) throws(OperationError) in try ops.create(target, request, overrides: overrides) })
        return .success
    }

    func get(_ args: Arguments) throws -> ExitStatus {
        let request = try ceremonyRequest(args, pick: args.value("pick"), userActivation: args.flag("no-user-activation") ? false : nil)
        answered(try perform { (ops) throws(OperationError) in try ops.get(target, request) })
        return .success
    }

    /// `credemu offer`: the conditional get's autofill dropdown, as it would open now.
    func offer(_ args: Arguments) throws -> ExitStatus {
        let request = CeremonyRequest(options: .text(try readInput(file: args.value("options"))), origin: try args.required("origin"),
                                      platform: args.value("platform"))
        printJSON(try perform { (ops) throws(OperationError) in try ops.autofillOffer(target, request) })
        return .success
    }

    func signal(_ args: Arguments) throws -> ExitStatus {
        let kind = args.argument("KIND") ?? ""
        let request = CeremonyRequest(options: .text(try readInput(file: args.value("options"))), origin: try args.required("origin"),
                                      platform: args.value("platform"))
        let accounts = try perform { (ops) throws(OperationError) in try ops.signal(target, kind: kind, request) }
        answered(Answer(response: .object([("resolved", true)]), accounts: accounts))
        return .success
    }

    func capabilities(_ args: Arguments) throws -> ExitStatus {
        answered(try perform { (ops) throws(OperationError) in try ops.capabilities(target, platform: args.value("platform")) })
        return .success
    }

    /// Prints the answer; on a device, names on standard error the account it went to (standard output stays the
    /// response).
    private func answered(_ answer: Answer) {
        if let deviceName {
            terminal.writeError("credemu: device \(deviceName): answered by \(answer.accounts.isEmpty ? "no provider" : answer.accounts.joined(separator: ", "))\n")
        }
        printJSON(answer.response)
    }

    /// The ceremony as the flags give it; web options need `--origin` (native shapes carry or imply theirs).
    private func ceremonyRequest(_ args: Arguments, pick: String? = nil, userActivation: Bool? = nil) throws -> CeremonyRequest {
        let text = try readInput(file: args.value("options"))
        if args.value("origin") == nil, ((try? JSONValue.parse(text)).map(PlatformRequest.shape) ?? .web) == .web {
            throw UsageError("--origin is required.")
        }
        return CeremonyRequest(options: .text(text), origin: args.value("origin"), topOrigin: args.value("top-origin"),
                               androidPackage: args.value("android-package"), platform: args.value("platform"),
                               mediation: args.value("mediation"), pick: pick, userActivation: userActivation)
    }

    /// Per-credential overrides from the command line, over the pack's settings for new passkeys.
    private func settingOverrides(_ args: Arguments) throws(UsageError) -> PasskeySettingOverrides {
        func bool(_ name: String) -> Bool? { args.value(name).map { $0 == "true" || $0 == "1" } }
        var out = PasskeySettingOverrides(backupEligible: bool("backup-eligible"), backupState: bool("backup-state"))
        out.counter = args.value("counter").flatMap(CounterMode.init(rawValue:))
        out.attestation = args.value("attestation").flatMap(AttestationCapability.init(rawValue:))
        if let g = args.value("aaguid") {
            guard let aaguid = AAGUID.parse(g) else { throw UsageError("--aaguid takes a UUID.") }
            out.aaguid = aaguid
        }
        return out
    }
}
