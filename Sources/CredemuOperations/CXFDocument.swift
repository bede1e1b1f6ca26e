import Foundation
import Signing
import Vault
import WebAuthn

/// The FIDO Alliance's Credential Exchange Format (CXF 1.0, Proposed Standard 2025-08-14, with its errata of
/// 2026-03-09): the unencrypted JSON document a provider exports and another imports, read and written for one
/// profile (`credemu vault import/export --format cxf`, `vault move`).
///
/// What credemu reads of it: the header (`version` 1.x, `exporterRpId`, `exporterDisplayName`, `timestamp`, `accounts`),
/// each account (`id`, `username`, `email`, `items`), each item (`id`, `title`, `creationAt`, `scope`, `credentials`),
/// and two credential types: `passkey` (`credentialId`, `rpId`, `username`, `userDisplayName`, `userHandle`, `key`
/// PKCS#8 DER, `fido2Extensions`) and `basic-auth` (`username` and `password` editable fields, the site from the
/// item's `scope.urls`). Other credential types (`totp`, `note`, `credit-card`, ...) are counted and left out: credemu
/// holds none. Members a later 1.x adds are ignored, as the spec's versioning asks (a minor version is additive);
/// a major version other than 1 is refused. The errata change only Appendix A's example document (its
/// `file` credential's contents were missing); no member credemu reads changed.
///
/// The passkey's counter: "Passkeys using a non-zero signature counter MUST be excluded from the export ...
/// Importers MUST set a zero value for the imported passkey signature counters and MUST NOT increment them after the
/// fact" (CXF §Passkey). So an export leaves out a passkey whose counter is not 0, and an import keeps no counter.
struct CXFDocument {
    /// The passkeys to store, each with its path for a later refusal (`conflict`).
    var passkeys: [(seed: CXFPasskey, path: OptionsPath)] = []
    /// The passwords to store.
    var passwords: [CXFPassword] = []
    /// Credentials of a type credemu does not hold, by type.
    var skipped: [String: Int] = [:]

    /// The major version credemu reads and writes, and the minor it writes.
    static let major = 1, minor = 0
    /// The limit CXF sets on an account's, an item's and an editable field's `id`: an opaque byte sequence of at most 64 bytes.
    static let idLimit = 64
    /// The latest UNIX time (seconds) a timestamp may give: the end of year 9999, so no date overflows the vault's milliseconds.
    static let latestTime: Int64 = 253_402_300_799

    /// Reads and checks the whole document, so a refusal names the first bad member's path
    /// (`cxf.accounts[0].items[2].credentials[0].key`) before anything is stored.
    static func read(_ document: JSONValue) throws(OperationError) -> CXFDocument {
        let root = try JSONFields<OperationError>(document, path: .root("cxf"))
        let version = try root.requiredObject("version")
        let major = try version.required("major") { (k) throws(OperationError) in try version.integer(k, in: 0...255) }
        _ = try version.required("minor") { (k) throws(OperationError) in try version.integer(k, in: 0...255) }
        guard major == Int64(CXFDocument.major) else {
            throw version.invalid("major", "must be \(CXFDocument.major): credemu reads CXF 1.x, not \(major).x")
        }
        _ = try root.requiredString("exporterRpId")
        _ = try root.requiredString("exporterDisplayName")
        _ = try root.required("timestamp") { (k) throws(OperationError) in try root.integer(k, in: 0...CXFDocument.latestTime) }
        var out = CXFDocument()
        var seen = Set<[UInt8]>(), seenPasswords = Set<String>()
        for account in try requiredObjects(root, "accounts") {
            try opaqueID(account, "id")
            _ = try account.requiredString("username")
            _ = try account.requiredString("email")
            _ = try account.string("fullName")
            _ = try account.objects("collections")
            for item in try requiredObjects(account, "items") {
                try opaqueID(item, "id")
                _ = try item.requiredString("title")
                _ = try item.string("subtitle")
                _ = try item.bool("favorite")
                _ = try item.strings("tags")
                _ = try item.integer("modifiedAt", in: 0...CXFDocument.latestTime)
                let created = try item.integer("creationAt", in: 0...CXFDocument.latestTime).map { Date(timeIntervalSince1970: Double($0)) }
                let scope = try item.object("scope")
                let urls = try scope?.strings("urls") ?? []
                _ = try scope?.objects("androidApps")
                for credential in try requiredObjects(item, "credentials") {
                    let type = try credential.requiredString("type")
                    switch type {
                    case "passkey":
                        let passkey = try CXFPasskey.read(credential, created: created)
                        guard seen.insert(passkey.credentialID).inserted else {
                            throw .conflict("\(credential.path).credentialId names a passkey the document gives twice.")
                        }
                        out.passkeys.append((passkey, credential.path))
                    case "basic-auth":
                        guard let password = try CXFPassword.read(credential, item: item, urls: urls, created: created) else { continue }
                        guard seenPasswords.insert(password.origin + "\u{0}" + password.username).inserted else {
                            throw .conflict("\(credential.path) is a second password for \(password.username) at \(password.origin) in the document.")
                        }
                        out.passwords.append(password)
                    default:
                        out.skipped[type, default: 0] += 1
                    }
                }
            }
        }
        return out
    }

