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
        let (passwords, passkeys) = try read(document)
        try vault.transaction { () throws(VaultError) in
            for p in passwords {
                if try vault.passwords(origin: p.origin).contains(where: { $0.username == p.username }) {
                    throw VaultError(.duplicate, "The vault already holds a password for \(p.username) at \(p.origin).")
                }
                try vault.savePassword(origin: p.origin, username: p.username, password: p.password, at: p.created,
                                       lastFilledAt: p.lastFilled, lastUsedAt: p.lastUsed)
            }
            for (record, key) in passkeys { try vault.insertPasskey(record, privateKey: key) }
        }
        return (passwords.count, passkeys.count)
    }

    /// The whole vault as a canonical fixture, secrets in the clear.
    public static func export(_ vault: Vault) throws(VaultError) -> String {
        var passwords: [JSONValue] = []
        for p in try vault.allPasswords() {
            passwords.append(passwordJSON(p, password: try vault.password(for: p)))
        }
        var passkeys: [JSONValue] = []
        for k in try vault.allPasskeys() {
            passkeys.append(passkeyJSON(k, privateKey: try vault.privateKey(for: k.credentialID)))
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
        return .object(members + [
            ("created", .string(Timestamp.format(p.createdAt))),
            ("lastFilled", Timestamp.json(p.lastFilledAt)),
            ("lastUsed", Timestamp.json(p.lastUsedAt)),
        ])
    }

    /// A password as the CLI and the API list it: its row ID, then the fixture form.
    public static func passwordListing(_ p: PasswordRecord, password: String?) -> JSONValue {
        .object([("id", .number(Double(p.id)))] + (passwordJSON(p, password: password).objectValue ?? []))
    }

    /// A passkey in fixture form; with `privateKey` nil (listings) the COSE public key stands in its place.
    public static func passkeyJSON(_ k: PasskeyRecord, privateKey: [UInt8]?) -> JSONValue {
        .object([
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
        ])
    }

    struct Password {
        var origin: String
        var username: String
        var password: String
        var created: Date
        var lastFilled: Date?
        var lastUsed: Date?
    }

    static func read(_ document: JSONValue) throws(VaultError) -> ([Password], [(PasskeyRecord, [UInt8])]) {
        let root = try Fields(document, path: "fixture")
        guard try root.string("format") == format else { throw VaultError(.invalidInput, "fixture.format must be \"\(format)\".") }
        guard try root.number("version") == Double(version) else {
            throw VaultError(.invalidInput, "fixture.version must be \(version); this credemu reads version \(version) fixtures.")
        }
        try root.onlyKeys(["format", "version", "passwords", "passkeys"])
        var passwords: [Password] = []
        for (i, item) in try root.array("passwords", optional: true).enumerated() {
            let f = try Fields(item, path: "fixture.passwords[\(i)]")
            try f.onlyKeys(["origin", "username", "password", "created", "lastFilled", "lastUsed"])
            passwords.append(Password(origin: try f.string("origin"), username: try f.string("username"),
                                      password: try f.string("password"), created: try f.time("created"),
                                      lastFilled: try f.optionalTime("lastFilled"), lastUsed: try f.optionalTime("lastUsed")))
        }
        var passkeys: [(PasskeyRecord, [UInt8])] = []
        var seen = Set<[UInt8]>()
        for (i, item) in try root.array("passkeys", optional: true).enumerated() {
            let f = try Fields(item, path: "fixture.passkeys[\(i)]")
            try f.onlyKeys(["credentialId", "rpId", "userHandle", "userName", "displayName", "algorithm", "privateKey",
                            "signCount", "counter", "backupEligible", "backupState", "aaguid", "discoverable", "attestation",
                            "hidden", "hiddenAt", "created", "lastUsed"])
            let credentialID = try f.base64URL("credentialId")
            guard (16...1023).contains(credentialID.count) else { throw f.invalid("credentialId", "must be 16 to 1023 bytes") }
            guard seen.insert(credentialID).inserted else { throw f.invalid("credentialId", "appears twice in the fixture") }
            let rpID = try f.string("rpId")
            guard RelyingPartyID.isValidDomain(rpID) || rpID == "localhost" else { throw f.invalid("rpId", "is not a valid domain") }
            let userHandle = try f.base64URL("userHandle")
            guard (1...64).contains(userHandle.count) else { throw f.invalid("userHandle", "must be 1 to 64 bytes") }
            guard let algorithm = COSEAlgorithm(name: try f.string("algorithm")) else {
                throw f.invalid("algorithm", "must be ES256, EdDSA or RS256")
            }
            let pkcs8 = try f.base64URL("privateKey")
            let key: any SigningKey
            do {
                key = try SigningKeys.importPKCS8(pkcs8, expecting: algorithm)
            } catch {
                throw f.invalid("privateKey", error.message)
            }
            let signCount = try f.optionalNumber("signCount") ?? 0
            guard signCount >= 0, signCount <= Double(UInt32.max), signCount == signCount.rounded() else {
                throw f.invalid("signCount", "must be an unsigned 32-bit integer")
            }
            let defaults = PasskeySettings.syncedPasskey
            guard let counter = CounterMode(rawValue: try f.optionalString("counter") ?? defaults.counter.rawValue) else {
                throw f.invalid("counter", "must be \"zero\" or \"increment\"")
            }
            guard let attestation = AttestationCapability(rawValue: try f.optionalString("attestation") ?? "none") else {
                throw f.invalid("attestation", "must be \"none\" or \"packed\"")
            }
            let aaguidText = try f.optionalString("aaguid") ?? AAGUID.format(defaults.aaguid)
            guard let aaguid = AAGUID.parse(aaguidText) else { throw f.invalid("aaguid", "must be a UUID") }
            let backupEligible = try f.optionalBool("backupEligible") ?? defaults.backupEligible
            let backupState = try f.optionalBool("backupState") ?? defaults.backupState
            guard backupEligible || !backupState else {
                throw f.invalid("backupState", "cannot be true when backupEligible is false (WebAuthn L3 §6.1.3)")
            }
            let hidden = try f.optionalBool("hidden") ?? false
            let settings = PasskeySettings(backupEligible: backupEligible, backupState: backupState, counter: counter,
                                           aaguid: aaguid, attestation: attestation,
                                           discoverable: try f.optionalBool("discoverable") ?? true)
            let record = PasskeyRecord(
                credentialID: credentialID, rpID: rpID, userHandle: userHandle, userName: try f.string("userName"),
                displayName: try f.optionalString("displayName") ?? "", algorithm: algorithm, publicKey: key.publicKey,
                signCount: UInt32(signCount), settings: settings, hidden: hidden,
                hiddenAt: hidden ? try f.optionalTime("hiddenAt") : nil, createdAt: try f.time("created"),
                lastUsedAt: try f.optionalTime("lastUsed"))
            passkeys.append((record, pkcs8))
        }
        return (passwords, passkeys)
    }
}

