import Foundation
import WebAuthn

/// Finds policies by ID: the packs in a `providers/` directory, plus the built-in `webauthn-spec`.
public struct PolicyRegistry: Sendable {
    public let directory: String?
    public let packs: [PolicyPack]

    /// Reads every `*.json` pack in `directory` (files ending in `.schema.json` are skipped); a malformed pack
    /// is an error that names it.
    public init(directory: String?) throws(InvalidConfiguration) {
        self.directory = directory
        guard let directory else {
            packs = []
            return
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json") }.sorted()
        var packs: [PolicyPack] = []
        for name in names { packs.append(try PolicyPack.load(path: directory + "/" + name)) }
        self.packs = packs
    }

    /// Every policy: the packs, then the built-in ones.
    public var all: [any ProviderPolicy] { packs + [SpecPolicy()] }

    /// Every policy with its ID, name, version, platforms and sources: `credemu providers` and `GET /providers`.
    public var json: JSONValue {
        .object([("directory", directory.map(JSONValue.string) ?? .null), ("providers", .array(all.map { policy in
            let sources: [(String, JSONValue)] = (policy as? PolicyPack)?.sources.map { ($0.0, .string($0.1)) }
                ?? [("spec", "W3C WebAuthn Level 3 editor's draft (built in, Swift)")]
            return .object([("id", .string(policy.id)), ("name", .string(policy.name)), ("version", .string(policy.version)),
                            ("platforms", .array(policy.platforms.map { .string($0.rawValue) })), ("sources", .object(sources))])
        }))])
    }

    /// The providers a scenario runs on: "all" (every policy on the scenario's platform for it, else its
    /// default), or a list such as "gpm,apple@ios,webauthn-spec".
    public func select(_ text: String, for scenario: Scenario) throws(InvalidConfiguration) -> [(any ProviderPolicy, Platform)] {
        func platform(_ policy: any ProviderPolicy) -> Platform {
            scenario.platforms[policy.id] ?? (policy as? PolicyPack)?.defaultPlatform ?? .chromeDesktop
        }
        if text == "all" { return all.map { ($0, platform($0)) } }
        var out: [(any ProviderPolicy, Platform)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "@", omittingEmptySubsequences: false).map(String.init)
            guard parts.count <= 2, let policy = all.first(where: { $0.id == parts[0] }) else {
                throw InvalidConfiguration(.policyPack, "No pack '\(item)'; name packs as ID or ID@platform, from \(all.map(\.id).joined(separator: ", ")).")
            }
            guard parts.count > 1 else { out.append((policy, platform(policy))); continue }
            guard let p = Platform(rawValue: parts[1]) else { throw InvalidConfiguration(.policyPack, "'\(parts[1])' is not a platform.") }
            out.append((policy, p))
        }
        return out
    }

    /// The policy a profile plays: its own pack file when it names one, else the pack with its ID.
    public func policy(for profile: Profile) throws(InvalidConfiguration) -> any ProviderPolicy {
        if let path = profile.packPath { return try PolicyPack.load(path: path) }
        if let found = all.first(where: { $0.id == profile.pack }) { return found }
        throw InvalidConfiguration(.policyPack, "No policy pack '\(profile.pack)'; the packs are \(all.map(\.id).joined(separator: ", ")).")
    }

    /// The `providers/` directory: `$CREDEMU_PROVIDERS`, else the nearest `providers/` above the executable
    /// (a checkout's `.build/debug/credemu` finds the repository's), else `./providers`.
    public static func locateDirectory(environment: [String: String]) -> String? {
        if let explicit = environment["CREDEMU_PROVIDERS"] { return explicit }
        var url = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = url.appendingPathComponent("providers")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("gpm.json").path) { return candidate.path }
            url = url.deletingLastPathComponent()
        }
        let local = FileManager.default.currentDirectoryPath + "/providers"
        return FileManager.default.fileExists(atPath: local) ? local : nil
    }
}
