import CredemuEngine
import Foundation
import Vault
import WebAuthn

/// Everything credemu does on request, once: the CLI and the server are thin adapters over this layer, so a
/// rule (the profile name rule, an origin check, a range check on the clock) lives in one place.
///
/// One instance owns a vault handle, the policy registry and the clock; it keeps an engine per (profile,
/// platform) so parsed keys stay in memory while the server runs.
public final class Operations: @unchecked Sendable {
    /// The vault, not scoped to a profile; operations scope it themselves.
    public let vault: Vault
    public let registry: PolicyRegistry
    /// Shared by every profile: `clock set` moves time for all of them at once.
    public let clock: AdjustableClock
    /// Ceremonies a test asked to hold (the server's; a CLI process ends before any hold could matter).
    public let holds = HoldBoard()
    /// Ceremonies in flight, for aborts and conditional gets' dropdowns.
    public let ceremonies = CeremonyBoard()
    /// Forged answers a test armed (`forge-next`, a WebDriver key's override bits).
    public let forgeries = ForgeryBoard()
    /// Ceremonies in flight by target, so a removal ends them (`TargetLeases`).
    let leases = TargetLeases()
    /// Set by `endWaits`: every wait and scenario run ends, and none begins.
    public let stopping = StopSignal()
    /// Scenario runs going on now (at most `maxConcurrentScenarioRuns`).
    var scenarioRuns = 0
    let scenarioRunsLock = NSLock()
    /// A conditional get waits for the simulated user's pick from its dropdown (the server); when false (the
    /// CLI, one process per call) it answers at once with the queued decision or the most recent passkey.
    public var conditionalGetsWait = false

    private let cacheLock = NSLock()
    /// A cached engine's key: the profile, the platform it runs on, and the device it runs on, if any.
    struct EngineKey: Hashable {
        var profile: String
        var platform: Platform
        var device: String?
        /// Answering a desktop from the device, over hybrid (`Profile.overHybrid`).
        var overHybrid = false
    }

    private var engines: [EngineKey: Engine] = [:]
    /// Profiles as last read, valid while no other process has written to the vault (`PRAGMA data_version`).
    private var profiles: [String: Profile] = [:]
    private var profilesVersion: Int64 = -1

    /// Opens the layer over `vault`; the clock carries over from the vault (a virtual time set by one front
    /// end holds for the other).
    public init(vault: Vault, registry: PolicyRegistry) throws(OperationError) {
        self.vault = vault
        self.registry = registry
        clock = AdjustableClock(virtual: try Operations.stored { () throws(VaultError) in try vault.storedClockTime() })
    }

    /// Ends everything that waits (held ceremonies are cancelled, waiting conditional gets aborted, scenario runs
    /// stopped at their next step), so a stopping server can answer every request before it closes.
    public func endWaits() {
        stopping.set()
        holds.releaseAll()
        ceremonies.abortAll()
    }

    /// What ends a wait or a run for a caller: its client going, this layer stopping, and the removal of what its
    /// lease is on.
    func cancellation(clientGone: @escaping @Sendable () -> Bool, lease: TargetLeases.Lease? = nil) -> Cancellation {
        Cancellation(clientGone: clientGone, stopping: stopping, removed: lease?.removed)
    }

    /// Runs a vault call, mapping its failure to an operation error.
    static func stored<T>(_ body: () throws(VaultError) -> T) throws(OperationError) -> T {
        do {
            return try body()
        } catch {
            throw .vault(error)
        }
    }

    func stored<T>(_ body: () throws(VaultError) -> T) throws(OperationError) -> T { try Operations.stored(body) }

    /// Runs an engine call; a failure becomes the ceremony's error with every dialect.
    func run<T>(_ engine: Engine, _ operation: Dialect.Operation, _ body: () throws(CeremonyError) -> T) throws(OperationError) -> T {
        do {
            return try body()
        } catch {
            throw .ceremony(error, operation, engine)
        }
    }

    // MARK: Profiles and engines

    /// A profile by name; `default` (GPM on Chrome desktop) is created on first use.
    public func profile(_ name: String) throws(OperationError) -> Profile {
        let version = try stored { () throws(VaultError) in try vault.dataVersion() }
        cacheLock.lock()
        if version != profilesVersion {
            profiles = [:]
            profilesVersion = version
        }
        let cached = profiles[name]
        cacheLock.unlock()
        if let cached { return cached }
        let profile: Profile
        if let settings = try stored({ () throws(VaultError) in try vault.profileSettings(name) }) {
            do {
                profile = try Profile(name: name, json: settings)
            } catch {
                throw OperationError(.configuration, .configuration(error.kind), "The stored settings of profile '\(name)' are unreadable: \(error.message)")
            }
        } else if name == Vault.defaultProfile {
            profile = Profile(name: name)
            try stored { () throws(VaultError) in try vault.saveProfile(name, settings: profile.json, at: clock.now()) }
        } else {
            throw .notFound("No profile '\(name)'; create it with 'credemu profile create \(name) --pack ID' or POST /profiles.")
        }
        cacheLock.lock()
        if version == profilesVersion { profiles[name] = profile }
        cacheLock.unlock()
        return profile
    }

