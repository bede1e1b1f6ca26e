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
        var on: String?
        var account = mainAccount
        switch step.target {
        case .main: break
        case .account(let name): account = name
        case .device(let name):
            guard devices[name] != nil else { return Cell(outcome: "n/a", summary: "no \(name) here: \(absent[name] ?? "absent")", vault: "") }
            on = name
        }
        if let missing = missingPacks[account] { return Cell(outcome: "error", summary: "account \(account): no pack '\(missing)'", vault: "") }
        let device = on.flatMap { devices[$0] }
        var acting = engine(account)
        do {
            switch step.action {
            case .savePassword(let save):
                let user = save.user ?? scenario.userName
                try acting.savePassword(origin: save.origin ?? scenario.origin, username: user, password: save.password ?? "hunter2", savedIn: save.savedIn)
                return ok("saved", "password saved for \(user)" + (save.origin.map { " at \($0)" } ?? "") + (save.savedIn.map { " in \($0)" } ?? "")
                          + inAccount(account))
            case .autofill(let fill):
                _ = try acting.autofill(origin: fill.origin ?? scenario.origin, username: fill.user, submit: fill.submit)
                return ok("filled", (fill.submit ? "password filled and submitted" : "password filled") + (fill.origin.map { " at \($0)" } ?? "")
                          + inAccount(account))
            case .usePassword(let user):
                try acting.markPasswordUsed(origin: scenario.origin, username: user ?? scenario.userName)
                return ok("ok", "password typed and submitted" + inAccount(account))
            case .advance(let advance):
                clock.advance(by: advance.seconds)
                return ok("ok", "clock +\(advance.written ?? "\(Int(saturating: advance.seconds))s")")
            case .setting(let settings):
                var changed: [String] = []
                if let on {
                    for (key, value) in settings {
                        try devices[on]!.set(key, value)
                        changed.append("\(key) = \(value.serialized())")
                    }
                    try devices[on]!.checked()
                    return ok("ok", "\(on): " + changed.joined(separator: ", "))
                }
                for (key, value) in settings {
                    try accounts[account]!.profile.set(key, value)
                    changed.append("\(key) = \(value.serialized())")
                }
                return ok("ok", changed.joined(separator: ", ") + inAccount(account))
            case .user(let decisions):
                // On a device, the device's own queue, which its browser's sheet reads.
                let queue = try device.map { (d) throws(Refusal) in try session(d).sheet.queue } ?? acting.vault
                for decision in decisions { try queue.pushDecision(decision.description) }
                return ok("ok", "user will: " + decisions.map(\.description).joined(separator: ", ") + (on.map { " on \($0)" } ?? ""))
            case .rp(let note):
                return ok("—", note ?? "RP-side step")
            case .create(let create):
                let answering = try answering(account, on: device)
                acting = try answering.createEngine().engine
                let options = try creationOptions(create)
                try choose(create.use, in: answering)
                acting = try answering.createAnswerer(options, caller: caller(), routed: acting)
                return try self.create(create, options, engine: acting, routed: device != nil, roaming: roaming(acting, answering))
            case .get(let allow, let use):
                let options = try getOptions(allow: allow)
                let answering = try answering(account, on: device)
                acting = try answering.pageEngine()
                try choose(use, in: answering)
                acting = try answering.getAnswerer(options, caller: caller(), pick: nil)
                return try get(options, engine: acting, routed: device != nil, roaming: roaming(acting, answering))
            case .signal(let signal):
                if let device {
                    let session = try session(device)
                    acting = try session.pageEngine()
                    return try self.signal(signal, session: session)
                }
                return try self.signal(signal, engine: acting)
            case .removePasskey(let label):
                guard let label, let id = labels[label] else { return ok("ok", "nothing to remove") }
                _ = try vault.scoped(to: accounts[account]!.profile.name).removePasskey(credentialID: id)
                return ok("ok", "the user deleted \(label) in the provider" + inAccount(account))
            case let .move(to, keepSource):
                return try move(from: account, to: to, keepSource: keepSource)
            case let .renamePasskey(label, name, displayName):
                let scoped = vault.scoped(to: accounts[account]!.profile.name)
                guard let label, let id = labels[label], let record = try scoped.passkey(id: id, includeShadowed: true) else {
                    return ok("ok", "nothing to rename")
                }
                _ = try scoped.editUser(credentialID: id, name: name ?? record.userName, displayName: displayName ?? record.displayName)
                return ok("ok", "the user renamed \(label) in the provider" + inAccount(account))
            }
        } catch let failure as CeremonyError {
            var operation = Dialect.Operation.create
            var signalKind = Scenario.Action.Signal.Kind.unknown
            var conditional = false
            switch step.action {
            case .get: operation = .get
            case .signal(let signal): (operation, signalKind) = (.signal, signal.kind)
            case .create(let create): conditional = create.conditional
            default: break
            }
            var cell = failed(failure, operation, engine: acting, signalKind: signalKind.rawValue, conditional: conditional)
            if device != nil, operation != .signal { cell.provider = acting.profile.name }
            return cell
        } catch {
            return Cell(outcome: "error", summary: "\(error)", vault: "")
        }
    }

    /// The user's choice in the browser's sheet, queued on the target's own queue as a `user` step's `use:NAME`.
    func choose(_ use: String?, in answering: any Answering) throws {
        guard let use else { return }
        try answering.sheet.queue.pushDecision(UserDecision.use(use).description)
    }

    /// Whether a security key or a phone answered, not one of the target's managers.
    func roaming(_ engine: Engine, _ answering: any Answering) -> Bool { !answering.engines.contains { $0 === engine } }

    func creationOptions(_ a: Scenario.Action.Create) throws -> CreationOptions {
        let user = a.user ?? scenario.userName
        let exclude: [[UInt8]]
        switch a.exclude {
        case .known: exclude = snapshot().filter { $0.value.userName == user }.map(\.value.credentialID)
        case .labels(let names): exclude = names.compactMap { labels[$0] }
        }
        let members: [(String, JSONValue)] = [
            ("rp", .object([("id", .string(scenario.rpID)), ("name", "Scenario RP")])),
            ("user", .object([("id", .string(Base64URL.encode(Array((a.userID ?? user).utf8)))), ("name", .string(user)),
                              ("displayName", .string(scenario.displayName))])),
            ("challenge", .string(Base64URL.encode([UInt8](repeating: 7, count: 32)))),
            ("pubKeyCredParams", .array([.object([("type", "public-key"), ("alg", -7)]), .object([("type", "public-key"), ("alg", -257)])])),
            ("excludeCredentials", .array(exclude.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
            ("authenticatorSelection", .object([("residentKey", .string(a.residentKey)), ("userVerification", .string(a.userVerification ?? "preferred"))]
                + (a.attachment.map { [("authenticatorAttachment", .string($0))] } ?? []))),
            ("attestation", .string(a.attestation)),
        ]
        let document: JSONValue = a.conditional ? .object([("publicKey", .object(members)), ("mediation", "conditional")]) : .object(members)
        return try CreationOptions(document: document)
    }

    /// - Parameter roaming: a security key or a phone answered, not the target's manager: the cell says what the RP
    ///   sees of that authenticator.
    func create(_ a: Scenario.Action.Create, _ options: CreationOptions, engine: Engine, routed: Bool, roaming: Bool) throws -> Cell {
        let conditional = a.conditional
        let response = try engine.create(options, caller: caller())
        let name = labels.name(for: response.credentialID)
        if let wanted = a.label, wanted != name {
            labels.assign(wanted, to: response.credentialID)
            labels.giveBackNumber()
        }
        let shown = a.label ?? name
        let flags = try AuthenticatorData(bytes: response.authenticatorData).flags
        let bits = "UP=\(flags.contains(.userPresent) ? 1 : 0) UV=\(flags.contains(.userVerified) ? 1 : 0)"
        let silent = conditional && engine.knobs.conditionalMode == .silent
        let how = silent ? "silently" : roaming ? "through the browser's sheet" : "with the provider's sheet"
        let knob = conditional
            ? engine.knobs.cite("conditionalCreate.mode", engine.knobs.conditionalMode.rawValue)
            : engine.knobs.cite("authenticator.userVerification", engine.knobs.userVerification.rawValue)
        var cell = ok("created", "created \(shown) \(how) (\(bits))" + (routed || roaming ? " in \(engine.profile.name)" : ""), knob: knob)
        cell.ui = silent ? (engine.knobs.notification.isEmpty ? "none" : "notice") : "sheet"
        cell.flags = bits
        if routed || roaming { cell.provider = engine.profile.name }
        if roaming { cell.authenticator = try Cell.authenticator(registration: response) }
        return cell
    }

    func getOptions(allow names: [String]) throws -> RequestOptions {
        let allow = names.compactMap { labels[$0] }
        return try RequestOptions(document: .object([
            ("challenge", .string(Base64URL.encode([UInt8](repeating: 9, count: 32)))), ("rpId", .string(scenario.rpID)),
            ("allowCredentials", .array(allow.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
        ]))
    }

    func get(_ options: RequestOptions, engine: Engine, routed: Bool, roaming: Bool) throws -> Cell {
        let response = try engine.get(options, caller: caller())
        let flags = try AuthenticatorData(bytes: response.authenticatorData).flags
        var cell = ok("signedIn", "signed in with \(labels.name(for: response.credentialID))" + (routed || roaming ? " from \(engine.profile.name)" : ""))
        cell.ui = "sheet"
        cell.flags = "UP=\(flags.contains(.userPresent) ? 1 : 0) UV=\(flags.contains(.userVerified) ? 1 : 0)"
        if routed || roaming { cell.provider = engine.profile.name }
        if roaming || moved.contains(response.credentialID) { cell.authenticator = try Cell.authenticator(assertion: response) }
        return cell
    }

    /// A `move` step: the scenario RP's credentials of `account` into `to`, through the mover (`Operations.move`).
    /// The cell says what the importer's pack gives them (its `import.backupFlags`), and a later sign-in with one
    /// shows the RP's view (`authenticator`).
    func move(from account: String, to: String, keepSource: Bool) throws -> Cell {
        if let missing = missingPacks[to] { return Cell(outcome: "error", summary: "account \(to): no pack '\(missing)'", vault: "") }
        guard let mover else {
            return Cell(outcome: "error", summary: "a move needs the operations layer's move: run the scenario with credemu scenario run", vault: "")
        }
        let source = engine(account), target = engine(to)
        let answer = try mover(source, target, scenario.rpID, keepSource, clock.now())
        engines = engines.filter { !$0.key.hasPrefix(account + "@") && !$0.key.hasPrefix(to + "@") }
        let ids = (answer["credentialIds"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(Base64URL.decode) }
        moved.formUnion(ids)
        let importer = answer["importer"]
        let bit = { (name: String) in importer?[name]?.boolValue == true ? 1 : 0 }
        let count = { (name: String) in Int(answer["moved"]?[name]?.numberValue ?? 0) }
        let left = answer["leftOut"]?.arrayValue?.count ?? 0
        var summary = "moved \(ids.map { labels.name(for: $0) }.joined(separator: ", ").nilIfEmpty ?? "no passkey")"
            + (count("passwords") > 0 ? " and \(count("passwords")) password(s)" : "") + " from \(account) to \(to) as CXF"
            + (keepSource ? ", \(account) keeping its copies" : "")
        if ids.isEmpty == false {
            summary += "; \(to) answers BE=\(bit("backupEligible")) BS=\(bit("backupState")), counter \(importer?["counter"]?.stringValue ?? "?")"
        }
        if left > 0 { summary += "; \(left) left in \(account) (a counter: CXF excludes it)" }
        var cell = ok("moved", summary, knob: target.knobs.cite("import.backupFlags", target.knobs.importedBackupFlags.rawValue))
        cell.provider = to
        return cell
    }

    func signalRequest(_ a: Scenario.Action.Signal) -> (request: SignalRequest, knob: String) {
        let userID = Base64URL.encode(Array((a.userID ?? scenario.userName).utf8))
        switch a.kind {
        case .accepted:
            let ids = a.accepted.compactMap { labels[$0] }.map { Base64URL.encode($0) }
            return (.allAcceptedCredentials(rpId: scenario.rpID, userId: userID, allAcceptedCredentialIds: ids), "signals.allAcceptedCredentials")
        case .details:
            return (.currentUserDetails(rpId: scenario.rpID, userId: userID, name: a.name ?? scenario.userName,
                                        displayName: a.displayName ?? scenario.displayName), "signals.currentUserDetails")
        case .unknown:
            let id = a.credential.flatMap { labels[$0] } ?? [UInt8](repeating: 1, count: 16)
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

    func signal(_ a: Scenario.Action.Signal, engine: Engine) throws -> Cell {
        let (request, knobName) = signalRequest(a)
        let before: Int64 = (try? engine.vault.lastEventID(kind: "signal")) ?? 0
        try engine.signal(request, caller: caller())
        let (outcome, knob) = signalOutcome(engine, request, knobName: knobName, after: before)
        return Cell(outcome: "resolved", summary: "resolved; the provider \(ScenarioRunner.signalWords[outcome] ?? outcome)",
                    reason: outcome == "applied" ? nil : outcome, vault: "", knob: knob)
    }

    /// A signal on a device: each provider the platform sends it to, and what each did.
    func signal(_ a: Scenario.Action.Signal, session: DeviceSession) throws -> Cell {
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
