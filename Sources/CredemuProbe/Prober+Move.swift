import CredemuEngine
import CredemuOperations
import WebAuthn

/// The `signInAfterMove` variant (issue 36.3, `--moves`): an account registers with the run's first provider (the
/// exporter) in a profile of its own, the user moves the passkey into the column's profile through a CXF document
/// (`Operations.moveCredentials`, the one move every front end makes), then signs in with it. The server sees the same
/// credential ID and public key answered by the importer: its BE/BS, and signCount 0 for good (CXF §Passkey).
///
/// What a sign-in cannot show: the importer's AAGUID. An assertion's authenticator data has no attested credential
/// data (WebAuthn L3 §6.1, §6.5.1), so no server can refuse a sign-in for it; the cell's note names the change, which
/// the account's next registration from the importer carries. A passkey the exporter counted with cannot move at all
/// (CXF's exporter leaves it out): the probe moves it before any sign-in, while its counter is still 0.
extension Prober {
    /// What a move changed, as the server can see it in a sign-in: the registration it stored against the importer's
    /// assertion.
    struct MoveChange {
        /// The registration's authenticator data (flags at 32, AAGUID at 37..<53).
        var registered: [UInt8]
        /// "pack@platform" of the exporter, and whether its pack counts (`authenticator.counter` not `zero`).
        var exporter: String
        var exporterCounts: Bool
        /// The importer's AAGUID (`Operations.move`'s `importer.aaguid`) and the knob its flags come from.
        var importerAAGUID: String
        var flagsKnob: String

        /// The assertion's traits with the move's changes named: BE or BS differing from the registration's, and a
        /// counter 0 that the exporter would have counted (in place of `signCountZero`, which it explains).
        func traits(of assertion: JSONValue, _ traits: [ProbeTrait], _ sent: String) -> ([ProbeTrait], String, String) {
            guard registered.count >= 53, let data = Prober.authData(assertion), data.count >= 37 else { return (traits, sent, "") }
            let before = registered[32], after = data[32]
            var out = traits
            if before & 0x08 != after & 0x08 {
                out.append(.backupEligibilityChangedByMove)
            } else if before & 0x10 != after & 0x10 {
                out.append(.backupStateChangedByMove)
            }
            let counter = data[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if exporterCounts && counter == 0 {
                out = out.map { $0 == .signCountZero || $0 == .signCountNotGrowing ? .counterStoppedByMove : $0 }
            }
            let aaguid = AAGUID.format(Array(registered[37..<53]))
            var note = "moved from \(exporter) through a CXF document; the importer's flags follow \(flagsKnob)"
            note += aaguid == importerAAGUID
                ? "; the AAGUID is the same (\(aaguid))"
                : "; the AAGUID changed from \(aaguid) to \(importerAAGUID), which no sign-in carries (WebAuthn L3 §6.1: an assertion has no attested credential data), so the server still holds the exporter's and sees the importer's only in the account's next registration from it"
            return (out, "registered with \(exporter): \(Prober.flagText(before)); after the move: \(sent)", note)
        }
    }

    /// The column's cell: the exporter's registration, the move into `profile`, the sign-in. Not applicable where the
    /// column is the exporter itself or `--moves` does not name it.
    func signInAfterMove(from exporter: (any ProviderPolicy, Platform), into profile: String, column: ProbeColumn, named: Bool,
                         knobs: PolicyKnobs, username: String) throws(ProbeError) -> ProbeCell {
        let variant = ProbeVariant.signInAfterMove
        let (policy, from) = exporter
        let header = "\(policy.id)@\(from.rawValue)"
        if header == column.header {
            return ProbeCell(outcome: .notApplicable, message: "the column is the exporter (the run's first provider), whose passkeys move to the others")
        }
        guard named else { return ProbeCell(outcome: .notApplicable, message: "--moves does not name this column") }
        let source = profile + "-move-source"
        try operation { () throws(OperationError) in
            if (try? ops.profile(source)) != nil { try ops.removeProfile(source) }
            _ = try ops.createProfile(source, settings: [("pack", .string(policy.id)), ("platform", .string(from.rawValue))], allowPackPath: false)
        }
        let (registered, registration) = try register(variant, profile: source, platform: from, knobs: policy.knobs(for: from),
                                                      username: username, roaming: Roaming())
        guard var account = registration else {
            if registered.outcome != .rejected { return registered }
            return ProbeCell(outcome: .notRun, message: "the server refused the exporter's registration (\(registered.message)), so there is no passkey to move")
        }
        let moved: JSONValue
        do {
            moved = try ops.moveCredentials(from: source, to: profile, keepSource: false)
        } catch where error.code != .storage {
            return ProbeCell(outcome: .notRun, message: "the move refused: \(error.name): \(ProbeError.quote(error.message))")
        } catch {
            throw ProbeError(.vault, "The probe's vault refused: \(error.message)")
        }
        if let left = moved["leftOut"]?.arrayValue, !left.isEmpty {
            return ProbeCell(outcome: .notRun, message: "the exporter's passkey has a counter that is not 0, which CXF's exporter leaves out (§Passkey): it cannot move")
        }
        account.profile = profile
        let importer = moved["importer"]
        let change = MoveChange(registered: Prober.authData(account.registration ?? .null) ?? [], exporter: header,
                                exporterCounts: policy.knobs(for: from).counter != .zero,
                                importerAAGUID: importer?["aaguid"]?.stringValue ?? "?",
                                flagsKnob: importer?["unconfirmed"]?.stringValue ?? "import.backupFlags")
        return try authenticate(variant, account: account, platform: column.platform, knobs: knobs, moved: change)
    }
}
