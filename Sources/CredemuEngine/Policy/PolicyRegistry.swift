import Foundation
import Shipped
import WebAuthn

/// Finds policies by ID: the packs compiled into the executable (`ShippedFile.packs`, the repository's
/// `providers/`), a directory's packs over them, and the built-in `webauthn-spec`.
public struct PolicyRegistry: Sendable {
    public let directory: String?
    /// The shipped packs in file order, each replaced by the directory's pack of the same ID; then the
    /// directory's other packs in file order.
    public let packs: [PolicyPack]
    /// Where each pack came from, by ID: `built-in` or the path of its file.
    public let origins: [String: String]

    /// The shipped packs, then every `*.json` pack in `directory` (files ending in `.schema.json` are skipped)
    /// over them: a directory pack with a shipped pack's ID replaces it, any other is added. A directory that
    /// cannot be listed, a malformed pack or two directory packs with one ID is an error that names the file.
    public init(directory: String? = nil) throws(InvalidConfiguration) {
        self.directory = directory
        var packs = try PolicyRegistry.shipped.get()
        var origins = Dictionary(uniqueKeysWithValues: packs.map { ($0.id, "built-in") })
        if let directory {
            guard let listing = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
                throw InvalidConfiguration(.policyPack, "\(directory): the providers directory cannot be read")
            }
            var fromDirectory: [String: String] = [:]
            for name in listing.filter({ $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json") }).sorted() {
                let path = directory + "/" + name
                let pack = try PolicyPack.load(path: path)
                if let earlier = fromDirectory[pack.id] {
                    throw InvalidConfiguration(.policyPack, "\(path): the pack ID '\(pack.id)' is taken by \(earlier)")
                }
                fromDirectory[pack.id] = path
                origins[pack.id] = path
                if let index = packs.firstIndex(where: { $0.id == pack.id }) { packs[index] = pack } else { packs.append(pack) }
            }
        }
        self.packs = packs
        self.origins = origins
    }

    /// The shipped packs, read once per process; a test checks each is valid.
    static let shipped: Result<[PolicyPack], InvalidConfiguration> = Result { () throws(InvalidConfiguration) in
        var packs: [PolicyPack] = []
        for file in ShippedFile.packs {
            let pack = try PolicyPack(json: String(decoding: file.bytes, as: UTF8.self), origin: "\(file.path) (built in)")
            guard !packs.contains(where: { $0.id == pack.id }) else {
                throw InvalidConfiguration(.policyPack, "\(file.path) (built in): the pack ID '\(pack.id)' is taken by another shipped pack")
            }
            packs.append(pack)
        }
        return packs
    }

    /// Every policy: the packs, then the ones written in Swift unless a pack took their ID.
    public var all: [any ProviderPolicy] {
        let spec = SpecPolicy()
        return packs.contains { $0.id == spec.id } ? packs : packs + [spec]
    }

    /// Every policy with its ID, name, version, platforms, model (`authenticator.model`: a passkey provider or a security
    /// key) and sources: `credemu providers` and `GET /providers`.
    public var json: JSONValue {
        .object([("directory", directory.map(JSONValue.string) ?? .null), ("providers", .array(all.map { policy in
            let sources: [(String, JSONValue)] = (policy as? PolicyPack)?.sources.map { ($0.0, .string($0.1)) }
                ?? [("spec", "W3C WebAuthn Level 3 editor's draft (built in, Swift)")]
            return .object([("id", .string(policy.id)), ("name", .string(policy.name)), ("version", .string(policy.version)),
                            ("platforms", .array(policy.platforms.map { .string($0.rawValue) })),
                            ("model", .string(policy.knobs(for: policy.platforms.first ?? .chromeDesktop).model.rawValue)),
                            ("sources", .object(sources)),
                            ("origin", .string(origins[policy.id] ?? "built-in"))])
        }))])
    }

    /// The providers a run plays: "all" (every policy on its platform in `platforms`, else its default), or a list
    /// such as "gpm,apple@ios,webauthn-spec".
    public func select(_ text: String, platforms: [String: Platform]) throws(InvalidConfiguration) -> [(any ProviderPolicy, Platform)] {
        func platform(_ policy: any ProviderPolicy) -> Platform {
            platforms[policy.id] ?? (policy as? PolicyPack)?.defaultPlatform ?? .chromeDesktop
        }
        // "all" is every passkey provider: a security key is an authenticator a scenario plugs in, not a column.
        if text == "all" {
            return all.filter { $0.knobs(for: platform($0)).model == .passkeyProvider }.map { ($0, platform($0)) }
        }
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
}
