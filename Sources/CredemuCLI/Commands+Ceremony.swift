import CredemuEngine
import CredemuOperations
import Vault
import WebAuthn

extension Context {
    func create(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "top-origin", "options", "mediation", "platform", "android-package",
                                                 "backup-eligible", "backup-state", "counter", "attestation", "aaguid"])
        try args.noMorePositionals(after: 0)
        let overrides = try settingOverrides(args)
        let request = try ceremonyRequest(args)
        if let deviceName {
            guard overrides.isEmpty else { throw UsageError("The per-credential overrides are for a profile's create, not a device's.") }
            let (response, account) = try perform { (ops) throws(OperationError) in try ops.create(device: deviceName, request) }
            answeredBy(account)
            printJSON(response)
            return .success
        }
        printJSON(try perform { (ops) throws(OperationError) in try ops.create(profileName, request, overrides: overrides) })
        return .success
    }

    func get(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "top-origin", "options", "pick", "mediation", "platform", "android-package"])
        try args.noMorePositionals(after: 0)
        let request = try ceremonyRequest(args)
        if let deviceName {
            let (response, account) = try perform { (ops) throws(OperationError) in try ops.get(device: deviceName, request) }
            answeredBy(account)
            printJSON(response)
            return .success
        }
        printJSON(try perform { (ops) throws(OperationError) in try ops.get(profileName, request) })
        return .success
    }

    /// `credemu offer`: the conditional get's autofill dropdown, as it would open now.
    func offerCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "options", "platform"])
        try args.noMorePositionals(after: 0)
        let request = CeremonyRequest(options: .text(try readInput(file: args.value("options"))), origin: try args.required("origin"),
                                      platform: args.value("platform"))
        printJSON(try perform { (ops) throws(OperationError) in
            if let deviceName { return try ops.autofillOffer(device: deviceName, request) }
            return try ops.autofillOffer(profileName, request)
        })
        return .success
    }

    func signalCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "options", "platform"])
        guard let kind = args.positionals.first else { throw UsageError("signal needs a kind: \(Operations.signalKinds.joined(separator: ", ")).") }
        try args.noMorePositionals(after: 1)
        let request = CeremonyRequest(options: .text(try readInput(file: args.value("options"))), origin: try args.required("origin"),
                                      platform: args.value("platform"))
        if let deviceName {
            let accounts = try perform { (ops) throws(OperationError) in try ops.signal(device: deviceName, kind: kind, request) }
            answeredBy(accounts.isEmpty ? "no provider" : accounts.joined(separator: ", "))
        } else {
            try perform { (ops) throws(OperationError) in try ops.signal(profileName, kind: kind, request) }
        }
        printJSON(.object([("resolved", true)]))
        return .success
    }

    func capabilitiesCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["platform"])
        try args.noMorePositionals(after: 0)
        printJSON(try perform { (ops) throws(OperationError) in
            if let deviceName {
                guard args.value("platform") == nil else { throw .invalidInput("A device's capabilities are its own platform's; --platform is for a profile.") }
                return try ops.capabilities(device: deviceName)
            }
            return try ops.capabilities(profileName, platform: args.value("platform"))
        })
        return .success
    }

    /// Names on standard error the provider account a device's ceremony went to (standard output stays the response).
    private func answeredBy(_ account: String) {
        terminal.writeError("credemu: device \(deviceName ?? ""): answered by \(account)\n")
    }

    /// The ceremony as the flags give it; web options need `--origin` (native shapes carry or imply theirs).
    private func ceremonyRequest(_ args: Arguments) throws -> CeremonyRequest {
        let text = try readInput(file: args.value("options"))
        if args.value("origin") == nil, ((try? JSONValue.parse(text)).map(PlatformRequest.shape) ?? .web) == .web {
            throw UsageError("--origin is required.")
        }
        return CeremonyRequest(options: .text(text), origin: args.value("origin"), topOrigin: args.value("top-origin"),
                               androidPackage: args.value("android-package"), platform: args.value("platform"),
                               mediation: args.value("mediation"), pick: args.value("pick"))
    }

    /// Per-credential overrides from the command line, over the pack's settings for new passkeys.
    private func settingOverrides(_ args: Arguments) throws(UsageError) -> PasskeySettingOverrides {
        func bool(_ name: String) throws(UsageError) -> Bool? {
            guard let v = args.value(name) else { return nil }
            guard let b = ["true": true, "false": false, "1": true, "0": false][v] else {
                throw UsageError("--\(name) takes true or false.")
            }
            return b
        }
        var out = PasskeySettingOverrides(backupEligible: try bool("backup-eligible"), backupState: try bool("backup-state"))
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