    /// A required array of objects (`JSONFields.objects` takes a missing one as empty).
    static func requiredObjects(_ fields: JSONFields<OperationError>, _ key: String) throws(OperationError) -> [JSONFields<OperationError>] {
        guard fields.present(key) != nil else { throw fields.invalid(key, "is required") }
        return try fields.objects(key)
    }

    /// An account's, item's or field's `id`: base64url, 1 to 64 bytes (CXF's "opaque byte sequence with a maximum size of 64 bytes").
    static func opaqueID(_ fields: JSONFields<OperationError>, _ key: String, required: Bool = true) throws(OperationError) {
        guard let id = required ? try fields.requiredBase64URL(key) : try fields.base64URL(key) else { return }
        guard (1...idLimit).contains(id.count) else { throw fields.invalid(key, "must decode to 1 to \(idLimit) bytes, not \(id.count)") }
    }

    /// An opaque ID made from `parts`: the first 16 bytes of their SHA-256, so exporting twice gives the same IDs.
    static func derivedID(_ parts: String...) -> String {
        Base64URL.encode(Array(Digest.sha256(Array(parts.joined(separator: "\u{0}").utf8)).prefix(16)))
    }

    /// The document for one profile: one account (the profile) holding one item per passkey and per password,
    /// passkeys oldest first, then passwords by origin and user name. `key` and `password` values only when given.
    static func json(profile: String, exporter: String, at now: Date, passkeys: [(PasskeyRecord, [UInt8]?)],
                     passwords: [(PasswordRecord, String?)]) -> JSONValue {
        var items: [JSONValue] = []
        for (record, pkcs8) in passkeys {
            var passkey: [(String, JSONValue)] = [
                ("type", "passkey"), ("credentialId", .string(record.id)), ("rpId", .string(record.rpID)),
                ("username", .string(record.userName)), ("userDisplayName", .string(record.displayName)),
                ("userHandle", .string(Base64URL.encode(record.userHandle))),
            ]
            if let pkcs8 { passkey.append(("key", .string(Base64URL.encode(pkcs8)))) }
            items.append(item(id: derivedID("passkey", record.id), title: record.rpID, created: record.createdAt,
                              url: "https://" + record.rpID, credential: .object(passkey)))
        }
        for (record, secret) in passwords {
            var fields: [(String, JSONValue)] = [("type", "basic-auth"), ("username", field("string", record.username))]
            if let secret { fields.append(("password", field("concealed-string", secret))) }
            let host = URL(string: record.origin)?.host ?? record.origin
            items.append(item(id: derivedID("password", record.origin, record.username), title: host, created: record.createdAt,
                              url: record.origin, credential: .object(fields)))
        }
        let account: JSONValue = .object([
            ("id", .string(derivedID("account", profile))), ("username", .string(profile)), ("email", ""),
            ("collections", .array([])), ("items", .array(items)),
        ])
        return .object([
            ("version", .object([("major", .number(Double(major))), ("minor", .number(Double(minor)))])),
            ("exporterRpId", "credemu.invalid"), ("exporterDisplayName", .string(exporter)),
            ("timestamp", .number(now.timeIntervalSince1970.rounded(.down))), ("accounts", .array([account])),
        ])
    }

    private static func item(id: String, title: String, created: Date, url: String, credential: JSONValue) -> JSONValue {
        .object([("id", .string(id)), ("creationAt", .number(created.timeIntervalSince1970.rounded(.down))), ("title", .string(title)),
                 ("scope", .object([("urls", .array([.string(url)])), ("androidApps", .array([]))])),
                 ("credentials", .array([credential]))])
    }

    /// An editable field (CXF §EditableField): its `fieldType` and its `value`, a string.
    private static func field(_ type: String, _ value: String) -> JSONValue {
        .object([("fieldType", .string(type)), ("value", .string(value))])
    }
}

/// A CXF `passkey` credential, checked: the byte strings' bounds are WebAuthn's (a credential ID of at most 1023
/// bytes, a user handle of 1 to 64), and the key passes the one import check every imported key passes
/// (`SigningKeys.importPKCS8`, `KeyCheck`: a P-256 point that is its scalar's, Ed25519, RSA 2048 to 4096 bits).
struct CXFPasskey {
    var credentialID: [UInt8]
    var rpID: String
    var userName: String
    var displayName: String
    var userHandle: [UInt8]
    var key: any SigningKey
    var pkcs8: [UInt8]
    var created: Date?

