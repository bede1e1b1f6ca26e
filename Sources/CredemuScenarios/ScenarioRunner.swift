import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// Runs a scenario against one provider on one platform, in a vault of its own with a virtual clock. A scenario with
/// `accounts` and `devices` gives each account a profile (the column's pack, or the one it names) and runs a step
/// `on` a device through a `DeviceSession`, as the device's platform routes it.
public final class ScenarioRunner {
    let scenario: Scenario
    let clock: AdjustableClock
    let policy: any ProviderPolicy
    let vault: Vault
    /// Account label to its profile and policy; one account, `scenario`, when the scenario declares none.
    var accounts: [String: (profile: Profile, policy: any ProviderPolicy)] = [:]
    var accountOrder: [String] = []
    /// The devices this column has, and why the others are absent.
    var devices: [String: Device] = [:]
    var absent: [String: String] = [:]
    /// Accounts naming a pack the registry does not have: their steps fail, naming it.
    var missingPacks: [String: String] = [:]
    var engines: [String: Engine] = [:]
    /// Scenario label to credential ID, and back.
    var labels = CredentialLabels()
    /// The vault after the last step run: nothing changes it before the next one, whose "before" it is.
    var lastSnapshot: [String: PasskeyRecord]?

    public static let start = Date(timeIntervalSince1970: 1_795_953_600)  // 2026-11-29T10:00:00Z

    /// Moves the credentials of one engine's account (those of an RP ID) into another's at a time, and answers as
    /// `POST /vault/move` does: the operations layer's `Operations.move`, handed in, since this module sits below it.
    public typealias Mover = @Sendable (_ from: Engine, _ to: Engine, _ rpID: String, _ keepSource: Bool, _ at: Date) throws -> JSONValue
    /// The move a `move` step makes; nil: such a step is an error cell naming what is missing.
    var mover: Mover?
    /// Credentials a `move` step moved: a sign-in with one shows what the RP sees of the importer (BE/BS, counter).
    var moved = Set<[UInt8]>()

    /// - Parameter packs: the packs an account that names one plays (the registry's).
    public init(scenario: Scenario, policy: any ProviderPolicy, platform: Platform, vault: Vault, packs: [any ProviderPolicy] = [],
                mover: Mover? = nil) {
        self.mover = mover
        self.scenario = scenario
        self.policy = policy
        self.vault = vault
        clock = AdjustableClock(ScenarioRunner.start)
        guard !scenario.accounts.isEmpty else {
            accounts["scenario"] = (Profile(name: "scenario", pack: policy.id, platform: platform), policy)
            accountOrder = ["scenario"]
            return
        }
        for account in scenario.accounts {
            let chosen: any ProviderPolicy = account.pack.flatMap { id in packs.first { $0.id == id } } ?? policy
            if let id = account.pack, chosen.id != id { missingPacks[account.label] = id }
            let own = chosen.id == policy.id ? platform
                : scenario.platforms[chosen.id] ?? (chosen as? PolicyPack)?.defaultPlatform ?? chosen.platforms.first ?? platform
            var profile = Profile(name: account.label, pack: chosen.id, platform: own)
            for (key, value) in account.settings { try? profile.set(key, value) }
            accounts[account.label] = (profile, chosen)
            accountOrder.append(account.label)
        }
        for spec in scenario.devices {
            guard let devicePlatform = spec.platform(column: policy.id) else {
                absent[spec.label] = "the scenario gives \(spec.label) no platform for \(policy.id)"
                continue
            }
            var device = Device(name: spec.label, platform: devicePlatform)
            for (key, value) in spec.settings { try? device.set(key, value) }
            if let unmodelled = device.providers.first(where: { !(accounts[$0]?.policy.platforms.contains(devicePlatform) ?? false) }) {
                absent[spec.label] = "\(accounts[unmodelled]?.policy.id ?? unmodelled) does not model \(devicePlatform.rawValue)"
                continue
            }
            devices[spec.label] = device
        }
    }

    /// The profiles the scenario's accounts are, for findings.
    public var profileNames: [String] { accountOrder }

    /// The default account: the scenario's only one, or the first declared.
    var mainAccount: String { accountOrder[0] }

