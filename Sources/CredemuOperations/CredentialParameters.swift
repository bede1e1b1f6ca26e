import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// WebAuthn L3 §11.5's Credential Parameters: what Add Credential injects into a virtual authenticator and Get
/// Credentials (§11.6) gives back for each of its credentials.
struct CredentialParameters {
    var credentialID: [UInt8]
    var isResidentCredential: Bool
    var rpID: String
    var privateKey: any SigningKey
    var userHandle: [UInt8]
    /// nil: no signature counter (`signCount: null`), the credential's counter stays zero.
    var signCount: UInt32?
    var largeBlob: [UInt8]?
    /// nil when the parameters leave them out: the authenticator's defaults then (§11.1 `defaultBackupEligibility`).
    var backupEligibility: Bool?
    var backupState: Bool?
    var userName: String
    var userDisplayName: String

    static let keys: Set<String> = ["credentialId", "isResidentCredential", "rpId", "privateKey", "userHandle", "signCount",
                                    "largeBlob", "backupEligibility", "backupState", "userName", "userDisplayName"]
    /// CTAP 2.1 §6.1's longest credential ID; WebAuthn's longest user handle (§5.4.3 `user.id`).
    static let credentialIDLimit = 1023
    static let userHandleLimit = 64
    /// User names and display names are kept as a browser would show them: at most 1,024 bytes each.
    static let nameLimit = 1024

    /// §11.5's remote end steps over `parameters` for the authenticator `key`: every refusal is `InvalidArgument`.
    ///
    /// The private key may be ES256 (the only one §11.5 names), EdDSA or RS256, whichever `SigningKeys.importPKCS8`
    /// imports, checked there as a fixture's key is (`KeyCheck`); a U2F-only key takes ES256 alone. A large blob is kept only when the key processes `largeBlob` (§11.5).
    static func read(_ parameters: JSONValue, for key: AuthenticatorOptions, path: OptionsPath = "parameters") throws(OperationError) -> CredentialParameters {
        try WebDriverArgument.reading { () throws(WebDriverArgument) in
            let fields = try JSONFields<WebDriverArgument>(parameters, path: path)
            try fields.onlyKeys(keys)
            let credentialID = try bytes(fields, "credentialId", required: true)!
            guard (1...credentialIDLimit).contains(credentialID.count) else {
                throw fields.invalid("credentialId", "must decode to 1 to \(credentialIDLimit) bytes")
            }
            guard let resident = try fields.bool("isResidentCredential") else { throw fields.invalid("isResidentCredential", "is required: true or false") }
            let rpID = try fields.requiredString("rpId")
            guard RelyingPartyID.isValidDomain(rpID), rpID == rpID.lowercased() else {
                throw fields.invalid("rpId", "must be a valid RP ID: a lower-case domain, not \"\(rpID.prefix(80))\"")
            }
            let pkcs8 = try bytes(fields, "privateKey", required: true)!
            let signingKey: any SigningKey
            do throws(SigningError) {
                signingKey = try SigningKeys.importPKCS8(pkcs8, expecting: key.isU2F ? .es256 : nil)
            } catch {
                throw fields.invalid("privateKey", "must be an RFC 5958 asymmetric key package of one private key (ES256\(key.isU2F ? ", which a U2F-only key needs" : ", EdDSA or RS256")): \(error.message)")
            }
            let userHandle = try bytes(fields, "userHandle", required: false)
            if resident, userHandle == nil { throw fields.invalid("userHandle", "is required for a resident credential") }
            if let userHandle, userHandle.count > userHandleLimit {
                throw fields.invalid("userHandle", "must decode to at most \(userHandleLimit) bytes")
            }
            guard let count = fields.value["signCount"] else { throw fields.invalid("signCount", "is required: an integer from 0 to 4294967295, or null") }
            var signCount: UInt32?
            if !count.isNull {
                guard let n = count.numberValue, let integer = JSONValue.number(n).integerValue(in: 0...Int64(UInt32.max)) else {
                    throw fields.invalid("signCount", "must be an integer from 0 to 4294967295, or null")
                }
                signCount = UInt32(integer)
            }
            var largeBlob: [UInt8]?
            if key.processes("largeBlob"), let blob = try bytes(fields, "largeBlob", required: false) {
                guard blob.count <= Vault.largeBlobLimit else { throw fields.invalid("largeBlob", "must decode to at most \(Vault.largeBlobLimit) bytes") }
                largeBlob = blob
            }
            let (userName, displayName) = (try fields.string("userName") ?? "", try fields.string("userDisplayName") ?? "")
            guard userName.utf8.count <= nameLimit, displayName.utf8.count <= nameLimit else {
                throw WebDriverArgument.invalidField("\(path).userName and \(path).userDisplayName hold at most \(nameLimit) bytes each.")
            }
            return CredentialParameters(
                credentialID: credentialID, isResidentCredential: resident, rpID: rpID, privateKey: signingKey, userHandle: userHandle ?? [],
                signCount: signCount, largeBlob: largeBlob,
                backupEligibility: try fields.bool("backupEligibility"), backupState: try fields.bool("backupState"),
                userName: userName, userDisplayName: displayName)
        }
    }

    /// A base64url member (padding allowed, `WebDriverArgument.base64URL`).
    private static func bytes(_ fields: JSONFields<WebDriverArgument>, _ key: String, required: Bool) throws(WebDriverArgument) -> [UInt8]? {
        guard let text = try fields.string(key) else {
            if required { throw fields.invalid(key, "is required: base64url text") }
            return nil
        }
        guard let bytes = WebDriverArgument.base64URL(text) else { throw fields.invalid(key, "must be base64url text") }
        return bytes
    }

    /// §11.6's object for a stored credential, its private key as PKCS#8 in base64url; `signCount` null for a
    /// credential without a counter; no `userHandle` for a server-side credential injected without one.
    static func json(_ record: PasskeyRecord, privateKey: [UInt8], largeBlob: [UInt8]?) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("credentialId", .string(record.id)),
            ("isResidentCredential", .bool(record.settings.discoverable)),
            ("rpId", .string(record.rpID)),
            ("privateKey", .string(Base64URL.encode(privateKey))),
            ("signCount", record.settings.counter == .zero ? .null : .number(Double(record.signCount))),
            ("backupEligibility", .bool(record.settings.backupEligible)),
            ("backupState", .bool(record.settings.backupState)),
            ("userName", .string(record.userName)),
            ("userDisplayName", .string(record.displayName)),
        ]
        if !record.userHandle.isEmpty { members.insert(("userHandle", .string(Base64URL.encode(record.userHandle))), at: 4) }
        if let largeBlob { members.append(("largeBlob", .string(Base64URL.encode(largeBlob)))) }
        return .object(members)
    }
}
