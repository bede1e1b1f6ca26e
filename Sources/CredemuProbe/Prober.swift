import CredemuEngine
import CredemuOperations
import Foundation
import Vault
import WebAuthn

/// Drives an RP server with what each pack would send and records which responses it accepts.
///
/// Every response is made by the real engine in a vault of the probe's own (one profile per pack and
/// platform, `probe-<pack>-<platform>`, replaced at each run), for the options the server issued, so each is
/// a valid WebAuthn response a correct server accepts. Every HTTP exchange is an event of kind `probe` in that
/// profile's log.
public final class Prober {
    public let base: HTTPURL
    public let adapter: ProbeAdapter
    /// The origin the responses' client data names (the server must expect it).
    public let origin: String
    /// How long a whole run may take; past it, the exchange under way ends in `RunTimedOut`.
    public let timeLimit: Duration
    public let limits: HTTPLimits
    /// The forged responses sent after the variants (`--forgeries`; none by default).
    public var forgeries: [Forgery] = []
    /// The columns (`pack@platform`) a passkey of the run's first provider is moved into before a sign-in
    /// (`--moves`, the `signInAfterMove` variant); nil (the default) leaves the variant out of the run.
    public var moves: Set<String>?
    let ops: Operations
    var deadline: Deadline?

    public static let defaultTimeLimit: Duration = .seconds(600)

    public init(base: HTTPURL, adapter: ProbeAdapter, origin: String, operations: Operations,
                timeLimit: Duration = Prober.defaultTimeLimit, limits: HTTPLimits = .standard) {
        self.base = base
        self.adapter = adapter
        self.origin = origin
        self.timeLimit = timeLimit
        self.limits = limits
        ops = operations
    }

    /// Runs every variant for each (pack, platform) and diagnoses the rejections.
    public func run(_ providers: [(any ProviderPolicy, Platform)]) throws(ProbeError) -> ProbeReport {
        try Prober.check(origin: origin, for: base)
        deadline = Deadline(after: timeLimit, ProbeError(.runTimedOut, "The probe of \(base) did not finish within \(Deadline.text(timeLimit)) (--max-time)."))
        defer { deadline = nil }
        var columns: [ProbeColumn] = []
        var cells: [[ProbeCell]] = []
        for (policy, platform) in providers {
            let column = ProbeColumn(pack: policy.id, name: policy.name, version: policy.version, platform: platform)
            columns.append(column)
            cells.append(try probe(policy, platform, column, exporter: providers[0]))
        }
        var report = ProbeReport(target: base.description, adapter: adapter.name, origin: origin, columns: columns,
                                 variants: variants, cells: cells, log: ops.vault.path)
        if let (policy, platform) = providers.first { report.staleContext = try staleContext(policy, platform) }
        if let (policy, platform) = providers.first, !forgeries.isEmpty {
            let upgrade = ProbeVariant.allCases.firstIndex(of: .upgrade)!
            report.forged = try forge(policy, platform, upgradeAccepted: cells.contains { $0[upgrade].outcome == .accepted })
        }
        report.diagnose()
        return report
    }

    /// Refuses an origin WebAuthn does not run in (a usage error: the responses would be refused by any browser),
    /// with the `--origin` that most likely fits a server on this machine.
    public static func check(origin: String, for base: HTTPURL) throws(ProbeError) {
        let refusal: String
        do {
            if case .web = try Origin(origin) { return }
            refusal = "'\(ProbeError.quote(origin))' is an app origin; the probe plays web origins only."
        } catch {
            refusal = ProbeError.quote(error.message, limit: 400)
        }
        let local = "http://localhost" + (base.port == 80 ? "" : ":\(base.port)")
        throw ProbeError(.badOrigin, refusal + " WebAuthn runs only in a secure context: https://HOST[:PORT], or http://localhost[:PORT]. "
            + "Pass --origin with the origin the server expects in client data (for a server on this machine, most likely --origin \(local)).")
    }

    // MARK: One column

    struct Account {
        var profile: String
        var username: String
        var credentialID: String
        /// The user handle of the server's options (base64url), which a second registration of the account must repeat.
        var userID: String?
        var client: HTTPClient
        /// The registration the server took (its authenticator data: the flags and AAGUID it stored).
        var registration: JSONValue?
    }