    /// The engine of an account, on its own platform or on a device (answering a desktop from it over hybrid when
    /// `overHybrid`), for its current settings (a setting step changes them).
    func engine(_ account: String, on device: Device? = nil, overHybrid: Bool = false) -> Engine {
        let (own, policy) = accounts[account]!
        var profile = device.map { own.on($0) } ?? own
        profile.overHybrid = overHybrid
        let key = account + "@" + (device?.name ?? "") + (overHybrid ? "+hybrid" : "")
        if let cached = engines[key], cached.profile == profile { return cached }
        let engine = Engine(vault: vault.scoped(to: own.name), profile: profile, policy: policy, clock: clock)
        engines[key] = engine
        return engine
    }

    /// Who answers a ceremony of `account` on its own platform, or of `device`: the same `Answering` and browser's
    /// sheet (`Sheet.build`) the operations layer makes, over the column's accounts and devices.
    func answering(_ account: String, on device: Device?) throws(ScenarioRunner.Refusal) -> any Answering {
        guard let device else {
            let engine = engine(account)
            return SingleAccount(engine, sheet: try sheet(engine.profile, queue: engine.vault, device: nil))
        }
        return try session(device)
    }

    /// A device's session; over hybrid its accounts answer a desktop's sheet and its own sheet is not used.
    func session(_ device: Device, overHybrid: Bool = false) throws(ScenarioRunner.Refusal) -> DeviceSession {
        let engines = device.providers.map { engine($0, on: device, overHybrid: overHybrid) }
        let queue = vault.scoped(to: "device:" + device.name)
        return DeviceSession(device: device, engines: engines, sheet: overHybrid ? Sheet(queue: queue) : try sheet(device.state, queue: queue, device: device))
    }

    func sheet(_ state: Profile, queue: Vault, device: Device?) throws(ScenarioRunner.Refusal) -> Sheet {
        // The sheet's look-ups run while this runner steps; nothing runs them on another thread.
        nonisolated(unsafe) let runner = self
        return try Sheet.build(for: state, queue: queue, here: device?.name, key: { (name) throws(ScenarioRunner.Refusal) in
            guard accounts[name] != nil else { throw Refusal(message: "no account '\(name)' to plug in") }
            if let missing = missingPacks[name] { throw Refusal(message: "account \(name): no pack '\(missing)'") }
            return engine(name, on: device)
        }, notAKey: { Refusal(message: Sheet.notAKeyMessage($0, $1)) }, device: { runner.devices[$0] }, hybrid: { (phone) throws(Refusal) in
            try runner.session(phone, overHybrid: true)
        })
    }

    /// The step runs this scenario makes in one column: each step's `times`, summed.
    public var stepRuns: Int { scenario.steps.reduce(0) { $0 + $1.times } }

    /// Runs every step; `cancellation` is checked before each step run, so a run ends within one of them.
    public func run(cancellation: Cancellation = .never) throws(Cancellation.Stopped) -> [Cell] {
        var rows: [Cell] = []
        var completed = 0
        for step in scenario.steps {
            var cells: [Cell] = []
            for _ in 0..<step.times {
                if let reason = cancellation.reason() { throw Cancellation.Stopped(reason: reason, completed: completed, total: stepRuns) }
                cells.append(run(step))
                completed += 1
            }
            rows.append(cells.count == 1 ? cells[0] : summarize(cells))
        }
        return rows
    }

    /// Every account's passkeys by scenario label; with several accounts a label reads `pk1@account`.
    func snapshot() -> [String: PasskeyRecord] {
        var out: [String: PasskeyRecord] = [:]
        for account in accountOrder {
            for record in (try? vault.scoped(to: accounts[account]!.profile.name).allPasskeys()) ?? [] {
                out[labels.name(for: record.credentialID) + (accountOrder.count > 1 ? "@" + account : "")] = record
            }
        }
        return out
    }

    func run(_ step: Scenario.Step) -> Cell {
        let before = lastSnapshot ?? snapshot()
        var cell = perform(step)
        let after = snapshot()
        lastSnapshot = after
        cell.vault = vaultChange(before, after)
        cell.unexpected = check(cell, against: step)
        return cell
    }
}