    /// The policy a profile plays; a missing or malformed pack is a configuration error.
    func policy(for profile: Profile) throws(OperationError) -> any ProviderPolicy {
        do {
            return try registry.policy(for: profile)
        } catch {
            throw .configuration(error)
        }
    }

    /// A platform name the policy models; anything else is refused, never silently mapped to another.
    func platform(_ text: String, for policy: any ProviderPolicy) throws(OperationError) -> Platform {
        guard let platform = Platform(rawValue: text) else {
            throw .invalidInput("'\(text)' is not a platform: \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        guard policy.platforms.contains(platform) else {
            throw .invalidInput("The pack '\(policy.id)' does not model the platform '\(text)'; it models \(policy.platforms.map(\.rawValue).joined(separator: ", ")).")
        }
        return platform
    }

    /// The engine of a profile, on its own platform or another its pack models, cached between calls.
    public func engine(_ name: String, platform: String? = nil) throws(OperationError) -> Engine {
        var profile = try profile(name)
        if let platform, let p = Platform(rawValue: platform) { profile.platform = p }
        return try cachedEngine(EngineKey(profile: name, platform: profile.platform), profile) { () throws(OperationError) in
            let policy = try policy(for: profile)
            // A platform the pack does not model is refused here, so a cached engine was made for one it models.
            if let platform { _ = try self.platform(platform, for: policy) }
            return policy
        }
    }

    /// The engine of a profile running on a device (`Profile.on(_:)`), cached per (profile, device).
    func engine(_ name: String, on device: Device, overHybrid: Bool = false) throws(OperationError) -> Engine {
        var profile = try profile(name).on(device)
        profile.overHybrid = overHybrid
        return try cachedEngine(EngineKey(profile: name, platform: device.platform, device: device.name, overHybrid: overHybrid), profile) { () throws(OperationError) in
            let policy = try policy(for: profile)
            guard policy.platforms.contains(device.platform) else {
                throw .invalidInput("The profile '\(name)' of device \(device.name) plays the pack '\(policy.id)', which does not model the platform '\(device.platform.rawValue)'.")
            }
            return policy
        }
    }

    /// The engine cached under `key` while it was made for `profile` as it is now; on a miss, one made with the
    /// policy `policy` looks up (only then: packs are resolved once per settings change).
    func cachedEngine(_ key: EngineKey, _ profile: Profile,
                              policy: () throws(OperationError) -> any ProviderPolicy) throws(OperationError) -> Engine {
        cacheLock.lock()
        let cached = engines[key]
        cacheLock.unlock()
        if let cached, cached.profile == profile { return cached }
        let engine = Engine(vault: vault.scoped(to: profile.name), profile: profile, policy: try policy(), clock: clock)
        cacheLock.lock()
        engines[key] = engine
        cacheLock.unlock()
        return engine
    }

    /// How many engines are cached (tests: a removed profile's go with it).
    var cachedEngineCount: Int {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        return engines.count
    }

    /// Drops the engines cached for a device after its settings changed.
    func forgetDevice(_ name: String) {
        cacheLock.lock()
        engines = engines.filter { $0.key.device != name }
        cacheLock.unlock()
    }

    /// Drops every cached engine and profile (a fixture import may have changed any).
    func forgetAll() {
        cacheLock.lock()
        engines = [:]
        profiles = [:]
        cacheLock.unlock()
    }

    /// Drops what is cached for a profile after its settings or credentials changed.
    func forget(_ name: String) {
        cacheLock.lock()
        engines = engines.filter { $0.key.profile != name }
        profiles[name] = nil
        cacheLock.unlock()
    }

    /// Logs an event for a profile; the log never makes an operation fail.
    func log(_ name: String, _ kind: String, _ outcome: String, _ detail: [(String, JSONValue)]) {
        _ = try? vault.scoped(to: name).appendEvent(kind: kind, outcome: outcome, reason: "success", detail: .object(detail), at: clock.now())
    }

    /// Refuses a caller restricted to one origin (a page, by its `Origin` header) acting for another.
    static func checkSpeaksFor(_ origin: String, restrictedTo allowed: String?) throws(OperationError) {
        try PageView(allowed).checkActsFor(origin)
    }
}
