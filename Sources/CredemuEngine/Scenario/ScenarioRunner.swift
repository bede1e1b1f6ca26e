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

    /// "UI: none · UP=0 UV=0": what the user saw and the RP reads, for the renderings.
    public var observed: String? {
        let parts = [ui.map { "UI: \($0)" }, flags].compactMap { $0 }
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
    var key: String { [outcome, reason ?? "", error ?? "", vault, ui ?? "", flags ?? ""].joined(separator: "|") }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("outcome", .string(outcome)), ("summary", .string(summary))]
        if let reason { members.append(("reason", .string(reason))) }
        if let error { members.append(("error", .string(error))) }
        if let dialect { members.append(("dialect", .string(dialect))) }
        if let ui { members.append(("ui", .string(ui))) }
        if let flags { members.append(("flags", .string(flags))) }
        members.append(("vault", .string(vault)))
        if let knob { members.append(("knob", .string(knob))) }
        if let unexpected { members.append(("unexpected", .string(unexpected))) }
        return .object(members)
    }
}

/// Runs a scenario against one provider on one platform, in a vault of its own with a virtual clock.
public final class ScenarioRunner {
    let scenario: Scenario
    let engine: Engine
    let clock: AdjustableClock
    private var profile: Profile
    private let policy: any ProviderPolicy
    private let vault: Vault
    /// Scenario label to credential ID, and back.
    private var labels: [String: [UInt8]] = [:]
    private var counter = 0

    public static let start = Date(timeIntervalSince1970: 1_795_953_600)  // 2026-11-29T10:00:00Z

    public init(scenario: Scenario, policy: any ProviderPolicy, platform: Platform, vault: Vault) {
        self.scenario = scenario
        self.policy = policy
        self.vault = vault
        clock = AdjustableClock(ScenarioRunner.start)
        profile = Profile(name: "scenario", pack: policy.id, platform: platform)
        engine = Engine(vault: vault, profile: profile, policy: policy, clock: clock)
    }

    /// The engine for the profile's current settings (a setting step changes them).
    private var current: Engine {
        profile == engine.profile ? engine : Engine(vault: vault, profile: profile, policy: policy, clock: clock)
    }

    public func run() -> [Cell] {
        scenario.steps.map { step in
            guard step.times > 1 else { return run(step) }
            let cells = (0..<step.times).map { _ in run(step) }
            return summarize(cells)
        }
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
        summary.unexpected = cells.compactMap(\.unexpected).first
        return summary
    }

    private func snapshot() -> [String: PasskeyRecord] {
        var out: [String: PasskeyRecord] = [:]
        for record in (try? vault.scoped(to: profile.name).allPasskeys()) ?? [] { out[label(for: record.credentialID)] = record }
        return out
    }