    /// The variants this run sends, in the report's order: all but `signInAfterMove` without `--moves`.
    var variants: [ProbeVariant] { ProbeVariant.allCases.filter { $0 != .signInAfterMove || moves != nil } }

    private func probe(_ policy: any ProviderPolicy, _ platform: Platform, _ column: ProbeColumn,
                       exporter: (any ProviderPolicy, Platform)) throws(ProbeError) -> [ProbeCell] {
        let profile = Prober.profile(policy, platform)
        let roaming = try prepareRoaming(policy, platform, profile: profile)
        try operation { () throws(OperationError) in
            if (try? ops.profile(profile)) != nil { try ops.removeProfile(profile) }
            _ = try ops.createProfile(profile, settings: [("pack", .string(policy.id)), ("platform", .string(platform.rawValue))]
                                      + (roaming.key.map { [("authenticators", .array([.string($0)]))] } ?? []), allowPackPath: false)
        }
        let knobs = policy.knobs(for: platform)
        var out: [ProbeCell] = []
        var signInAccount: Account?
        var keyAccount: Account?
        let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        for variant in ProbeVariant.allCases where variant.isRegistration {
            let username = "\(policy.id)-\(variant.rawValue)-\(runID)@probe.credemu.test"
            let (cell, account) = try register(variant, profile: profile, platform: platform, knobs: knobs, username: username, roaming: roaming)
            out.append(cell)
            // The security key's credential signs in on its own; of the others, the modal passkey, or else the
            // first one the server took.
            if variant == .securityKey { keyAccount = account; continue }
            if let account, signInAccount == nil || variant == .modal { signInAccount = account }
        }
        for variant in [ProbeVariant.signIn, .signInAgain] {
            guard let account = signInAccount else {
                out.append(ProbeCell(outcome: .notRun, message: "no registration of this pack was accepted, so there is no passkey to sign in with"))
                continue
            }
            out.append(try authenticate(variant, account: account, platform: platform, knobs: knobs))
        }
        out.append(try securityKeySignIns(keyAccount, roaming: roaming, platform: platform, knobs: knobs, registration: out[ProbeVariant.allCases.firstIndex(of: .securityKey)!]))
        out.append(try reRegistration(profile: profile, platform: platform, knobs: knobs, username: "\(policy.id)-reRegistration-\(runID)@probe.credemu.test",
                                      roaming: roaming, plainSignIn: out[ProbeVariant.allCases.firstIndex(of: .signIn)!]))
        if let moves {
            out.append(try signInAfterMove(from: exporter, into: profile, column: column, named: moves.contains(column.header), knobs: knobs,
                                           username: "\(policy.id)-signInAfterMove-\(runID)@probe.credemu.test"))
        }
        return out
    }

    /// The vault profile of a pack on a platform, replaced at each run.
    static func profile(_ policy: any ProviderPolicy, _ platform: Platform) -> String { "probe-\(policy.id)-\(platform.rawValue)" }

    /// Why the pack never sends `variant`, or nil when it does.
    private func notApplicable(_ variant: ProbeVariant, _ knobs: PolicyKnobs, _ roaming: Roaming) -> String? {
        switch variant {
        case .upgrade:
            switch knobs.conditionalMode {
            case .unsupported: return knobs.cite("conditionalCreate.mode", "unsupported") + ": the pack makes no automatic upgrades"
            case .modal: return knobs.cite("conditionalCreate.mode", "modal") + ": the pack shows its sheet, as in the modal registration"
            case .silent: return nil
            }
        case .userVerificationDiscouraged:
            return knobs.userVerification == .alwaysClaimed
                ? knobs.cite("authenticator.userVerification", "alwaysClaimed") + ": the pack reports UV=1 whatever the RP asks" : nil
        case .notYetSynced:
            return knobs.backupEligible ? nil : knobs.cite("authenticator.backupEligible", "false") + ": the pack's passkeys are not backup eligible"
        case .packedAttestation:
            return knobs.attestation == .packed || knobs.attestation == .batch ? nil
                : knobs.cite("authenticator.attestation", knobs.attestation.rawValue) + ": the pack always sends fmt none"
        case .securityKey, .hybrid, .securityKeySignIn:
            return roaming.notApplicable[variant]
        case .modal, .signIn, .signInAgain, .reRegistration, .signInAfterMove:
            return nil
        }
    }

