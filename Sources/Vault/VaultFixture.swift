import Foundation
import Signing
import WebAuthn

/// The vault fixture format: a JSON document that seeds a vault with passwords and passkeys, and what
/// `credemu vault export` writes. Schema: `vault-fixtures/vault-fixture.schema.json`.
///
/// Export is canonical (fixed member order, records sorted, two-space indentation), so importing a canonical
/// fixture and exporting it again gives the same bytes.
public enum VaultFixture {
    public static let format = "credemu-vault"
    public static let version = 1

    /// Seeds the vault from a fixture: everything is checked first and stored in one transaction, so a bad
    /// record or a collision leaves the vault as it was. Returns (passwords, passkeys) imported.
    @discardableResult
    public static func importFixture(_ text: String, into vault: Vault) throws(VaultError) -> (Int, Int) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw VaultError(.invalidInput, "The fixture is not valid JSON: \(error.description).")
        }
        let (passwords, passkeys, ctap) = try read(document)
        try vault.transaction { () throws(VaultError) in
            for p in passwords {
                if try vault.passwords(origin: p.origin).contains(where: { $0.username == p.username }) {
                    throw VaultError(.duplicate, "The vault already holds a password for \(p.username) at \(p.origin).")
                }
                try vault.savePassword(origin: p.origin, username: p.username, password: p.password, at: p.created,
                                       lastFilledAt: p.lastFilled, lastUsedAt: p.lastUsed, savedIn: p.savedIn)
            }
            try vault.insertPasskeys(passkeys)
            for (credentialID, state) in ctap { try vault.setCredentialExtensions(credentialID, credProtect: state.0, credBlob: state.1) }
        }
        return (passwords.count, passkeys.count)
    }

    /// The whole vault as a canonical fixture. Private keys and passwords are in it, in the clear, only with
    /// `includeSecrets`; without them the export lists what the vault holds but cannot be imported.
    public static func export(_ vault: Vault, includeSecrets: Bool) throws(VaultError) -> String {
        var passwords: [JSONValue] = []
        for p in try vault.allPasswords() {
            passwords.append(passwordJSON(p, password: includeSecrets ? try vault.password(for: p) : nil))
        }
        var passkeys: [JSONValue] = []
        for k in try vault.allPasskeys() {
            guard includeSecrets else {
                passkeys.append(passkeyJSON(k, privateKey: nil))
                continue
            }
            let ctap = try vault.credentialExtensions(k.credentialID)
            passkeys.append(passkeyJSON(k, privateKey: try vault.privateKey(for: k.credentialID),
                                        prfSecret: try vault.prfSecret(for: k.credentialID), largeBlob: try vault.largeBlob(for: k.credentialID),
                                        credProtect: ctap.credProtect == 1 ? nil : ctap.credProtect, credBlob: ctap.credBlob))
        }
        return JSONValue.object([
            ("format", .string(format)),
            ("version", .number(Double(version))),
            ("passwords", .array(passwords)),
            ("passkeys", .array(passkeys)),
        ]).pretty()
    }

    /// A password in fixture form; without the secret when `password` is nil (listings).
    public static func passwordJSON(_ p: PasswordRecord, password: String?) -> JSONValue {
        var members: [(String, JSONValue)] = [("origin", .string(p.origin)), ("username", .string(p.username))]
        if let password { members.append(("password", .string(password))) }
        members += [
            ("created", .string(Timestamp.format(p.createdAt))),
            ("lastFilled", Timestamp.json(p.lastFilledAt)),
            ("lastUsed", Timestamp.json(p.lastUsedAt)),
        ]
        if let savedIn = p.savedIn { members.append(("savedIn", .string(savedIn))) }
        return .object(members)
    }

    /// A password as the CLI and the API list it: its row ID, then the fixture form.
    public static func passwordListing(_ p: PasswordRecord, password: String?) -> JSONValue {
        .object([("id", .number(Double(p.id)))] + (passwordJSON(p, password: password).objectValue ?? [])
                + (p.retiredAt.map { [("retired", .string(Timestamp.format($0)))] } ?? []))
    }

    /// A passkey in fixture form; with `privateKey` nil (listings) the COSE public key stands in its place. The
    /// extension secrets come last, only in an export with secrets and only when the passkey has them.
    public static func passkeyJSON(_ k: PasskeyRecord, privateKey: [UInt8]?, prfSecret: [UInt8]? = nil, largeBlob: [UInt8]? = nil,
                                   credProtect: Int? = nil, credBlob: [UInt8]? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("credentialId", .string(k.id)),
            ("rpId", .string(k.rpID)),
            ("userHandle", .string(Base64URL.encode(k.userHandle))),
            ("userName", .string(k.userName)),
            ("displayName", .string(k.displayName)),
            ("algorithm", .string(k.algorithm.name)),
            privateKey.map { ("privateKey", .string(Base64URL.encode($0))) } ?? ("publicKey", .string(Base64URL.encode(k.publicKey.encoded))),
            ("signCount", .number(Double(k.signCount))),
            ("counter", .string(k.settings.counter.rawValue)),
            ("backupEligible", .bool(k.settings.backupEligible)),
            ("backupState", .bool(k.settings.backupState)),
            ("aaguid", .string(AAGUID.format(k.settings.aaguid))),
            ("discoverable", .bool(k.settings.discoverable)),
            ("attestation", .string(k.settings.attestation.rawValue)),
            ("hidden", .bool(k.hidden)),
            ("hiddenAt", Timestamp.json(k.hiddenAt)),
            ("created", .string(Timestamp.format(k.createdAt))),
            ("lastUsed", Timestamp.json(k.lastUsedAt)),
        ]
        // Only when set, so a fixture made before them exports as it was.
        if let shadow = k.shadowedBy { members.append(("shadowedBy", .string(Base64URL.encode(shadow)))) }
        if k.editedByUser { members.append(("editedByUser", true)) }
        if let prfSecret { members.append(("prfSecret", .string(Base64URL.encode(prfSecret)))) }
        if let largeBlob { members.append(("largeBlob", .string(Base64URL.encode(largeBlob)))) }
        if let credProtect { members.append(("credProtect", .number(Double(credProtect)))) }
        if let credBlob { members.append(("credBlob", .string(Base64URL.encode(credBlob)))) }
        return .object(members)
    }

    struct Password {
        var origin: String
        var username: String
        var password: String
        var created: Date
        var lastFilled: Date?
        var lastUsed: Date?
        var savedIn: String?
    }

    /// The fixture's records; the third member is each credential's CTAP 2.1 state (credProtect level, credBlob) when it has one.
    static func read(_ document: JSONValue) throws(VaultError)
        -> ([Password], [(PasskeyRecord, [UInt8], [UInt8]?, [UInt8]?)], [([UInt8], (Int?, [UInt8]?))]) {
        let root = try JSONFields<VaultError>(document, path: "fixture")
        guard try root.string("format") == format else { throw root.invalid("format", "must be \"\(format)\"") }
        guard try root.number("version") == Double(version) else {
            throw root.invalid("version", "must be \(version); this credemu reads version \(version) fixtures")
        }
        try root.onlyKeys(["format", "version", "passwords", "passkeys"])
        var passwords: [Password] = []
        for f in try root.objects("passwords") {
            try f.onlyKeys(["origin", "username", "password", "created", "lastFilled", "lastUsed", "savedIn"])
            let savedIn = try f.string("savedIn")
            if let savedIn { try Vault.checkStoreName(savedIn) }
            passwords.append(Password(origin: try f.requiredString("origin"), username: try f.requiredString("username"),
                                      password: try f.requiredString("password"), created: try f.required("created", f.time),
                                      lastFilled: try f.time("lastFilled"), lastUsed: try f.time("lastUsed"), savedIn: savedIn))
        }
        var passkeys: [(PasskeyRecord, [UInt8], [UInt8]?, [UInt8]?)] = []
        var ctap: [([UInt8], (Int?, [UInt8]?))] = []
        var seen = Set<[UInt8]>()
        var shadowed: [(PasskeyRecord, JSONFields<VaultError>)] = []
        for f in try root.objects("passkeys") {
            try f.onlyKeys(["credentialId", "rpId", "userHandle", "userName", "displayName", "algorithm", "privateKey",
                            "signCount", "counter", "backupEligible", "backupState", "aaguid", "discoverable", "attestation",
                            "hidden", "hiddenAt", "created", "lastUsed", "shadowedBy", "editedByUser", "prfSecret", "largeBlob",
                            "credProtect", "credBlob"])
            let credentialID = try f.requiredBase64URL("credentialId")
            guard (16...1023).contains(credentialID.count) else { throw f.invalid("credentialId", "must be 16 to 1023 bytes") }
            guard seen.insert(credentialID).inserted else { throw f.invalid("credentialId", "appears twice in the fixture") }
            let rpID = try f.requiredString("rpId")
            // A U2F-era credential is stored under its FIDO AppID URL (WebAuthn L3 §10.1.1), without a user handle.
            let appID = VaultFixture.isAppID(rpID)
            guard RelyingPartyID.isValidDomain(rpID) || rpID == "localhost" || appID else {
                throw f.invalid("rpId", "is not a valid domain or an https AppID URL")
            }
            let userHandle = try f.requiredBase64URL("userHandle")
            guard (appID ? 0...64 : 1...64).contains(userHandle.count) else { throw f.invalid("userHandle", "must be 1 to 64 bytes") }
            guard let algorithm = COSEAlgorithm(name: try f.requiredString("algorithm")) else {
                throw f.invalid("algorithm", "must be ES256, EdDSA or RS256")
            }
            let pkcs8 = try f.requiredBase64URL("privateKey")
            let publicKey: COSEKey
            do {
                publicKey = try SigningKeys.publicKey(pkcs8: pkcs8, expecting: algorithm)
            } catch {
                throw f.invalid("privateKey", error.message)
            }
            let signCount = try f.integer("signCount", in: 0...Int64(UInt32.max)) ?? 0
            let defaults = PasskeySettings.syncedPasskey
            guard let counter = CounterMode(rawValue: try f.string("counter") ?? defaults.counter.rawValue) else {
                throw f.invalid("counter", "must be \"zero\" or \"increment\"")
            }
            guard let attestation = AttestationCapability(rawValue: try f.string("attestation") ?? "none") else {
                throw f.invalid("attestation", "must be \"none\" or \"packed\"")
            }
            let aaguidText = try f.string("aaguid") ?? AAGUID.format(defaults.aaguid)
            guard let aaguid = AAGUID.parse(aaguidText) else { throw f.invalid("aaguid", "must be a UUID") }
            let backupEligible = try f.bool("backupEligible") ?? defaults.backupEligible
            let backupState = try f.bool("backupState") ?? defaults.backupState
            guard backupEligible || !backupState else {
                throw f.invalid("backupState", "cannot be true when backupEligible is false (WebAuthn L3 §6.1.3)")
            }
            let hidden = try f.bool("hidden") ?? false
            // Read either way, so a malformed value is refused rather than dropped; only a hidden passkey has one.
            let hiddenAt = try f.time("hiddenAt")
            guard hidden || hiddenAt == nil else { throw f.invalid("hiddenAt", "is only for a hidden passkey (\"hidden\": true)") }
            let settings = PasskeySettings(backupEligible: backupEligible, backupState: backupState, counter: counter,
                                           aaguid: aaguid, attestation: attestation,
                                           discoverable: try f.bool("discoverable") ?? true)
            let record = PasskeyRecord(
                credentialID: credentialID, rpID: rpID, userHandle: userHandle, userName: try f.requiredString("userName"),
                displayName: try f.string("displayName") ?? "", algorithm: algorithm, publicKey: publicKey,
                signCount: UInt32(signCount), settings: settings, hidden: hidden,
                hiddenAt: hiddenAt, createdAt: try f.required("created", f.time),
                lastUsedAt: try f.time("lastUsed"), shadowedBy: try f.base64URL("shadowedBy"),
                editedByUser: try f.bool("editedByUser") ?? false)
            if record.shadowedBy != nil { shadowed.append((record, f)) }
            let prfSecret = try f.base64URL("prfSecret")
            guard prfSecret.map({ $0.count == 32 }) ?? true else { throw f.invalid("prfSecret", "must be 32 bytes") }
            let largeBlob = try f.base64URL("largeBlob")
            guard (largeBlob?.count ?? 0) <= Vault.largeBlobLimit else { throw f.invalid("largeBlob", "must be at most \(Vault.largeBlobLimit) bytes") }
            guard !appID || !settings.discoverable else { throw f.invalid("discoverable", "must be false for a credential under an AppID (U2F)") }
            let credProtect = try f.integer("credProtect", in: 1...3).map { Int($0) }
            let credBlob = try f.base64URL("credBlob")
            guard (credBlob?.count ?? 0) <= Vault.credBlobLimit else { throw f.invalid("credBlob", "must be at most \(Vault.credBlobLimit) bytes") }
            passkeys.append((record, pkcs8, prfSecret, largeBlob))
            if credProtect != nil || credBlob != nil { ctap.append((credentialID, (credProtect, credBlob))) }
        }
        // A shadow is a newer passkey of the same account in the fixture (so no chain of shadows can loop).
        if !shadowed.isEmpty {
            let byID = Dictionary(passkeys.map { ($0.0.credentialID, $0.0) }, uniquingKeysWith: { a, _ in a })
            for (record, f) in shadowed {
                guard let shadow = byID[record.shadowedBy!], shadow.rpID == record.rpID, shadow.userHandle == record.userHandle,
                      (shadow.createdAt, Base64URL.encode(shadow.credentialID)) > (record.createdAt, record.id) else {
                    throw f.invalid("shadowedBy", "must name a newer passkey of the same rpId and userHandle in the fixture")
                }
            }
        }
        return (passwords, passkeys, ctap)
    }

    /// An https URL with a valid host and a path: what a U2F RP set as its AppID (FIDO AppID and Facet v2.0 §3).
    static func isAppID(_ text: String) -> Bool {
        guard text.hasPrefix("https://"), text.utf8.count <= 2048 else { return false }
        let authority = text.dropFirst("https://".count).prefix { $0 != "/" }
        let host = authority.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        return RelyingPartyID.isValidDomain(host) && text.dropFirst("https://".count).contains("/")
    }
}
