import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// One step's result for one provider, in the RP's terms; deterministic (credentials are named by their
/// scenario labels, never by random IDs) so matrices can be compared with expected ones.
public struct Cell: Equatable, Sendable {
    /// created, noop, error, signedIn, resolved, filled, saved, ok.
    public var outcome: String
    public var summary: String
    public var reason: String?
    public var error: String?
    /// What the RP's code sees on the provider's platform (exception class or ASAuthorizationError).
    public var dialect: String?
    /// What changed in the vault.
    public var vault: String
    /// The pack knob that decided the outcome, with its value and source.
    public var knob: String?
    /// Expectation not met, when the step states one.
    public var unexpected: String?
    /// What the user saw of a ceremony: "none", the provider's "sheet", or a "notice" after a silent create.
    public var ui: String?
    /// The authenticator data's user-presence and user-verification bits the RP reads ("UP=1 UV=0").
    public var flags: String?
    /// On a device: the provider account that answered (for a signal, those it reached).
    public var provider: String?

    /// "UI: none · UP=0 UV=0": what the user saw and the RP reads, for the renderings.
    public var observed: String? {
        let parts = [provider.map { "provider: \($0)" }, ui.map { "UI: \($0)" }, flags].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    public init(outcome: String, summary: String, reason: String? = nil, error: String? = nil, dialect: String? = nil, vault: String,
                knob: String? = nil, unexpected: String? = nil, ui: String? = nil, flags: String? = nil) {
        self.outcome = outcome
        self.summary = summary
        self.reason = reason
        self.error = error
        self.dialect = dialect
        self.vault = vault
        self.knob = knob
        self.unexpected = unexpected
        self.ui = ui
        self.flags = flags
    }

    /// What the RP and the user observe of a step, whatever the platform: the outcome and why, the error, the vault,
    /// whether a UI was shown and the flags. Rows whose keys differ across providers diverge; so do rows whose
    /// `dialect` differs between columns on platforms of one kind (`DivergenceMatrix.diverges`).
    var key: String { [outcome, reason ?? "", error ?? "", vault, ui ?? "", flags ?? "", provider ?? ""].joined(separator: "|") }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("outcome", .string(outcome)), ("summary", .string(summary))]
        if let reason { members.append(("reason", .string(reason))) }
        if let error { members.append(("error", .string(error))) }
        if let dialect { members.append(("dialect", .string(dialect))) }
        if let ui { members.append(("ui", .string(ui))) }
        if let flags { members.append(("flags", .string(flags))) }
        if let provider { members.append(("provider", .string(provider))) }
        members.append(("vault", .string(vault)))
        if let knob { members.append(("knob", .string(knob))) }
        if let unexpected { members.append(("unexpected", .string(unexpected))) }
        return .object(members)
    }
}

/// Runs a scenario against one provider on one platform, in a vault of its own with a virtual clock. A scenario with
/// `accounts` and `devices` gives each account a profile (the column's pack, or the one it names) and runs a step
/// `on` a device through a `DeviceSession`, as the device's platform routes it.
public final class ScenarioRunner {
    let scenario: Scenario
    let clock: AdjustableClock
    private let policy: any ProviderPolicy
    private let vault: Vault
    /// Account label to its profile and policy; one account, `scenario`, when the scenario declares none.
    private var accounts: [String: (profile: Profile, policy: any ProviderPolicy)] = [:]
    private var accountOrder: [String] = []
    /// The devices this column has, and why the others are absent.
    private var devices: [String: Device] = [:]
    private var absent: [String: String] = [:]
    /// Accounts naming a pack the registry does not have: their steps fail, naming it.
    private var missingPacks: [String: String] = [:]
    private var engines: [String: Engine] = [:]
    /// Scenario label to credential ID, and back.
    private var labels: [String: [UInt8]] = [:]
    private var names: [[UInt8]: String] = [:]
    /// The vault after the last step run: nothing changes it before the next one, whose "before" it is.
    private var lastSnapshot: [String: PasskeyRecord]?
    private var counter = 0

    public static let start = Date(timeIntervalSince1970: 1_795_953_600)  // 2026-11-29T10:00:00Z