/// Typed member reads with `invalidInput` errors that name the member.
private struct Fields {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String) throws(VaultError) {
        guard value.objectValue != nil else { throw VaultError(.invalidInput, "\(path) must be an object.") }
        self.value = value
        self.path = path
    }

    func invalid(_ key: String, _ why: String) -> VaultError { VaultError(.invalidInput, "\(path).\(key) \(why).") }

    func onlyKeys(_ allowed: Set<String>) throws(VaultError) {
        for (key, _) in value.objectValue! where !allowed.contains(key) {
            throw VaultError(.invalidInput, "\(path) has an unknown member \"\(key)\".")
        }
    }

    private func present(_ key: String) -> JSONValue? {
        guard let v = value[key], !v.isNull else { return nil }
        return v
    }

    func optionalString(_ key: String) throws(VaultError) -> String? {
        guard let v = present(key) else { return nil }
        guard let s = v.stringValue else { throw invalid(key, "must be a string") }
        return s
    }

    func string(_ key: String) throws(VaultError) -> String {
        guard let s = try optionalString(key) else { throw invalid(key, "is required") }
        return s
    }

    func optionalNumber(_ key: String) throws(VaultError) -> Double? {
        guard let v = present(key) else { return nil }
        guard let n = v.numberValue else { throw invalid(key, "must be a number") }
        return n
    }

    func number(_ key: String) throws(VaultError) -> Double {
        guard let n = try optionalNumber(key) else { throw invalid(key, "is required") }
        return n
    }

    func optionalBool(_ key: String) throws(VaultError) -> Bool? {
        guard let v = present(key) else { return nil }
        guard let b = v.boolValue else { throw invalid(key, "must be true or false") }
        return b
    }

    func array(_ key: String, optional: Bool) throws(VaultError) -> [JSONValue] {
        guard let v = present(key) else {
            if optional { return [] }
            throw invalid(key, "is required")
        }
        guard let a = v.arrayValue else { throw invalid(key, "must be an array") }
        return a
    }

    func base64URL(_ key: String) throws(VaultError) -> [UInt8] {
        guard let bytes = Base64URL.decode(try string(key)) else { throw invalid(key, "is not unpadded base64url") }
        return bytes
    }

    func optionalTime(_ key: String) throws(VaultError) -> Date? {
        guard let s = try optionalString(key) else { return nil }
        guard let date = Timestamp.parse(s) else { throw invalid(key, "must be an RFC 3339 UTC time such as 2026-01-31T09:30:00Z") }
        return date
    }

    func time(_ key: String) throws(VaultError) -> Date {
        guard let d = try optionalTime(key) else { throw invalid(key, "is required") }
        return d
    }
}
