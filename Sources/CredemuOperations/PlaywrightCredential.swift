import Signing
import Vault
import WebAuthn

/// One credential of Playwright's virtual authenticator (`BrowserContext.credentials`, Playwright 1.61+): what
/// `credentials.create()` takes and `credentials.get()` and `storage_state(credentials=True)` give back.
///
/// Playwright's protocol (`VirtualCredential`, packages/playwright-core/src/server/credentials.ts) has exactly six
/// members: `id`, `rpId`, `userHandle`, `privateKey` (PKCS#8 DER), `publicKey` (SPKI DER), the byte strings base64url
/// without padding, and `signCount`. Playwright documents that an import gives `id`, `userHandle`, `privateKey` and
/// `publicKey` all four together; its code is laxer (a lone `privateKey` is silently replaced by a fresh pair), so
/// credemu holds the documented rule and refuses a partial one. `userName` and `displayName` are credemu's own, optional.
struct PlaywrightCredential {
    var rpID: String
    var credentialID: [UInt8]
    var userHandle: [UInt8]
    var key: any SigningKey
    var signCount: UInt32
    var userName: String
    var displayName: String

    /// The members credemu reads: Playwright's six and the user's names.
    static let keys: Set<String> = ["rpId", "id", "userHandle", "privateKey", "publicKey", "signCount", "userName", "displayName"]
    /// What an imported credential gives all together (Playwright's `credentials.create` documentation).
    static let importKeys = ["id", "userHandle", "privateKey", "publicKey"]
    /// The length of what Playwright generates: a credential ID and a user handle of 16 random bytes.
    static let generatedLength = 16

    /// Reads one credential; with `rpId` alone it is a fresh one: a P-256 key, a 16-byte credential ID and user handle.
    ///
    /// The key passes the one import check (`SigningKeys.importPKCS8`, `KeyCheck`) and the public key must be its
    /// own, byte for byte as DER SPKI; the bounds are §11.5's (`CredentialParameters`). A user name defaults to the
    /// user handle in base64url, since Playwright keeps none and a provider's account list shows one.
    static func read(_ value: JSONValue, path: OptionsPath) throws(OperationError) -> PlaywrightCredential {
        let fields = try JSONFields<OperationError>(value, path: path)
        try fields.onlyKeys(keys)
        let rpID = try fields.requiredString("rpId")
        guard RelyingPartyID.isValidDomain(rpID), rpID == rpID.lowercased() else {
            throw fields.invalid("rpId", "must be a valid RP ID: a lower-case domain, not \"\(rpID.prefix(80))\"")
        }
        let given = importKeys.filter { fields.present($0) != nil }
        guard given.isEmpty || given.count == importKeys.count else {
            let missing = importKeys.filter { !given.contains($0) }
            throw fields.invalid(missing[0], "is missing: an imported credential gives \(importKeys.joined(separator: ", ")) all together (without \(missing.joined(separator: ", ")))")
        }
        let signCount = UInt32(try fields.integer("signCount", in: 0...Int64(UInt32.max)) ?? 0)
        let userNameText = try fields.string("userName"), displayName = try fields.string("displayName") ?? ""
        try Operations.checkUserName(userNameText, "\(path).userName", mayBeEmpty: false)
        try Operations.checkUserName(displayName, "\(path).displayName", mayBeEmpty: true)
        var credential: PlaywrightCredential
        if given.isEmpty {
            let key: any SigningKey
            do throws(SigningError) { key = try SigningKeys.generate(.es256) } catch { throw .internalError("No key could be made: \(error.message)") }
            credential = PlaywrightCredential(rpID: rpID, credentialID: SecureRandom.bytes(generatedLength), userHandle: SecureRandom.bytes(generatedLength),
                                              key: key, signCount: signCount, userName: "", displayName: displayName)
        } else {
            let credentialID = try bytes(fields, "id")
            guard (1...CredentialParameters.credentialIDLimit).contains(credentialID.count) else {
                throw fields.invalid("id", "must decode to 1 to \(CredentialParameters.credentialIDLimit) bytes")
            }
            let userHandle = try bytes(fields, "userHandle")
            guard (1...CredentialParameters.userHandleLimit).contains(userHandle.count) else {
                throw fields.invalid("userHandle", "must decode to 1 to \(CredentialParameters.userHandleLimit) bytes")
            }
            let pkcs8 = try bytes(fields, "privateKey")
            let key: any SigningKey
            do throws(SigningError) {
                key = try SigningKeys.importPKCS8(pkcs8)
            } catch {
                throw fields.invalid("privateKey", "must be a PKCS#8 DER private key (ES256, EdDSA or RS256): \(error.message)")
            }
            guard try bytes(fields, "publicKey") == key.subjectPublicKeyInfo else {
                throw fields.invalid("publicKey", "is not the private key's public key (DER SubjectPublicKeyInfo)")
            }
            credential = PlaywrightCredential(rpID: rpID, credentialID: credentialID, userHandle: userHandle, key: key,
                                              signCount: signCount, userName: "", displayName: displayName)
        }
        credential.userName = userNameText ?? Base64URL.encode(credential.userHandle)
        return credential
    }

    /// A base64url member, required (padding allowed, as Playwright's `Buffer.from(s, "base64url")` reads it).
    private static func bytes(_ fields: JSONFields<OperationError>, _ key: String) throws(OperationError) -> [UInt8] {
        guard let text = try fields.string(key), let bytes = WebDriverArgument.base64URL(text), !bytes.isEmpty else {
            throw fields.invalid(key, "must be base64url text")
        }
        return bytes
    }

    /// The stored passkey in Playwright's form, exactly its six members: the signature counter a page would see next
    /// minus one, so 0 for a passkey whose counter stays zero (a synced passkey's, GPM's) whatever it was seeded with.
    static func json(_ record: PasskeyRecord, privateKey: [UInt8]) -> JSONValue {
        .object([
            ("id", .string(record.id)),
            ("rpId", .string(record.rpID)),
            ("userHandle", .string(Base64URL.encode(record.userHandle))),
            ("privateKey", .string(Base64URL.encode(privateKey))),
            ("publicKey", .string(Base64URL.encode(record.publicKey.subjectPublicKeyInfo))),
            ("signCount", .number(Double(record.settings.counter == .zero ? 0 : record.signCount))),
        ])
    }
}
