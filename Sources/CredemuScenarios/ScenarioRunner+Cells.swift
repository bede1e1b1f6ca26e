import CredemuEngine
import Vault
import WebAuthn

/// Rendering outcomes: a ceremony's failure, the vault's change and a repeated step as cells, each citing the knob that decided it.
extension ScenarioRunner {
    func summarize(_ cells: [Cell]) -> Cell {
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
        summary.authenticator = cells.compactMap(\.authenticator).last
        summary.unexpected = cells.compactMap(\.unexpected).first
        return summary
    }

    func vaultChange(_ before: [String: PasskeyRecord], _ after: [String: PasskeyRecord]) -> String {
        var changes: [String] = []
        for name in after.keys.sorted() where before[name] == nil { changes.append("+\(name)" + (after[name]!.hidden ? " (hidden)" : "")) }
        for name in before.keys.sorted() where after[name] == nil { changes.append("\(name) deleted") }
        for name in before.keys.sorted() {
            guard let old = before[name], let new = after[name] else { continue }
            if !old.hidden && new.hidden { changes.append("\(name) hidden") }
            if old.hidden && !new.hidden { changes.append("\(name) restored") }
            if old.shadowedBy == nil, let shadow = new.shadowedBy { changes.append("\(name) shadowed by \(labels.name(for: shadow))") }
            if old.shadowedBy != nil && new.shadowedBy == nil { changes.append("\(name) no longer shadowed") }
            if old.userName != new.userName { changes.append("\(name) renamed") }
            if old.displayName != new.displayName { changes.append("\(name) display name changed") }
        }
        return changes.isEmpty ? "no change" : changes.joined(separator: ", ")
    }

    func check(_ cell: Cell, against step: Scenario.Step) -> String? {
        guard let expected = step.expect.first(where: { $0.0 == policy.id })?.1 ?? step.expect.first(where: { $0.0 == "*" })?.1 else {
            return nil
        }
        for (key, value) in expected.objectValue ?? [] {
            let actual = cell.json[key]?.stringValue
            if actual != value.stringValue { return "expected \(key) \(value.serialized()), got \(actual.map { "\"\($0)\"" } ?? "none")" }
        }
        return nil
    }

    func ok(_ outcome: String, _ summary: String, knob: String? = nil) -> Cell {
        Cell(outcome: outcome, summary: summary, vault: "", knob: knob)
    }

    /// What the user saw of a failed ceremony: nothing for a silent no-op, an automatic upgrade's error or a
    /// request the client refuses before asking the provider (a TypeError, SecurityError, NotSupportedError or
    /// SyntaxError); the provider's sheet otherwise.
    func userInterface(_ failure: CeremonyError, conditional: Bool, engine: Engine) -> String {
        if failure.silent || (conditional && engine.knobs.conditionalMode != .modal) { return "none" }
        let beforeUI: Set<WebAuthnError.Name> = [.typeError, .securityError, .notSupportedError, .syntaxError]
        return beforeUI.contains(failure.error.name) ? "none" : "sheet"
    }

    func failed(_ failure: CeremonyError, _ operation: Dialect.Operation, engine: Engine, signalKind: String,
                        conditional: Bool = false) -> Cell {
        let rendered = Dialect.render(failure, operation: operation, knobs: engine.knobs, osVersion: engine.profile.osVersion)
        let dialect: String
        switch engine.profile.platform.dialect {
        case .web: dialect = failure.error.name.rawValue
        case .android: dialect = rendered["android"]?["exception"]?.stringValue?.split(separator: ".").last.map(String.init) ?? ""
        case .apple: dialect = "ASAuthorizationError \(Int(rendered["apple"]?["code"]?.numberValue ?? 0)) \(rendered["apple"]?["name"]?.stringValue ?? "")"
        }
        let what = failure.silent ? "silent no-op" : failure.error.name.rawValue
        // A failure that surfaces only when the operation's timeout runs out, not at once (the user's cancel).
        let settles = failure.settlesAfterMillis.map { ", settling at the timeout (\($0) ms)" } ?? ""
        return Cell(outcome: failure.silent ? "noop" : "error", summary: "\(what): \(failure.reason)" + settles, reason: failure.reason.rawValue,
                    error: failure.error.name.rawValue, dialect: dialect, vault: "", knob: knob(for: failure.reason, engine: engine, signalKind: signalKind),
                    ui: operation == .signal ? nil : userInterface(failure, conditional: conditional, engine: engine))
    }

    /// The knob that decides an outcome with this reason, cited with its value and source.
    func knob(for reason: Reason, engine: Engine, signalKind: String) -> String? {
        let k = engine.knobs
        switch reason {
        case .noRecentlyUsedPassword: return k.cite("conditionalCreate.windowSeconds", "\(k.windowSeconds)")
        case .noMatchingPassword:
            // Which realms' passwords count, then whose: either can leave the account without one.
            return k.cite("conditionalCreate.passwordMatch", k.passwordMatch.rawValue) + "; " + k.cite("conditionalCreate.matchUsername", "\(k.matchUsername)")
        case .passkeyExists: return k.cite("conditionalCreate.rejectIfPasskeyExists", "\(k.rejectIfPasskeyExists)")
        case .conditionalCreateUnsupported: return k.cite("conditionalCreate.mode", k.conditionalMode.rawValue)
        case .noDevicePasscode: return k.cite("conditionalCreate.requirePasscode", "\(k.requirePasscode)")
        case .excludedCredential, .noAnswerUntilTimeout: return k.cite("exclusion.outcome", k.exclusionOutcome.rawValue)
        case .rateLimited: return k.cite(PolicyKnobs.rateLimitKnob(signalKind), "\(k.rateLimit(for: signalKind))")
        case .optOut: return "profile setting automaticPasskeyUpgrades = false (the user's opt-out)"
        default: return nil
        }
    }

    /// " in ACCOUNT" when the scenario has several accounts.
    func inAccount(_ account: String) -> String { accountOrder.count > 1 ? " in \(account)" : "" }
}
