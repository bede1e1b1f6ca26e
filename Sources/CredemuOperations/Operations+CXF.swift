import CredemuEngine
import CredemuScenarios
import Foundation
import Vault
import WebAuthn

/// CXF out of a profile, and a move between two profiles through it (`credemu vault export --format cxf`,
/// `vault move`, `POST /vault/move`): what a user does when switching password managers, as a test can do it.
extension Operations {
    /// The profile's passkeys and passwords as one CXF document (`CXFDocument.json`), oldest passkey first; private keys
    /// and passwords only with `includeSecrets` (without them the document lists what the profile holds but cannot be
    /// imported). `rpID` keeps only that RP's passkeys and the passwords of its site.
    ///
    /// A passkey whose counter is not 0 is left out and named in `leftOut`, as CXF's exporter must (§Passkey): the
    /// importer sends 0 from then on, which an RP that checks counters would take for a cloned key.
    public func exportCXF(_ name: String, includeSecrets: Bool, rpID: String? = nil) throws(OperationError) -> (document: JSONValue, leftOut: [String]) {
        let (document, _, _, leftOut) = try Operations.cxfExport(try engine(name), includeSecrets: includeSecrets, rpID: rpID, at: clock.now())
        return (document, leftOut)
    }

    /// `exportCXF` of an engine's profile, with what went into the document: the passkeys' records and the passwords'.
    static func cxfExport(_ engine: Engine, includeSecrets: Bool, rpID: String?, at now: Date)
        throws(OperationError) -> (JSONValue, [PasskeyRecord], [PasswordRecord], [String]) {
        var passkeys: [(PasskeyRecord, [UInt8]?)] = [], leftOut: [String] = []
        for (record, pkcs8, _) in try storedCredentials(engine.vault) where rpID == nil || record.rpID == rpID {
            guard record.signCount == 0 else {
                leftOut.append(record.id)
                continue
            }
            passkeys.append((record, includeSecrets ? pkcs8 : nil))
        }
        let scoped = engine.vault
        let passwords = try stored { () throws(VaultError) -> [(PasswordRecord, String?)] in
            try scoped.allPasswords().filter { p in
                p.retiredAt == nil && (rpID == nil || URL(string: p.origin)?.host.map { $0 == rpID || $0.hasSuffix("." + rpID!) } == true)
            }.map { (p) throws(VaultError) in (p, includeSecrets ? try scoped.password(for: p) : nil) }
        }
        let exporter = "credemu (\(engine.policy.name))"
        let document = CXFDocument.json(profile: engine.profile.name, exporter: exporter, at: now, passkeys: passkeys, passwords: passwords)
        return (document, passkeys.map(\.0), passwords.map(\.0), leftOut)
    }

    /// Moves the profile `from`'s passkeys and passwords (or only `rpID`'s) into the profile `to` (`Operations.move`),
    /// for the API, the CLI and the clients.
    public func moveCredentials(from: String, to: String, keepSource: Bool, rpID: String? = nil) throws(OperationError) -> JSONValue {
        defer {
            forget(from)
            forget(to)
        }
        return try Operations.move(from: try engine(from), to: try engine(to), keepSource: keepSource, rpID: rpID, at: clock.now())
    }

    /// Moves the `source` engine's profile's passkeys and passwords (or only `rpID`'s) into the `target`'s through a
    /// CXF document: exported with its secrets, then imported as `vault import --format cxf` imports one (every member
    /// checked, each key through the import check and its public key the one the RP registered), and, unless
    /// `keepSource`, removed from the source in the same transaction: all of it lands, or nothing changes. The one move
    /// every front end makes: the API's, the CLI's, the clients' and a scenario's `move` step.
    ///
    /// With `keepSource` both profiles hold the passkeys afterwards, under the same credential IDs (the vault keys a
    /// passkey by credential ID and profile, migration 14), each its own row answered by its own pack: what a user who
    /// imports into a second manager without deleting from the first has. Afterwards the target's pack answers for
    /// them: its backup flags (`import.backupFlags`)
    /// and AAGUID, no counter (CXF), its signal handling; the target's findings say what an RP that stored the
    /// exporter's may trip on (`Engine.reviewMove`). A passkey with a counter is left in the source and named in
    /// `leftOut`. Returns `{from, to, kept, moved: {passkeys, passwords}, credentialIds, leftOut, importer}`, where
    /// `importer` is what the imported passkeys carry now.
    public static func move(from source: Engine, to target: Engine, keepSource: Bool, rpID: String?, at now: Date) throws(OperationError) -> JSONValue {
        let from = source.profile.name, to = target.profile.name
        guard from != to else { throw .invalidInput("A move needs two profiles: from and to are both '\(from)'.") }
        let (document, passkeys, passwords, leftOut) = try cxfExport(source, includeSecrets: true, rpID: rpID, at: now)
        let expecting = Dictionary(passkeys.map { ($0.credentialID, $0.publicKey) }, uniquingKeysWith: { a, _ in a })
        let (seeds, imported, _) = try cxfSeeds(document, target, expecting: expecting, at: now)
        let origin = source.vault
        try Operations.store(target.vault, seeds, passwords: imported, by: "move:" + from, at: now, logged: now) { () throws(VaultError) in
            guard !keepSource else { return }
            for record in passkeys { try origin.removePasskey(credentialID: record.credentialID) }
            for p in passwords { try origin.removePassword(id: p.id) }
            try origin.appendEvent(kind: "vault", outcome: "removed", reason: "success",
                                   detail: .object([("count", .number(Double(passkeys.count))), ("passwords", .number(Double(passwords.count))),
                                                    ("by", .string("move:" + to))]), at: now)
        }
        let settings = try importedSettings(target)
        target.reviewMove(passkeys, importedAs: settings, from: from)
        return .object([
            ("from", .string(from)), ("to", .string(to)), ("kept", .bool(keepSource)),
            ("moved", .object([("passkeys", .number(Double(seeds.count))), ("passwords", .number(Double(imported.count)))])),
            ("credentialIds", .array(passkeys.map { .string($0.id) })),
            ("leftOut", .array(leftOut.map(JSONValue.string))),
            ("importer", .object([
                ("pack", .string(target.policy.id)), ("backupEligible", .bool(settings.backupEligible)), ("backupState", .bool(settings.backupState)),
                ("aaguid", .string(AAGUID.format(settings.aaguid))), ("counter", .string(settings.counter.rawValue)),
                ("unconfirmed", .string(target.knobs.cite("import.backupFlags", target.knobs.importedBackupFlags.rawValue))),
            ])),
        ])
    }

    /// The move a scenario's `move` step makes (`DivergenceMatrix.run`'s `mover`): the scenario RP's credentials, the
    /// source's copies removed unless the step keeps them.
    public static let scenarioMover: ScenarioRunner.Mover = { source, target, rpID, keepSource, now in
        try move(from: source, to: target, keepSource: keepSource, rpID: rpID, at: now)
    }
}
