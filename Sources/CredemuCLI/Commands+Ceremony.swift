import CredemuEngine
import Vault
import WebAuthn

extension Context {
    func create(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "top-origin", "options", "backup-eligible", "backup-state",
                                                 "counter", "attestation", "aaguid"])
        try args.noMorePositionals(after: 0)
        let caller = try Caller(origin: try args.required("origin"), topOrigin: args.value("top-origin"))
        let settings = try credentialSettings(args)
        let options = try CreationOptions(json: try readInput(file: args.value("options")))
        let vault = try openVault()
        defer { vault.close() }
        let response = try Engine(vault: vault).create(options, caller: caller, settings: settings)
        printJSON(response.json)
        return .success
    }

    func get(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "top-origin", "options", "pick"])
        try args.noMorePositionals(after: 0)
        let caller = try Caller(origin: try args.required("origin"), topOrigin: args.value("top-origin"))
        let pick = try args.value("pick").map { (id) throws(UsageError) -> [UInt8] in
            guard let bytes = Base64URL.decode(id) else { throw UsageError("--pick takes a base64url credential ID.") }
            return bytes
        }
        let options = try RequestOptions(json: try readInput(file: args.value("options")))
        let vault = try openVault()
        defer { vault.close() }
        let response = try Engine(vault: vault).get(options, caller: caller, pick: pick)
        printJSON(response.json)
        return .success
    }

    /// The new credential's settings from the command line, over the synced-passkey defaults.
    private func credentialSettings(_ args: Arguments) throws(UsageError) -> PasskeySettings {
        var settings = PasskeySettings.syncedPasskey
        func bool(_ name: String) throws(UsageError) -> Bool? {
            guard let v = args.value(name) else { return nil }
            guard let b = ["true": true, "false": false, "1": true, "0": false][v] else {
                throw UsageError("--\(name) takes true or false.")
            }
            return b
        }
        if let be = try bool("backup-eligible") { settings.backupEligible = be; if !be { settings.backupState = false } }
        if let bs = try bool("backup-state") { settings.backupState = bs }
        if settings.backupState && !settings.backupEligible {
            throw UsageError("--backup-state true needs --backup-eligible true (WebAuthn L3 §6.1.3).")
        }
        if let c = args.value("counter") {
            guard let mode = CounterMode(rawValue: c) else { throw UsageError("--counter takes zero or increment.") }
            settings.counter = mode
        }
        if let a = args.value("attestation") {
            guard let cap = AttestationCapability(rawValue: a) else { throw UsageError("--attestation takes none or packed.") }
            settings.attestation = cap
        }
        if let g = args.value("aaguid") {
            guard let aaguid = AAGUID.parse(g) else { throw UsageError("--aaguid takes a UUID.") }
            settings.aaguid = aaguid
        }
        return settings
    }
}