    func register(_ variant: ProbeVariant, profile: String, platform: Platform, knobs: PolicyKnobs,
                          username: String, roaming: Roaming) throws(ProbeError) -> (ProbeCell, Account?) {
        if let why = notApplicable(variant, knobs, roaming) { return (ProbeCell(outcome: .notApplicable, message: why), nil) }
        let client = HTTPClient(limits: limits, runDeadline: deadline)
        let userVerification = variant == .userVerificationDiscouraged ? "discouraged" : "preferred"
        let attestation = variant == .packedAttestation || variant == .securityKey ? "direct" : "none"
        let values = ["username": username, "displayName": "Probe \(variant.rawValue)", "userVerification": userVerification, "attestation": attestation]
        let log = logger(profile, variant)
        if let signIn = adapter.signIn { _ = try exchange(client, "signIn", signIn.path, ProbeAdapter.fill(signIn.body, values), log, method: signIn.method) }
        let begin = try exchange(client, "registration.begin", adapter.registration.begin.path,
                                 ProbeAdapter.fill(adapter.registration.begin.body, values), log)
        guard (200..<300).contains(begin.status), let options = Prober.options(begin.json, at: adapter.registration.optionsPath) else {
            return (ProbeCell(outcome: .rejected, message: "the options request failed: " + Prober.message(begin), status: begin.status), nil)
        }
        // The server's own options may rule the variant out.
        let asked = options["authenticatorSelection"]?["userVerification"]?.stringValue
        if asked == "required" && (variant == .upgrade || variant == .userVerificationDiscouraged) {
            return (ProbeCell(outcome: .ruledOut, message: "the server's options say userVerification \"required\", which \(variant == .upgrade ? "makes an automatic upgrade impossible (WebAuthn L3 §5.1.3: conditional create cannot verify the user)" : "rules out a UV=0 registration")"), nil)
        }
        if variant == .userVerificationDiscouraged && asked != "discouraged" {
            return (ProbeCell(outcome: .ruledOut, message: "the server answered userVerification \(asked.map { "\"\($0)\"" } ?? "unset (preferred)") to a request for \"discouraged\", so the pack reports UV=1"), nil)
        }
        if variant == .packedAttestation, !["direct", "enterprise"].contains(options["attestation"]?.stringValue ?? "none") {
            return (ProbeCell(outcome: .ruledOut, message: "the server's options ask attestation \"\(options["attestation"]?.stringValue ?? "none")\"; packed is sent only for \"direct\""), nil)
        }
        if let why = Prober.attachmentRulesOut(variant, options) { return (ProbeCell(outcome: .ruledOut, message: why), nil) }
        if variant == .upgrade {
            // The automatic upgrade's condition: a password for this account just used (seed 000 N2.6-AC05).
            // The user name is the server's: a refusal of it rules the upgrade out; only the vault failing stops the run.
            let name = options["user"]?["name"]?.stringValue ?? username
            do {
                _ = try ops.savePassword(profile, origin: origin, username: name, password: "probe-" + username)
                _ = try ops.usePassword(profile, origin: origin, username: name)
            } catch where error.code != .storage {
                return (ProbeCell(outcome: .ruledOut, message: "the provider refused the saved password the upgrade starts from: \(error.name): \(ProbeError.quote(error.message))"), nil)
            } catch {
                throw ProbeError(.vault, "The probe's vault refused: \(error.message)")
            }
        }
        let request = CeremonyRequest(options: .json(options), origin: origin, platform: platform.rawValue,
                                      mediation: variant == .upgrade ? "conditional" : "modal")
        let overrides = variant == .notYetSynced ? PasskeySettingOverrides(backupState: false) : PasskeySettingOverrides()
        let response: JSONValue
        do {
            response = try choosing(roaming.choice(variant), in: profile) { () throws(OperationError) in
                try ops.create(.profile(profile), request, overrides: overrides).response
            }
        } catch {
            return (engineRefusal(error, variant), nil)
        }
        var cell = ProbeCell(outcome: .accepted, message: "")
        (cell.traits, cell.sent) = Prober.registrationTraits(response)
        let body = ProbeAdapter.write(response, into: ProbeAdapter.fill(adapter.registration.finish.body, values), at: adapter.registration.responsePath)
        let finish = try exchange(client, "registration.finish", adapter.registration.finish.path, body, log)
        cell.status = finish.status
        guard Prober.accepted(finish) else {
            cell.outcome = .rejected
            cell.message = Prober.message(finish)
            log.verdict(cell)
            return (cell, nil)
        }
        log.verdict(cell)
        return (cell, Account(profile: profile, username: options["user"]?["name"]?.stringValue ?? username,
                              credentialID: response["id"]?.stringValue ?? "", userID: options["user"]?["id"]?.stringValue, client: client,
                              registration: response))
    }

    /// A sign-in with `account`'s passkey, picked from the manager's list; with `use`, the user picks that security
    /// key in the browser's sheet instead.
    /// After a move, `moved` names what changed since the registration among the cell's traits.
    func authenticate(_ variant: ProbeVariant, account: Account, platform: Platform, knobs: PolicyKnobs, use: String? = nil,
                      moved: MoveChange? = nil) throws(ProbeError) -> ProbeCell {
        let values = ["username": account.username, "displayName": "", "userVerification": "preferred", "attestation": "none"]
        let log = logger(account.profile, variant)
        let ceremony = adapter.authentication
        let begin = try exchange(account.client, "authentication.begin", ceremony.begin.path, ProbeAdapter.fill(ceremony.begin.body, values), log)
        guard (200..<300).contains(begin.status), let options = Prober.options(begin.json, at: ceremony.optionsPath) else {
            return ProbeCell(outcome: .rejected, message: "the options request failed: " + Prober.message(begin), status: begin.status)
        }
        let request = CeremonyRequest(options: .json(options), origin: origin, platform: platform.rawValue, mediation: "modal",
                                      pick: use == nil ? account.credentialID : nil)
        let response: JSONValue
        do {
            response = try choosing(use, in: account.profile) { () throws(OperationError) in try ops.get(.profile(account.profile), request).response }
        } catch {
            return engineRefusal(error, variant)
        }
        var cell = ProbeCell(outcome: .accepted, message: "")
        (cell.traits, cell.sent) = Prober.assertionTraits(response, again: variant == .signInAgain)
        if let moved { (cell.traits, cell.sent, cell.note) = moved.traits(of: response, cell.traits, cell.sent) }
        try finishSignIn(response, values: values, client: account.client, into: &cell, log)
        log.verdict(cell)
        return cell
    }

    /// Sends an assertion to the server's finish endpoint, as the adapter says; the cell takes the status, and a
    /// refusal makes it rejected with the server's message.
    func finishSignIn(_ assertion: JSONValue, values: [String: String], client: HTTPClient, into cell: inout ProbeCell,
                      _ log: Logger) throws(ProbeError) {
        let ceremony = adapter.authentication
        let body = ProbeAdapter.write(assertion, into: ProbeAdapter.fill(ceremony.finish.body, values), at: ceremony.responsePath)
        let finish = try exchange(client, "authentication.finish", ceremony.finish.path, body, log)
        cell.status = finish.status
        if !Prober.accepted(finish) {
            cell.outcome = .rejected
            cell.message = Prober.message(finish)
        }
    }

    /// The engine refusing the server's options: options a browser would throw a TypeError for are the server's
    /// fault; any other refusal means the server's options ruled the variant out.
    func engineRefusal(_ error: OperationError, _ variant: ProbeVariant) -> ProbeCell {
        if error.name == .web(.typeError) {
            return ProbeCell(outcome: .invalidOptions, message: "the server's options are not valid WebAuthn options: \(error.name): \(ProbeError.quote(error.message))")
        }
        if let reason = error.ceremony?.reason, reason == .userVerificationRequired {
            return ProbeCell(outcome: .ruledOut, message: "the server's options require user verification, which an automatic upgrade cannot do")
        }
        return ProbeCell(outcome: .ruledOut, message: "the provider refused the server's options: \(error.name): \(error.message)")
    }

    // MARK: HTTP and the log

    struct Exchange {
        var status: Int
        var text: String
        var json: JSONValue?
    }

    struct Logger {
        let vault: Vault
        /// The variant's name, the stale-context check's (`staleContext.signedOut`) or the forgery's.
        let variant: String
        let now: () -> Date

        func exchange(_ step: String, _ method: String, _ url: String, _ request: String, _ status: Int, _ response: String) {
            append("exchange", [("step", .string(step)), ("method", .string(method)), ("url", .string(url)),
                                ("request", .string(Logger.clip(request))), ("status", .number(Double(status))),
                                ("response", .string(Logger.clip(response)))])
        }

        func verdict(_ cell: ProbeCell) {
            append(cell.outcome.rawValue, [("result", cell.json)])
        }

        func append(_ outcome: String, _ detail: [(String, JSONValue)]) {
            _ = try? vault.appendEvent(kind: "probe", outcome: outcome, reason: "success",
                                       detail: .object([("variant", .string(variant))] + detail), at: now())
        }

        static func clip(_ text: String) -> String { text.utf8.count <= 16_384 ? text : String(text.prefix(16_384)) + "…" }
    }

    func logger(_ profile: String, _ variant: ProbeVariant) -> Logger { logger(profile, named: variant.rawValue) }

    func logger(_ profile: String, named name: String) -> Logger {
        let clock = ops.clock
        return Logger(vault: ops.vault.scoped(to: profile), variant: name, now: { clock.now() })
    }

    /// One request to `path` with a JSON `body`; a `GET` or `DELETE` (a session step's) carries none.
    func exchange(_ client: HTTPClient, _ step: String, _ path: String, _ body: JSONValue, _ log: Logger,
                  method: String = "POST") throws(ProbeError) -> Exchange {
        let url = try base.resolving(path)
        let text: String? = method == "POST" ? body.serialized() : nil
        let response = try client.request(method, url, json: text)
        log.exchange(step, method, url.description, text ?? "", response.status, response.text)
        return Exchange(status: response.status, text: response.text, json: try? JSONValue.parse(response.body))
    }

    func operation(_ body: () throws(OperationError) -> Void) throws(ProbeError) {
        do {
            try body()
        } catch {
            throw ProbeError(.vault, "The probe's vault refused: \(error.message)")
        }
    }

    // MARK: Reading answers

    /// The options at `path`, without the conformance API's `status` and `errorMessage`.
    static func options(_ document: JSONValue?, at path: String) -> JSONValue? {
        guard let document, let found = ProbeAdapter.read(document, at: path), case .object(let members) = found else { return nil }
        if let status = document["status"]?.stringValue, status != "ok" { return nil }
        return .object(members.filter { $0.0 != "status" && $0.0 != "errorMessage" })
    }

    /// A 2xx answer whose `status`, if any, is "ok" (the conformance API's `ServerResponse`).
    static func accepted(_ exchange: Exchange) -> Bool {
        guard (200..<300).contains(exchange.status) else { return false }
        if let status = exchange.json?["status"]?.stringValue { return status == "ok" }
        if let verified = exchange.json?["verified"]?.boolValue { return verified }
        return true
    }

    /// The server's words for a refusal: `errorMessage`, `error`, `message` or `detail`, else the body; at most
    /// 300 characters, with control characters (a terminal's escape sequences) shown escaped.
    static func message(_ exchange: Exchange) -> String {
        let json = exchange.json
        for key in ["errorMessage", "error", "message", "detail"] {
            if let text = json?[key]?.stringValue, !text.isEmpty { return ProbeError.quote(text, limit: 300) }
            if let text = json?[key]?["message"]?.stringValue, !text.isEmpty { return ProbeError.quote(text, limit: 300) }
        }
        let text = exchange.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return "HTTP \(exchange.status)" + (text.isEmpty ? "" : ": " + ProbeError.quote(text, limit: 300))
    }

    static func authData(_ response: JSONValue) -> [UInt8]? {
        response["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode)
    }

    static func registrationTraits(_ response: JSONValue) -> ([ProbeTrait], String) {
        guard let data = authData(response), data.count >= 53 else { return ([], "") }
        let flags = data[32]
        var traits: [ProbeTrait] = []
        if flags & 0x01 == 0 { traits.append(.registrationUserNotPresent) }
        if flags & 0x04 == 0 { traits.append(.registrationUserNotVerified) }
        let aaguid = Array(data[37..<53])
        if aaguid.allSatisfy({ $0 == 0 }) { traits.append(.zeroAAGUID) }
        if flags & 0x08 != 0 { traits.append(flags & 0x10 != 0 ? .backedUp : .backupEligibleNotBackedUp) } else { traits.append(.notBackupEligible) }
        let (fmt, x5c) = attestation(response)
        if fmt == "packed" { traits.append(x5c ? .packedBatchAttestation : .packedSelfAttestation) }
        if fmt == "fido-u2f" { traits.append(.packedBatchAttestation) }
        if hybrid(response) { traits.append(.hybridTransport) }
        let alg = response["response"]?["publicKeyAlgorithm"]?.numberValue
        if let alg, alg != -7 { traits.append(.nonES256Algorithm) }
        let hex = aaguid.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let sent = "\(flagText(flags)) fmt=\(fmt)\(x5c ? "+x5c" : "") aaguid=\(hex.prefix(8))… alg=\(alg.map { String(Int($0)) } ?? "?")"
            + (hybrid(response) ? " attachment=cross-platform transports=hybrid" : "")
        return (traits, sent)
    }

    static func assertionTraits(_ response: JSONValue, again: Bool) -> ([ProbeTrait], String) {
        guard let data = authData(response), data.count >= 37 else { return ([], "") }
        let flags = data[32]
        let counter = data[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var traits: [ProbeTrait] = []
        if flags & 0x04 == 0 { traits.append(.assertionUserNotVerified) }
        if flags & 0x08 != 0 && flags & 0x10 != 0 { traits.append(.backedUp) }
        if counter == 0 { traits.append(again ? .signCountNotGrowing : .signCountZero) } else { traits.append(.signCountGrowing) }
        return (traits, "\(flagText(flags)) signCount=\(counter)")
    }

    static func flagText(_ flags: UInt8) -> String {
        "UP=\(flags & 0x01) UV=\(flags >> 2 & 1) BE=\(flags >> 3 & 1) BS=\(flags >> 4 & 1)"
    }
}

extension Prober {
    /// `all` (every pack on its default platform), `every` (every pack on every platform it models), or a
    /// list of `ID[@platform]`.
    public static func select(_ text: String, from registry: PolicyRegistry) throws(InvalidConfiguration) -> [(any ProviderPolicy, Platform)] {
        func defaultPlatform(_ policy: any ProviderPolicy) -> Platform {
            (policy as? PolicyPack)?.defaultPlatform ?? policy.platforms.first ?? .chromeDesktop
        }
        if text == "all" { return registry.all.map { ($0, defaultPlatform($0)) } }
        if text == "every" { return registry.all.flatMap { policy in policy.platforms.map { (policy, $0) } } }
        var out: [(any ProviderPolicy, Platform)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "@", omittingEmptySubsequences: false).map(String.init)
            guard parts.count <= 2, let policy = registry.all.first(where: { $0.id == parts[0] }) else {
                throw InvalidConfiguration(.policyPack, "No pack '\(item)'; name packs as ID or ID@platform, from \(registry.all.map(\.id).joined(separator: ", ")).")
            }
            guard parts.count > 1 else { out.append((policy, defaultPlatform(policy))); continue }
            guard let platform = Platform(rawValue: parts[1]), policy.platforms.contains(platform) else {
                throw InvalidConfiguration(.policyPack, "The pack '\(policy.id)' does not model the platform '\(parts[1])'; it models \(policy.platforms.map(\.rawValue).joined(separator: ", ")).")
            }
            out.append((policy, platform))
        }
        return out
    }
}
