import CredemuEngine
import Vault
import WebAuthn

extension Context {
    func create(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "top-origin", "options", "mediation", "platform", "android-package",
                                                 "backup-eligible", "backup-state", "counter", "attestation", "aaguid"])
        try args.noMorePositionals(after: 0)
        let overrides = try credentialSettingOverrides(args)
        let (parsed, nativeOrigin) = try PlatformRequest.creationOptions(try document(try input(args)))
        var options = parsed
        let caller = try Caller(origin: try args.value("origin") ?? nativeOrigin ?? args.required("origin"), topOrigin: args.value("top-origin"),
                                androidPackageName: args.value("android-package"))
        if let mediation = args.value("mediation") { options.mediation = mediation == "modal" ? nil : mediation }
        let vault = try openVault()
        defer { vault.close() }
        let engine = try engine(vault, platform: args.value("platform"))
        let settings = overrides.isEmpty ? nil : try overrides.applied(to: engine.knobs.newPasskeySettings)
        let response = try run(engine, .create) { () throws(CeremonyError) in try engine.create(options, caller: caller, settings: settings) }
        printJSON(response.json)
        return .success
    }

    func get(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "top-origin", "options", "pick", "mediation", "platform", "android-package"])
        try args.noMorePositionals(after: 0)
        let (parsed, nativeOrigin) = try PlatformRequest.requestOptions(try document(try input(args)))
        var options = parsed
        let caller = try Caller(origin: try args.value("origin") ?? nativeOrigin ?? args.required("origin"), topOrigin: args.value("top-origin"),
                                androidPackageName: args.value("android-package"))
        let pick = try args.value("pick").map { (id) throws(UsageError) -> [UInt8] in
            guard let bytes = Base64URL.decode(id) else { throw UsageError("--pick takes a base64url credential ID.") }
            return bytes
        }
        if let mediation = args.value("mediation") { options.mediation = mediation == "modal" ? nil : mediation }
        let vault = try openVault()
        defer { vault.close() }
        let engine = try engine(vault, platform: args.value("platform"))
        let response = try run(engine, .get) { () throws(CeremonyError) in try engine.get(options, caller: caller, pick: pick) }
        printJSON(response.json)
        return .success
    }

    /// The options text; web options need `--origin` (native shapes carry or imply theirs).
    private func input(_ args: Arguments) throws -> String {
        let text = try readInput(file: args.value("options"))
        if args.value("origin") == nil, ((try? JSONValue.parse(text)).map(PlatformRequest.shape) ?? .web) == .web {
            throw UsageError("--origin is required.")
        }
        return text
    }

    /// Options text as JSON; malformed text is the TypeError a browser raises.
    private func document(_ text: String) throws(WebAuthnError) -> JSONValue {
        do {
            return try JSONValue.parse(text)
        } catch {
            throw .typeError("The options are not valid JSON: \(error.description).")
        }
    }

    /// Per-credential overrides from the command line, over the pack's settings for new passkeys.
    struct SettingOverrides {
        var backupEligible: Bool?
        var backupState: Bool?
        var counter: CounterMode?
        var attestation: AttestationCapability?
        var aaguid: [UInt8]?

        var isEmpty: Bool { backupEligible == nil && backupState == nil && counter == nil && attestation == nil && aaguid == nil }

        func applied(to base: PasskeySettings) throws(UsageError) -> PasskeySettings {
            var s = base
            if let be = backupEligible {
                s.backupEligible = be
                if !be { s.backupState = false }
            }
            if let bs = backupState {
                guard !bs || s.backupEligible else { throw UsageError("--backup-state true needs backup eligibility (WebAuthn L3 §6.1.3).") }
                s.backupState = bs
            }
            if let counter { s.counter = counter }
            if let attestation { s.attestation = attestation }
            if let aaguid { s.aaguid = aaguid }
            return s
        }
    }

    private func credentialSettingOverrides(_ args: Arguments) throws(UsageError) -> SettingOverrides {
        func bool(_ name: String) throws(UsageError) -> Bool? {
            guard let v = args.value(name) else { return nil }
            guard let b = ["true": true, "false": false, "1": true, "0": false][v] else {
                throw UsageError("--\(name) takes true or false.")
            }
            return b
        }
        var out = SettingOverrides(backupEligible: try bool("backup-eligible"), backupState: try bool("backup-state"))
        if let c = args.value("counter") {
            guard let mode = CounterMode(rawValue: c) else { throw UsageError("--counter takes zero or increment.") }
            out.counter = mode
        }
        if let a = args.value("attestation") {
            guard let cap = AttestationCapability(rawValue: a) else { throw UsageError("--attestation takes none or packed.") }
            out.attestation = cap
        }
        if let g = args.value("aaguid") {
            guard let aaguid = AAGUID.parse(g) else { throw UsageError("--aaguid takes a UUID.") }
            out.aaguid = aaguid
        }
        return out
    }
}