    static func read(_ f: JSONFields<OperationError>, created: Date?) throws(OperationError) -> CXFPasskey {
        let credentialID = try f.requiredBase64URL("credentialId")
        guard (1...CredentialParameters.credentialIDLimit).contains(credentialID.count) else {
            throw f.invalid("credentialId", "must decode to 1 to \(CredentialParameters.credentialIDLimit) bytes, not \(credentialID.count)")
        }
        let rpID = try f.requiredString("rpId")
        guard CredentialParameters.isRPID(rpID) else { throw f.invalid("rpId", "must be a valid RP ID: a lower-case domain, not \"\(rpID.prefix(80))\"") }
        let userName = try f.requiredString("username"), displayName = try f.requiredString("userDisplayName")
        try Operations.checkUserName(userName, "\(f.path).username", mayBeEmpty: true)
        try Operations.checkUserName(displayName, "\(f.path).userDisplayName", mayBeEmpty: true)
        let userHandle = try f.requiredBase64URL("userHandle")
        guard (1...CredentialParameters.userHandleLimit).contains(userHandle.count) else {
            throw f.invalid("userHandle", "must decode to 1 to \(CredentialParameters.userHandleLimit) bytes, not \(userHandle.count)")
        }
        let pkcs8 = try f.requiredBase64URL("key")
        let key: any SigningKey
        do throws(SigningError) {
            key = try SigningKeys.importPKCS8(pkcs8)
        } catch {
            throw f.invalid("key", "must be a PKCS#8 DER private key (P-256, Ed25519 or RSA): \(error.message)")
        }
        if let extensions = try f.object("fido2Extensions") {
            if let hmac = try extensions.object("hmacCredentials") {
                _ = try hmac.requiredString("algorithm")
                _ = try hmac.requiredBase64URL("credWithUV")
                _ = try hmac.requiredBase64URL("credWithoutUV")
            }
            _ = try extensions.base64URL("credBlob")
            if let blob = try extensions.object("largeBlob") {
                _ = try blob.required("uncompressedSize") { (k) throws(OperationError) in try blob.integer(k, in: 0...Int64(UInt32.max)) }
                _ = try blob.requiredBase64URL("data")
            }
            _ = try extensions.bool("payments")
        }
        return CXFPasskey(credentialID: credentialID, rpID: rpID, userName: userName.isEmpty ? PlaywrightCredential.defaultUserName(userHandle) : userName,
                          displayName: displayName, userHandle: userHandle, key: key, pkcs8: pkcs8, created: created)
    }
}

/// A CXF `basic-auth` credential with both fields, at the origin of its item's first scope URL.
struct CXFPassword {
    var origin: String
    var username: String
    var password: String
    var created: Date?

    /// Nil for one without a password (nothing to sign in with); a password without a site (no `scope.urls`) is
    /// refused rather than dropped: credemu files every password under an origin.
    static func read(_ f: JSONFields<OperationError>, item: JSONFields<OperationError>, urls: [String], created: Date?) throws(OperationError) -> CXFPassword? {
        let username = try editable(f, "username", type: "string") ?? ""
        guard let password = try editable(f, "password", type: "concealed-string") else { return nil }
        try Operations.checkUserName(username, "\(f.path).username.value", mayBeEmpty: true)
        guard let first = urls.first else {
            throw .invalidInput("\(item.path).scope.urls is required for a basic-auth credential (\(f.path)): credemu files a password under its site's origin.")
        }
        guard let url = URL(string: first), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty,
              scheme == "https" || (scheme == "http" && host == "localhost") else {
            throw .invalidInput("\(item.path).scope.urls[0] must be an https URL (or http://localhost), not \"\(first.prefix(80))\".")
        }
        let origin = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        guard case .web? = try? Origin(origin) else { throw .invalidInput("\(item.path).scope.urls[0] has no web origin (\"\(first.prefix(80))\").") }
        return CXFPassword(origin: origin, username: username, password: password, created: created)
    }

    /// An editable field's value, its `fieldType` the one the member takes (CXF §EditableField).
    static func editable(_ f: JSONFields<OperationError>, _ key: String, type: String) throws(OperationError) -> String? {
        guard let field = try f.object(key) else { return nil }
        let fieldType = try field.requiredString("fieldType")
        guard fieldType == type else { throw field.invalid("fieldType", "must be \"\(type)\" for \(key), not \"\(fieldType.prefix(40))\"") }
        try CXFDocument.opaqueID(field, "id", required: false)
        _ = try field.string("label")
        return try field.requiredString("value")
    }
}
