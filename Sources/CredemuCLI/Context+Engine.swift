import CredemuEngine
import Foundation
import Vault
import WebAuthn

/// A ceremony failure as the CLI prints it: the web error, the reason, and every platform's rendering.
struct CeremonyFailureOutput: Error {
    var failure: CeremonyError
    var operation: Dialect.Operation
    var engine: Engine

    var json: JSONValue { failure.json(operation: operation, engine: engine) }
}

extension Context {
    /// The policy packs: `--providers`, `$CREDEMU_PROVIDERS`, or the repository's `providers/`.
    func registry() throws -> PolicyRegistry {
        try PolicyRegistry(directory: providersDirectory)
    }

    /// The profile named by `--profile`; "default" is created on first use (GPM on Chrome desktop).
    func loadProfile(_ vault: Vault, name: String? = nil) throws -> Profile {
        let name = name ?? profileName
        if let settings = try vault.profileSettings(name) { return try Profile(name: name, json: settings) }
        guard name == Vault.defaultProfile else {
            throw VaultError(.notFound, "No profile '\(name)' in \(vaultPath); create it with 'credemu profile create \(name) --pack ID'.")
        }
        let profile = Profile(name: name)
        try vault.saveProfile(name, settings: profile.json, at: Date())
        return profile
    }

    /// The vault's clock: virtual when `credemu clock set` or `advance` made it so, else the system's.
    func clock(_ vault: Vault) throws -> any Clock {
        AdjustableClock(virtual: try vault.storedClockTime())
    }

    /// An engine for the profile, optionally on another platform of the same account.
    func engine(_ vault: Vault, platform: String? = nil) throws -> Engine {
        var profile = try loadProfile(vault)
        if let platform {
            guard let p = Platform(rawValue: platform) else {
                throw UsageError("--platform takes one of \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            profile.platform = p
        }
        let policy = try registry().policy(for: profile)
        return Engine(vault: vault.scoped(to: profile.name), profile: profile, policy: policy, clock: try clock(vault))
    }

    /// Runs an engine call, turning its failure into the CLI's error output.
    func run<T>(_ engine: Engine, _ operation: Dialect.Operation, _ body: () throws(CeremonyError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw CeremonyFailureOutput(failure: error, operation: operation, engine: engine)
        }
    }
}
