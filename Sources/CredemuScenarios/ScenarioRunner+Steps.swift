import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// The step actions: each step kind done against the column's accounts and devices.
extension ScenarioRunner {
    func caller() -> Caller {
        (try? Caller(origin: scenario.origin)) ?? Caller(origin: .web(scheme: "https", host: scenario.rpID, port: nil))
    }

    func perform(_ step: Scenario.Step) -> Cell {
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

    func create(_ a: JSONValue, user: String, engine: Engine, routed: Bool) throws -> Cell {
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
        let name = labels.name(for: response.credentialID)
        if let wanted = a["as"]?.stringValue, wanted != name {
            labels.assign(wanted, to: response.credentialID)
            labels.giveBackNumber()
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

    func getOptions(_ a: JSONValue) throws -> RequestOptions {
        let allow = (a["allow"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { labels[$0] } }
        return try RequestOptions(document: .object([
            ("challenge", .string(Base64URL.encode([UInt8](repeating: 9, count: 32)))), ("rpId", .string(scenario.rpID)),
            ("allowCredentials", .array(allow.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
        ]))
    }

    func get(_ options: RequestOptions, engine: Engine, routed: Bool) throws -> Cell {
        let response = try engine.get(options, caller: caller())
        let flags = try AuthenticatorData(bytes: response.authenticatorData).flags
        var cell = ok("signedIn", "signed in with \(labels.name(for: response.credentialID))" + (routed ? " from \(engine.profile.name)" : ""))
        cell.ui = "sheet"
        cell.flags = "UP=\(flags.contains(.userPresent) ? 1 : 0) UV=\(flags.contains(.userVerified) ? 1 : 0)"
        if routed { cell.provider = engine.profile.name }
        return cell
    }

    func signalRequest(_ a: JSONValue) -> (request: SignalRequest, knob: String) {
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
    func signalOutcome(_ engine: Engine, _ request: SignalRequest, knobName: String, after before: Int64) -> (outcome: String, knob: String) {
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

    static let signalWords = ["applied": "acted", "noop": "had nothing to change", "ignored": "ignored it", "dropped": "dropped it (over quota)"]

    func signal(_ a: JSONValue, engine: Engine) throws -> Cell {
        let (request, knobName) = signalRequest(a)
        let before: Int64 = (try? engine.vault.lastEventID(kind: "signal")) ?? 0
        try engine.signal(request, caller: caller())
        let (outcome, knob) = signalOutcome(engine, request, knobName: knobName, after: before)
        return Cell(outcome: "resolved", summary: "resolved; the provider \(ScenarioRunner.signalWords[outcome] ?? outcome)",
                    reason: outcome == "applied" ? nil : outcome, vault: "", knob: knob)
    }

    /// A signal on a device: each provider the platform sends it to, and what each did.
    func signal(_ a: JSONValue, session: DeviceSession) throws -> Cell {
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