    /// - Parameter packs: the packs an account that names one plays (the registry's).
    public init(scenario: Scenario, policy: any ProviderPolicy, platform: Platform, vault: Vault, packs: [any ProviderPolicy] = []) {
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
    private var mainAccount: String { accountOrder[0] }

    /// The engine of an account, on its own platform or on a device, for its current settings (a setting step changes them).
    private func engine(_ account: String, on device: Device? = nil) -> Engine {
        let (own, policy) = accounts[account]!
        let profile = device.map { own.on($0) } ?? own
        let key = account + "@" + (device?.name ?? "")
        if let cached = engines[key], cached.profile == profile { return cached }
        let engine = Engine(vault: vault.scoped(to: own.name), profile: profile, policy: policy, clock: clock)
        engines[key] = engine
        return engine
    }

    private func session(_ device: Device) -> DeviceSession {
        DeviceSession(device: device, engines: device.providers.map { engine($0, on: device) })
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

    private func summarize(_ cells: [Cell]) -> Cell {
        var counts: [(String, Int)] = []
        for cell in cells {
            let key = cell.reason.map { "\(cell.outcome) (\($0))" } ?? cell.outcome
            if let i = counts.firstIndex(where: { $0.0 == key }) { counts[i].1 += 1 } else { counts.append((key, 1)) }
        }
        var summary = cells[0]
        summary.summary = counts.map { "\($0.1)× \($0.0)" }.joined(separator: ", ")
        summary.outcome = counts.map { "\($0.1)×\($0.0)" }.joined(separator: ",")
        summary.reason = nil
        summary.error = cells.compactMap(\.error).last
        summary.dialect = cells.compactMap(\.dialect).last
        summary.vault = Set(cells.map(\.vault)).count == 1 ? cells[0].vault
            : cells.map(\.vault).filter { $0 != "no change" }.joined(separator: "; ")
        summary.knob = cells.compactMap(\.knob).last
        summary.ui = Set(cells.compactMap(\.ui)).sorted().joined(separator: "/").nilIfEmpty
        summary.flags = Set(cells.compactMap(\.flags)).sorted().joined(separator: "/").nilIfEmpty
        summary.provider = Set(cells.compactMap(\.provider)).sorted().joined(separator: "/").nilIfEmpty
        summary.unexpected = cells.compactMap(\.unexpected).first
        return summary
    }

    /// Every account's passkeys by scenario label; with several accounts a label reads `pk1@account`.
    private func snapshot() -> [String: PasskeyRecord] {
        var out: [String: PasskeyRecord] = [:]
        for account in accountOrder {
            for record in (try? vault.scoped(to: accounts[account]!.profile.name).allPasskeys()) ?? [] {
                out[label(for: record.credentialID) + (accountOrder.count > 1 ? "@" + account : "")] = record
            }
        }
        return out
    }

    private func label(for id: [UInt8]) -> String {
        if let existing = names[id] { return existing }
        counter += 1
        let name = "pk\(counter)"
        assign(name, to: id)
        return name
    }

    /// Names a credential `label`; a credential the label named before loses it.
    private func assign(_ label: String, to id: [UInt8]) {
        if let previous = labels[label], previous != id { names[previous] = nil }
        if let old = names[id], old != label { labels[old] = nil }
        labels[label] = id
        names[id] = label
    }

    private func vaultChange(_ before: [String: PasskeyRecord], _ after: [String: PasskeyRecord]) -> String {
        var changes: [String] = []
        for name in after.keys.sorted() where before[name] == nil { changes.append("+\(name)" + (after[name]!.hidden ? " (hidden)" : "")) }
        for name in before.keys.sorted() where after[name] == nil { changes.append("\(name) deleted") }
        for name in before.keys.sorted() {
            guard let old = before[name], let new = after[name] else { continue }
            if !old.hidden && new.hidden { changes.append("\(name) hidden") }
            if old.hidden && !new.hidden { changes.append("\(name) restored") }
            if old.userName != new.userName { changes.append("\(name) renamed") }
            if old.displayName != new.displayName { changes.append("\(name) display name changed") }
        }
        return changes.isEmpty ? "no change" : changes.joined(separator: ", ")
    }

    private func run(_ step: Scenario.Step) -> Cell {
        let before = lastSnapshot ?? snapshot()
        var cell = perform(step)
        let after = snapshot()
        lastSnapshot = after
        cell.vault = vaultChange(before, after)
        cell.unexpected = check(cell, against: step)
        return cell
    }

    private func check(_ cell: Cell, against step: Scenario.Step) -> String? {
        guard let expected = step.expect.first(where: { $0.0 == policy.id })?.1 ?? step.expect.first(where: { $0.0 == "*" })?.1 else {
            return nil
        }
        for (key, value) in expected.objectValue ?? [] {
            let actual = cell.json[key]?.stringValue
            if actual != value.stringValue { return "expected \(key) \(value.serialized()), got \(actual.map { "\"\($0)\"" } ?? "none")" }
        }
        return nil
    }

    private func caller() -> Caller {
        (try? Caller(origin: scenario.origin)) ?? Caller(origin: .web(scheme: "https", host: scenario.rpID, port: nil))
    }

    private func ok(_ outcome: String, _ summary: String, knob: String? = nil) -> Cell {
        Cell(outcome: outcome, summary: summary, vault: "", knob: knob)
    }

    /// What the user saw of a failed ceremony: nothing for a silent no-op, an automatic upgrade's error or a
    /// request the client refuses before asking the provider (a TypeError, SecurityError, NotSupportedError or
    /// SyntaxError); the provider's sheet otherwise.
    private func userInterface(_ failure: CeremonyError, conditional: Bool, engine: Engine) -> String {
        if failure.silent || (conditional && engine.knobs.conditionalMode != .modal) { return "none" }
        let beforeUI: Set<WebAuthnError.Name> = [.typeError, .securityError, .notSupportedError, .syntaxError]
        return beforeUI.contains(failure.error.name) ? "none" : "sheet"
    }

    private func failed(_ failure: CeremonyError, _ operation: Dialect.Operation, engine: Engine, signalKind: String,
                        conditional: Bool = false) -> Cell {
        let rendered = Dialect.render(failure, operation: operation, knobs: engine.knobs, osVersion: engine.profile.osVersion)
        let dialect: String
        switch engine.profile.platform.dialect {
        case .web: dialect = failure.error.name.rawValue
        case .android: dialect = rendered["android"]?["exception"]?.stringValue?.split(separator: ".").last.map(String.init) ?? ""
        case .apple: dialect = "ASAuthorizationError \(Int(rendered["apple"]?["code"]?.numberValue ?? 0)) \(rendered["apple"]?["name"]?.stringValue ?? "")"
        }
        let what = failure.silent ? "silent no-op" : failure.error.name.rawValue
        return Cell(outcome: failure.silent ? "noop" : "error", summary: "\(what): \(failure.reason)", reason: failure.reason.rawValue,
                    error: failure.error.name.rawValue, dialect: dialect, vault: "", knob: knob(for: failure.reason, engine: engine, signalKind: signalKind),
                    ui: operation == .signal ? nil : userInterface(failure, conditional: conditional, engine: engine))
    }

    /// The knob that decides an outcome with this reason, cited with its value and source.
    private func knob(for reason: Reason, engine: Engine, signalKind: String) -> String? {
        let k = engine.knobs
        switch reason {
        case .noRecentlyUsedPassword: return k.cite("conditionalCreate.windowSeconds", "\(k.windowSeconds)")
        case .noMatchingPassword: return k.cite("conditionalCreate.matchUsername", "\(k.matchUsername)")
        case .passkeyExists: return k.cite("conditionalCreate.rejectIfPasskeyExists", "\(k.rejectIfPasskeyExists)")
        case .conditionalCreateUnsupported: return k.cite("conditionalCreate.mode", k.conditionalMode.rawValue)
        case .noDevicePasscode: return k.cite("conditionalCreate.requirePasscode", "\(k.requirePasscode)")
        case .excludedCredential, .noAnswerUntilTimeout: return k.cite("exclusion.outcome", k.exclusionOutcome.rawValue)
        case .rateLimited: return k.cite(PolicyKnobs.rateLimitKnob(signalKind), "\(k.rateLimit(for: signalKind))")
        case .optOut: return "profile setting automaticPasskeyUpgrades = false (the user's opt-out)"
        default: return nil
        }
    }

    private func perform(_ step: Scenario.Step) -> Cell {
        let a = step.arguments
        if let on = a["on"]?.stringValue, devices[on] == nil {
            return Cell(outcome: "n/a", summary: "no \(on) here: \(absent[on] ?? "absent")", vault: "")
        }
        let account = a["account"]?.stringValue ?? mainAccount
        if let missing = missingPacks[account] { return Cell(outcome: "error", summary: "account \(account): no pack '\(missing)'", vault: "") }
        let device = a["on"]?.stringValue.flatMap { devices[$0] }
        var acting = engine(account)
        let user = a["user"]?.stringValue ?? scenario.userName
        do {
            switch step.action {
            case "savePassword":
                let savedIn = a["savedIn"]?.stringValue
                try acting.savePassword(origin: scenario.origin, username: user, password: a["password"]?.stringValue ?? "hunter2", savedIn: savedIn)
                return ok("saved", "password saved for \(user)" + (savedIn.map { " in \($0)" } ?? "") + inAccount(account))
            case "autofill":
                let submit = a["submit"]?.boolValue ?? true
                _ = try acting.autofill(origin: scenario.origin, username: a["user"]?.stringValue, submit: submit)
                return ok("filled", (submit ? "password filled and submitted" : "password filled") + inAccount(account))
            case "usePassword":
                try acting.markPasswordUsed(origin: scenario.origin, username: user)
                return ok("ok", "password typed and submitted" + inAccount(account))
            case "advance":
                let seconds = a["by"]?.numberValue ?? a["by"]?.stringValue.flatMap(parseDuration) ?? 0
                clock.advance(by: seconds)
                return ok("ok", "clock +\(a["by"]?.stringValue ?? "\(Int(saturating: seconds))s")")
            case "setting":
                var changed: [String] = []
                if let on = device?.name {
                    for (key, value) in a.objectValue ?? [] where Device.settingNames.contains(key) {
                        try devices[on]!.set(key, value)
                        changed.append("\(key) = \(value.serialized())")
                    }
                    try devices[on]!.checked()
                    return ok("ok", "\(on): " + changed.joined(separator: ", "))
                }
                for (key, value) in a.objectValue ?? [] where Profile.settingNames.contains(key) {
                    try accounts[account]!.profile.set(key, value)
                    changed.append("\(key) = \(value.serialized())")
                }
                return ok("ok", changed.joined(separator: ", ") + inAccount(account))
            case "user":
                for text in a["decisions"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                    if let decision = UserDecision(text) { try acting.queue(decision) }
                }
                return ok("ok", "user will: " + (a["decisions"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""))
            case "rp":
                return ok("—", a["note"]?.stringValue ?? "RP-side step")
            case "create":
                if let device {
                    acting = try session(device).createEngine().engine
                }
                return try create(a, user: user, engine: acting, routed: device != nil)
            case "get":
                let options = try getOptions(a)
                if let device {
                    acting = try session(device).getEngine(options, caller: caller(), pick: nil)
                }
                return try get(options, engine: acting, routed: device != nil)
            case "signal":
                if let device {
                    let session = session(device)
                    acting = try session.pageEngine()
                    return try signal(a, session: session)
                }
                return try signal(a, engine: acting)
            case "removePasskey":
                guard let label = a["credential"]?.stringValue, let id = labels[label] else { return ok("ok", "nothing to remove") }
                _ = try vault.scoped(to: accounts[account]!.profile.name).removePasskey(credentialID: id)
                return ok("ok", "the user deleted \(label) in the provider" + inAccount(account))
            default:
                return ok("error", "unknown step")
            }
        } catch let failure as CeremonyError {
            let operation: Dialect.Operation = step.action == "get" ? .get : step.action == "signal" ? .signal : .create
            var cell = failed(failure, operation, engine: acting, signalKind: a["kind"]?.stringValue ?? "unknown",
                              conditional: step.action == "create" && a["mediation"]?.stringValue == "conditional")
            if device != nil, operation != .signal { cell.provider = acting.profile.name }
            return cell
        } catch {
            return Cell(outcome: "error", summary: "\(error)", vault: "")
        }
    }

    /// " in ACCOUNT" when the scenario has several accounts.
    private func inAccount(_ account: String) -> String { accountOrder.count > 1 ? " in \(account)" : "" }

    private func create(_ a: JSONValue, user: String, engine: Engine, routed: Bool) throws -> Cell {
        let conditional = a["mediation"]?.stringValue == "conditional"
        var exclude: [[UInt8]] = []
        if a["exclude"]?.stringValue == "known" {
            exclude = snapshot().filter { $0.value.userName == user }.map(\.value.credentialID)
        } else {
            exclude = (a["exclude"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { labels[$0] } }
        }
        var members: [(String, JSONValue)] = [
            ("rp", .object([("id", .string(scenario.rpID)), ("name", "Scenario RP")])),
            ("user", .object([("id", .string(Base64URL.encode(Array((a["userId"]?.stringValue ?? user).utf8)))), ("name", .string(user)),
                              ("displayName", .string(scenario.displayName))])),
            ("challenge", .string(Base64URL.encode([UInt8](repeating: 7, count: 32)))),
            ("pubKeyCredParams", .array([.object([("type", "public-key"), ("alg", -7)]), .object([("type", "public-key"), ("alg", -257)])])),
            ("excludeCredentials", .array(exclude.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
            ("authenticatorSelection", .object([("residentKey", "required"), ("userVerification", .string(a["userVerification"]?.stringValue ?? "preferred"))])),
        ]
        members.append(("attestation", "none"))
        let document: JSONValue = conditional ? .object([("publicKey", .object(members)), ("mediation", "conditional")]) : .object(members)
        let options = try CreationOptions(document: document)
        let response = try engine.create(options, caller: caller())
        let name = label(for: response.credentialID)
        if let wanted = a["as"]?.stringValue, wanted != name {
            assign(wanted, to: response.credentialID)
            counter -= 1
        }
        let shown = a["as"]?.stringValue ?? name
        let flags = try AuthenticatorData(bytes: response.authenticatorData).flags
        let bits = "UP=\(flags.contains(.userPresent) ? 1 : 0) UV=\(flags.contains(.userVerified) ? 1 : 0)"
        let silent = conditional && engine.knobs.conditionalMode == .silent
        let how = silent ? "silently" : "with the provider's sheet"
        let knob = conditional
            ? engine.knobs.cite("conditionalCreate.mode", engine.knobs.conditionalMode.rawValue)
            : engine.knobs.cite("authenticator.userVerification", engine.knobs.userVerification.rawValue)
        var cell = ok("created", "created \(shown) \(how) (\(bits))" + (routed ? " in \(engine.profile.name)" : ""), knob: knob)
        cell.ui = silent ? (engine.knobs.notification.isEmpty ? "none" : "notice") : "sheet"
        cell.flags = bits
        if routed { cell.provider = engine.profile.name }
        return cell
    }

    private func getOptions(_ a: JSONValue) throws -> RequestOptions {
        let allow = (a["allow"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { labels[$0] } }
        return try RequestOptions(document: .object([
            ("challenge", .string(Base64URL.encode([UInt8](repeating: 9, count: 32)))), ("rpId", .string(scenario.rpID)),
            ("allowCredentials", .array(allow.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
        ]))
    }

    private func get(_ options: RequestOptions, engine: Engine, routed: Bool) throws -> Cell {
        let response = try engine.get(options, caller: caller())
        let flags = try AuthenticatorData(bytes: response.authenticatorData).flags
        var cell = ok("signedIn", "signed in with \(label(for: response.credentialID))" + (routed ? " from \(engine.profile.name)" : ""))
        cell.ui = "sheet"
        cell.flags = "UP=\(flags.contains(.userPresent) ? 1 : 0) UV=\(flags.contains(.userVerified) ? 1 : 0)"
        if routed { cell.provider = engine.profile.name }
        return cell
    }

    private func signalRequest(_ a: JSONValue) -> (request: SignalRequest, knob: String) {
        let kind = a["kind"]?.stringValue ?? "unknown"
        let userID = Base64URL.encode(Array((a["userId"]?.stringValue ?? scenario.userName).utf8))
        switch kind {
        case "accepted":
            let ids = (a["accepted"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { labels[$0] } }.map { Base64URL.encode($0) }
            return (.allAcceptedCredentials(rpId: scenario.rpID, userId: userID, allAcceptedCredentialIds: ids), "signals.allAcceptedCredentials")
        case "details":
            return (.currentUserDetails(rpId: scenario.rpID, userId: userID, name: a["name"]?.stringValue ?? scenario.userName,
                                        displayName: a["displayName"]?.stringValue ?? scenario.displayName), "signals.currentUserDetails")
        default:
            let id = a["credential"]?.stringValue.flatMap { labels[$0] } ?? [UInt8](repeating: 1, count: 16)
            return (.unknownCredential(rpId: scenario.rpID, credentialId: Base64URL.encode(id)), "signals.unknownCredential")
        }
    }

    /// What one provider did with a signal: its log's outcome, and the knob that decided it.
    private func signalOutcome(_ engine: Engine, _ request: SignalRequest, knobName: String, after before: Int64) -> (outcome: String, knob: String) {
        let event = try? engine.vault.events(kind: "signal", after: before).last
        let outcome = event?.outcome ?? "resolved"
        let value: String
        switch knobName {
        case "signals.allAcceptedCredentials": value = engine.knobs.allAcceptedCredentials.rawValue
        case "signals.currentUserDetails": value = engine.knobs.currentUserDetails.rawValue
        default: value = engine.knobs.unknownCredential.rawValue
        }
        let knob = outcome == "dropped"
            ? engine.knobs.cite(PolicyKnobs.rateLimitKnob(request.kind), "\(engine.knobs.rateLimit(for: request.kind))") : engine.knobs.cite(knobName, value)
        return (outcome, knob)
    }

    private static let signalWords = ["applied": "acted", "noop": "had nothing to change", "ignored": "ignored it", "dropped": "dropped it (over quota)"]

    private func signal(_ a: JSONValue, engine: Engine) throws -> Cell {
        let (request, knobName) = signalRequest(a)
        let before: Int64 = (try? engine.vault.lastEventID(kind: "signal")) ?? 0
        try engine.signal(request, caller: caller())
        let (outcome, knob) = signalOutcome(engine, request, knobName: knobName, after: before)
        return Cell(outcome: "resolved", summary: "resolved; the provider \(ScenarioRunner.signalWords[outcome] ?? outcome)",
                    reason: outcome == "applied" ? nil : outcome, vault: "", knob: knob)
    }

    /// A signal on a device: each provider the platform sends it to, and what each did.
    private func signal(_ a: JSONValue, session: DeviceSession) throws -> Cell {
        let (request, knobName) = signalRequest(a)
        let before = session.engines.map { (try? $0.vault.lastEventID(kind: "signal")) ?? 0 }
        let reached = try session.signal(request, caller: caller())
        var parts: [String] = []
        var knobs: [String] = []
        var outcomes: [String] = []
        for (engine, mark) in zip(session.engines, before) where reached.contains(engine.profile.name) {
            let (outcome, knob) = signalOutcome(engine, request, knobName: knobName, after: mark)
            parts.append("\(engine.profile.name) \(ScenarioRunner.signalWords[outcome] ?? outcome)")
            knobs.append("\(engine.profile.name): \(knob)")
            outcomes.append(outcome)
        }
        let summary = reached.isEmpty ? "resolved; no provider on the device gets signals" : "resolved; " + parts.joined(separator: ", ")
        var cell = Cell(outcome: "resolved", summary: summary, reason: outcomes.allSatisfy { $0 == "applied" } && !outcomes.isEmpty ? nil : outcomes.joined(separator: ","),
                        vault: "", knob: knobs.joined(separator: "; ").nilIfEmpty)
        cell.provider = reached.isEmpty ? "none" : reached.joined(separator: ",")
        return cell
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
