import CredemuEngine
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
        let (document, _, _, leftOut) = try cxfExport(name, includeSecrets: includeSecrets, rpID: rpID)
        return (document, leftOut)
    }

    /// `exportCXF` with what went into the document: the passkeys' records and the passwords'.
    private func cxfExport(_ name: String, includeSecrets: Bool, rpID: String?)
        throws(OperationError) -> (JSONValue, [PasskeyRecord], [PasswordRecord], [String]) {
        let engine = try self.engine(name)
        var passkeys: [(PasskeyRecord, [UInt8]?)] = [], leftOut: [String] = []
        for (record, pkcs8, _) in try storedCredentials(name) where rpID == nil || record.rpID == rpID {
            guard record.signCount == 0 else {
                leftOut.append(record.id)
                continue
            }
            passkeys.append((record, includeSecrets ? pkcs8 : nil))
        }
        let scoped = vault.scoped(to: name)
        let passwords = try stored { () throws(VaultError) -> [(PasswordRecord, String?)] in
            try scoped.allPasswords().filter { p in
                p.retiredAt == nil && (rpID == nil || URL(string: p.origin)?.host.map { $0 == rpID || $0.hasSuffix("." + rpID!) } == true)
            }.map { (p) throws(VaultError) in (p, includeSecrets ? try scoped.password(for: p) : nil) }
        }
        let exporter = "credemu (\(engine.policy.name))"
        let document = CXFDocument.json(profile: name, exporter: exporter, at: clock.now(), passkeys: passkeys, passwords: passwords)
        return (document, passkeys.map(\.0), passwords.map(\.0), leftOut)
    }

    /// Moves the profile `from`'s passkeys and passwords (or only `rpID`'s) into the profile `to` through a CXF
    /// document: exported with its secrets, then imported as `vault import --format cxf` imports one (every member
    /// checked, each key through the import check and its public key the one the RP registered), and, unless
    /// `keepSource`, removed from `from` in the same transaction: all of it lands, or nothing changes. `keepSource`
    /// copies passwords only: the vault keys passkeys by credential ID across its profiles (`passkeys.credential_id`
    /// is the primary key), so two profiles of one vault cannot both hold one; two vaults can (export, then import).
    ///
    /// Afterwards `to`'s pack answers for them: its backup flags and AAGUID in its assertions (an RP that stored
    /// the exporter's sees them change), no counter (CXF), its signal handling. A passkey with a counter is left in
    /// `from` and named in `leftOut`. Returns `{from, to, kept, moved: {passkeys, passwords}, leftOut, importer}`,
    /// where `importer` is what the imported passkeys carry now.
    public func moveCredentials(from: String, to: String, keepSource: Bool, rpID: String? = nil) throws(OperationError) -> JSONValue {
        guard from != to else { throw .invalidInput("A move needs two profiles: from and to are both '\(from)'.") }
        let target = try engine(to)
        let (document, passkeys, passwords, leftOut) = try cxfExport(from, includeSecrets: true, rpID: rpID)
        if keepSource, let first = passkeys.first {
            throw .conflict("The vault holds each credential ID once across its profiles, so '\(to)' cannot hold a copy of '\(from)''s passkey \(first.id) beside it: move without keepSource, or export --format cxf from one vault and import into another to keep both.")
        }
        let source = vault.scoped(to: from)
        let expecting = Dictionary(passkeys.map { ($0.credentialID, $0.publicKey) }, uniquingKeysWith: { a, _ in a })
        let answer = try importCredentials(to, format: .cxf, document.serialized(), by: "move:" + from, expecting: expecting) { () throws(VaultError) in
            guard !keepSource else { return }
            for record in passkeys { try source.removePasskey(credentialID: record.credentialID) }
            for p in passwords { try source.removePassword(id: p.id) }
            try source.appendEvent(kind: "vault", outcome: "removed", reason: "success",
                                   detail: .object([("count", .number(Double(passkeys.count))), ("passwords", .number(Double(passwords.count))),
                                                    ("by", .string("move:" + to))]), at: clock.now())
        }
        if !keepSource { forget(from) }
        let settings = try Operations.seededSettings(target, discoverable: true, backupEligible: nil, backupState: nil, counted: false)
        return .object([
            ("from", .string(from)), ("to", .string(to)), ("kept", .bool(keepSource)),
            ("moved", .object([("passkeys", answer["imported"]?["passkeys"] ?? 0), ("passwords", answer["imported"]?["passwords"] ?? 0)])),
            ("credentialIds", .array(passkeys.map { .string($0.id) })),
            ("leftOut", .array(leftOut.map(JSONValue.string))),
            ("importer", .object([
                ("pack", .string(target.policy.id)), ("backupEligible", .bool(settings.backupEligible)), ("backupState", .bool(settings.backupState)),
                ("aaguid", .string(AAGUID.format(settings.aaguid))), ("counter", .string(settings.counter.rawValue)),
                ("unconfirmed", "No provider documents the flags and AAGUID it gives an imported passkey: credemu gives the importer's new-passkey settings, and no counter (CXF §Passkey)."),
            ])),
        ])
    }
}