    private func label(for id: [UInt8]) -> String {
        if let existing = labels.first(where: { $0.value == id })?.key { return existing }
        counter += 1
        let name = "pk\(counter)"
        labels[name] = id
        return name
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
        let before = snapshot()
        var cell = perform(step)
        cell.vault = vaultChange(before, snapshot())
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
        let engine = current
        let user = a["user"]?.stringValue ?? scenario.userName
        do {
            switch step.action {
            case "savePassword":
                let savedIn = a["savedIn"]?.stringValue
                try engine.savePassword(origin: scenario.origin, username: user, password: a["password"]?.stringValue ?? "hunter2", savedIn: savedIn)
                return ok("saved", "password saved for \(user)" + (savedIn.map { " in \($0)" } ?? ""))
            case "autofill":
                let submit = a["submit"]?.boolValue ?? true
                _ = try engine.autofill(origin: scenario.origin, username: a["user"]?.stringValue, submit: submit)
                return ok("filled", submit ? "password filled and submitted" : "password filled")
            case "usePassword":
                try engine.markPasswordUsed(origin: scenario.origin, username: user)
                return ok("ok", "password typed and submitted")
            case "advance":
                let seconds = a["by"]?.numberValue ?? a["by"]?.stringValue.flatMap(parseDuration) ?? 0
                clock.advance(by: seconds)
                return ok("ok", "clock +\(a["by"]?.stringValue ?? "\(Int(saturating: seconds))s")")
            case "setting":
                var changed: [String] = []
                for (key, value) in a.objectValue ?? [] where Profile.settingNames.contains(key) {
                    try profile.set(key, value)
                    changed.append("\(key) = \(value.serialized())")
                }
                return ok("ok", changed.joined(separator: ", "))
            case "user":
                for text in a["decisions"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                    if let decision = UserDecision(text) { try engine.queue(decision) }
                }
                return ok("ok", "user will: " + (a["decisions"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""))
            case "rp":
                return ok("—", a["note"]?.stringValue ?? "RP-side step")
            case "create":
                return try create(a, user: user, engine: engine)
            case "get":
                return try get(a, engine: engine)
            case "signal":
                return try signal(a, engine: engine)
            case "removePasskey":
                guard let label = a["credential"]?.stringValue, let id = labels[label] else { return ok("ok", "nothing to remove") }
                _ = try vault.scoped(to: profile.name).removePasskey(credentialID: id)
                return ok("ok", "the user deleted \(label) in the provider")
            default:
                return ok("error", "unknown step")
            }
        } catch let failure as CeremonyError {
            let operation: Dialect.Operation = step.action == "get" ? .get : step.action == "signal" ? .signal : .create
            return failed(failure, operation, engine: engine, signalKind: a["kind"]?.stringValue ?? "unknown",
                          conditional: step.action == "create" && a["mediation"]?.stringValue == "conditional")
        } catch {
            return Cell(outcome: "error", summary: "\(error)", vault: "")
        }
    }

    private func create(_ a: JSONValue, user: String, engine: Engine) throws -> Cell {
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
            labels[wanted] = response.credentialID
            labels[name] = nil
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
        var cell = ok("created", "created \(shown) \(how) (\(bits))", knob: knob)
        cell.ui = silent ? (engine.knobs.notification.isEmpty ? "none" : "notice") : "sheet"
        cell.flags = bits
        return cell
    }

    private func get(_ a: JSONValue, engine: Engine) throws -> Cell {
        let allow = (a["allow"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { labels[$0] } }
        let options = try RequestOptions(document: .object([
            ("challenge", .string(Base64URL.encode([UInt8](repeating: 9, count: 32)))), ("rpId", .string(scenario.rpID)),
            ("allowCredentials", .array(allow.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
        ]))
        let response = try engine.get(options, caller: caller())
        let flags = try AuthenticatorData(bytes: response.authenticatorData).flags
        var cell = ok("signedIn", "signed in with \(label(for: response.credentialID))")
        cell.ui = "sheet"
        cell.flags = "UP=\(flags.contains(.userPresent) ? 1 : 0) UV=\(flags.contains(.userVerified) ? 1 : 0)"
        return cell
    }

    private func signal(_ a: JSONValue, engine: Engine) throws -> Cell {
        let kind = a["kind"]?.stringValue ?? "unknown"
        let userID = Base64URL.encode(Array((a["userId"]?.stringValue ?? scenario.userName).utf8))
        let request: SignalRequest
        let knobName: String
        switch kind {
        case "accepted":
            let ids = (a["accepted"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { labels[$0] } }.map { Base64URL.encode($0) }
            request = .allAcceptedCredentials(rpId: scenario.rpID, userId: userID, allAcceptedCredentialIds: ids)
            knobName = "signals.allAcceptedCredentials"
        case "details":
            request = .currentUserDetails(rpId: scenario.rpID, userId: userID, name: a["name"]?.stringValue ?? scenario.userName,
                                          displayName: a["displayName"]?.stringValue ?? scenario.displayName)
            knobName = "signals.currentUserDetails"
        default:
            let id = a["credential"]?.stringValue.flatMap { labels[$0] } ?? [UInt8](repeating: 1, count: 16)
            request = .unknownCredential(rpId: scenario.rpID, credentialId: Base64URL.encode(id))
            knobName = "signals.unknownCredential"
        }
        let vaultHandle = vault.scoped(to: profile.name)
        let before: Int64 = (try? vaultHandle.lastEventID(kind: "signal")) ?? 0
        try engine.signal(request, caller: caller())
        let event = try? vaultHandle.events(kind: "signal", after: before).last
        let outcome = event?.outcome ?? "resolved"
        let value: String
        switch knobName {
        case "signals.allAcceptedCredentials": value = engine.knobs.allAcceptedCredentials.rawValue
        case "signals.currentUserDetails": value = engine.knobs.currentUserDetails.rawValue
        default: value = engine.knobs.unknownCredential.rawValue
        }
        let knob = outcome == "dropped"
            ? engine.knobs.cite(PolicyKnobs.rateLimitKnob(request.kind), "\(engine.knobs.rateLimit(for: request.kind))") : engine.knobs.cite(knobName, value)
        let did = ["applied": "acted", "noop": "had nothing to change", "ignored": "ignored it", "dropped": "dropped it (over quota)"][outcome] ?? outcome
        return Cell(outcome: "resolved", summary: "resolved; the provider \(did)",
                    reason: outcome == "applied" ? nil : outcome, vault: "", knob: knob)
    }

}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
