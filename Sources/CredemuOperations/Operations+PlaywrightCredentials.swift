import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// Playwright's `BrowserContext.credentials` (Playwright 1.61+) answered by a credemu profile of any pack: `create`
/// seeds a passkey, `get` lists them with their private keys (`delete` is `removePasskey`). The operator's alone: a
/// page never reaches a private key.
///
/// Where credemu and Playwright's own authenticator differ, credemu plays the profile's pack: a synced passkey's
/// counter stays zero (GPM's), so `signCount` reads 0 there whatever the seed said, where Playwright counts up by one.
extension Operations {
    /// `credentials.create(rp_id, id=, user_handle=, private_key=, public_key=, sign_count=)` on the profile
    /// (`PlaywrightCredential.read`): a discoverable passkey with the pack's new-passkey settings. A credential ID the
    /// vault holds already is a `conflict`. Returns it in Playwright's form.
    public func createPlaywrightCredential(_ name: String, _ body: JSONValue) throws(OperationError) -> JSONValue {
        let engine = try self.engine(name)
        let credential = try PlaywrightCredential.read(body, path: "body")
        let seed = try Operations.seed(credential, engine, at: clock.now())
        try store(name, [seed], by: "playwright")
        return PlaywrightCredential.json(seed.record, privateKey: seed.pkcs8)
    }

    /// `credentials.get(id=, rp_id=)`: every passkey the profile holds (seeded, imported or registered by a page;
    /// hidden and shadowed ones too, as the vault keeps them), in the order they were made, filtered by RP ID and
    /// credential ID when given.
    public func playwrightCredentials(_ name: String, rpID: String?, id: String?) throws(OperationError) -> [JSONValue] {
        _ = try profile(name)
        let wanted: [UInt8]?
        if let id {
            guard let bytes = WebDriverArgument.base64URL(id), !bytes.isEmpty else { throw .invalidInput("query.id '\(id.prefix(80))' is not a base64url credential ID.") }
            wanted = bytes
        } else {
            wanted = nil
        }
        return try storedCredentials(name).filter { record, _, _ in
            (rpID == nil || record.rpID == rpID) && (wanted == nil || record.credentialID == wanted)
        }.map { record, pkcs8, _ in PlaywrightCredential.json(record, privateKey: pkcs8) }
    }

    /// The profile's passkeys with their private keys and large blobs, oldest first (ties by credential ID).
    func storedCredentials(_ name: String) throws(OperationError) -> [(PasskeyRecord, [UInt8], [UInt8]?)] {
        try Operations.storedCredentials(vault.scoped(to: name))
    }

    /// `storedCredentials` of a vault scoped to a profile.
    static func storedCredentials(_ scoped: Vault) throws(OperationError) -> [(PasskeyRecord, [UInt8], [UInt8]?)] {
        try stored { () throws(VaultError) in
            try scoped.allPasskeys().sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.map { (record) throws(VaultError) in
                (record, try scoped.privateKey(for: record.credentialID), try scoped.largeBlob(for: record.credentialID))
            }
        }
    }

    /// A passkey to store: the record, its PKCS#8 private key and large blob.
    struct Seed {
        var record: PasskeyRecord
        var pkcs8: [UInt8]
        var largeBlob: [UInt8]?
    }

    /// A Playwright credential as the profile's passkey: discoverable, the pack's settings, the seeded counter
    /// kept only where the pack counts.
    static func seed(_ credential: PlaywrightCredential, _ engine: Engine, at now: Date) throws(OperationError) -> Seed {
        let settings = try seededSettings(engine, discoverable: true, backupEligible: nil, backupState: nil, counted: true)
        let record = PasskeyRecord(credentialID: credential.credentialID, rpID: credential.rpID, userHandle: credential.userHandle,
                                   userName: credential.userName, displayName: credential.displayName, algorithm: credential.key.algorithm,
                                   publicKey: credential.key.publicKey, signCount: settings.counter == .zero ? 0 : credential.signCount,
                                   settings: settings, createdAt: now)
        return Seed(record: record, pkcs8: credential.key.pkcs8, largeBlob: nil)
    }

    /// The settings a passkey brought in from outside gets on the profile: the pack's new-passkey settings (a
    /// security key's, with its §11.1 backup defaults), the given backup flags over them, and no counter when the
    /// pack keeps none or the credential has none (`counted` false: WebDriver's `signCount` null). A key that cannot
    /// hold a discoverable credential refuses one, as §11.5 Add Credential does.
    static func seededSettings(_ engine: Engine, discoverable: Bool, backupEligible: Bool?, backupState: Bool?,
                               counted: Bool) throws(OperationError) -> PasskeySettings {
        var settings: PasskeySettings
        if let key = engine.securityKey {
            if discoverable, !key.supportsResidentKeys {
                throw .invalidInput("The profile \(engine.profile.name) is a security key without resident keys\(key.isU2F ? " (U2F only)" : ""), so it cannot hold a discoverable credential.")
            }
            let eligible = backupEligible ?? key.defaultBackupEligibility
            settings = engine.keyCredentialSettings(discoverable: discoverable, backupEligible: eligible,
                                                    backupState: eligible && (backupState ?? key.defaultBackupState))
        } else {
            settings = engine.knobs.newPasskeySettings
            settings.discoverable = discoverable
            if let backupEligible { settings.backupEligible = backupEligible }
            settings.backupState = settings.backupEligible && (backupState ?? settings.backupState)
        }
        if !counted { settings.counter = .zero }
        return settings
    }

    /// Stores the passkeys (and a CXF document's passwords) in the profile in one transaction, or none: a credential ID
    /// the profile holds already, or a password the profile holds for the same origin and user name, is a `conflict`.
    /// Logged as one `vault` event, `added`, naming the credential when there is one.
    func store(_ name: String, _ seeds: [Seed], passwords: [CXFPassword] = [], by: String, at now: Date? = nil) throws(OperationError) {
        try Operations.store(vault.scoped(to: name), seeds, passwords: passwords, by: by, at: now ?? clock.now(), logged: clock.now())
        forget(name)
    }

    /// `store` into a vault scoped to a profile: the passwords saved `at` (unless they give their own time), the event
    /// logged at `logged`; `first` runs first in the same transaction (a move's removal from its source, so the move
    /// lands whole or not at all).
    static func store(_ scoped: Vault, _ seeds: [Seed], passwords: [CXFPassword] = [], by: String, at time: Date, logged: Date,
                      first: () throws(VaultError) -> Void = {}) throws(OperationError) {
        let name = scoped.profile
        var detail: [(String, JSONValue)] = seeds.count == 1 && passwords.isEmpty
            ? [("credentialId", .string(seeds[0].record.id)), ("rpId", .string(seeds[0].record.rpID))]
            : [("count", .number(Double(seeds.count)))] + (passwords.isEmpty ? [] : [("passwords", .number(Double(passwords.count)))])
        detail.append(("by", .string(by)))
        try stored { () throws(VaultError) in
            try scoped.transaction { () throws(VaultError) in
                try first()
                try scoped.insertPasskeys(seeds.map { ($0.record, $0.pkcs8, nil, $0.largeBlob) })
                for p in passwords {
                    if try scoped.passwords(origin: p.origin).contains(where: { $0.username == p.username }) {
                        throw VaultError(.duplicate, "The profile \(name) already holds a password for \(p.username) at \(p.origin).")
                    }
                    try scoped.savePassword(origin: p.origin, username: p.username, password: p.password, at: p.created ?? time)
                }
                try scoped.appendEvent(kind: "vault", outcome: "added", reason: "success", detail: .object(detail), at: logged)
            }
        }
    }
}
