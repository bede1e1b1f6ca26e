import Signing
import WebAuthn

/// One thing an honest browser and authenticator never send, made from a response a pack really made by
/// changing exactly that thing, so a verifier that refuses it refuses it for that fault alone.
///
/// Every other part stays valid: where the change touches what a signature covers (client data, authenticator
/// data), the response is signed again with the credential's own key (`ForgeryContext.key`): an assertion's
/// signature, a `packed` self attestation's. A response whose attestation carries a batch certificate (`x5c`)
/// cannot be signed again (the batch key is not the credential's): forging anything covered by it is refused
/// with `ForgeryError.cannotResign`. The rules are WebAuthn L3 §7.1 (registration) and §7.2 (assertion), by step.
public enum Forgery: String, Sendable, CaseIterable {
    /// Client data naming the challenge of another ceremony.
    case otherChallenge
    /// Client data naming another origin.
    case otherOrigin
    /// A cross-origin iframe's client data: `crossOrigin: true` and a `topOrigin` the RP never embeds in.
    case crossOrigin
    /// The other ceremony's `type` (`webauthn.get` in a registration, `webauthn.create` in a sign-in).
    case swappedType
    /// Authenticator data carrying the rpIdHash of another RP ID.
    case otherRPIDHash
    /// An assertion whose signature is the credential key's over other bytes.
    case badSignature
    /// A `packed` attestation whose signature does not verify (the credential key's over other bytes, or the
    /// batch certificate kept beside a signature its key never made).
    case badAttestation
    /// A credential key of an algorithm the options' `pubKeyCredParams` did not offer.
    case unofferedAlgorithm
    /// UP=0 in a modal registration or in a sign-in.
    case noUserPresence
    /// UV=0 where the options required user verification.
    case noUserVerification
    /// BS=1 with BE=0.
    case backedUpNotEligible
    /// A registration without the AT flag (and so without attested credential data).
    case noAttestedCredentialData
    /// The ED flag set with no extension data after it.
    case emptyExtensionData
    /// Bytes after the authenticator data's last CBOR item (the credential key's, or the extensions').
    case trailingBytes
    /// Client data that is not JSON.
    case clientDataNotJSON
    /// An assertion by a credential of another user of the same RP, its user handle swapped for this account's.
    case otherUsersCredential
    /// An assertion sent again, challenge and all, after the server accepted it once.
    case replayed
    /// A signature counter lower than the one the server stored (a security key's, which grows).
    case counterRegression

    /// Which ceremony's response a forgery changes.
    public enum Ceremony: String, Sendable { case registration, assertion }

    /// The ceremonies this forgery applies to.
    public var ceremonies: [Ceremony] {
        switch self {
        case .badAttestation, .unofferedAlgorithm, .noAttestedCredentialData: return [.registration]
        case .badSignature, .otherUsersCredential, .replayed, .counterRegression: return [.assertion]
        default: return [.registration, .assertion]
        }
    }

    /// A few words for tables.
    public var label: String {
        switch self {
        case .otherChallenge: return "challenge of another ceremony"
        case .otherOrigin: return "another origin"
        case .crossOrigin: return "a cross-origin iframe's client data"
        case .swappedType: return "the other ceremony's type"
        case .otherRPIDHash: return "another RP's rpIdHash"
        case .badSignature: return "a signature over other bytes"
        case .badAttestation: return "a packed attestation that does not verify"
        case .unofferedAlgorithm: return "an algorithm the options did not offer"
        case .noUserPresence: return "UP=0"
        case .noUserVerification: return "UV=0 where UV was required"
        case .backedUpNotEligible: return "BS=1 with BE=0"
        case .noAttestedCredentialData: return "no AT flag"
        case .emptyExtensionData: return "ED set, no extension data"
        case .trailingBytes: return "bytes after the CBOR"
        case .clientDataNotJSON: return "client data that is not JSON"
        case .otherUsersCredential: return "another user's credential"
        case .replayed: return "a replayed assertion"
        case .counterRegression: return "a signature counter going backwards"
        }
    }

    /// The rule a server that accepts this forgery breaks, for `ceremony`.
    public func rule(_ ceremony: Ceremony) -> String {
        let r = ceremony == .registration
        switch self {
        case .otherChallenge:
            return r ? "WebAuthn L3 §7.1 step 8: verify that C.challenge equals the base64url encoding of pkOptions.challenge"
                     : "WebAuthn L3 §7.2 step 11: verify that C.challenge equals the base64url encoding of pkOptions.challenge"
        case .otherOrigin:
            return "WebAuthn L3 §7.\(r ? "1 step 9" : "2 step 12"): verify that C.origin is an origin expected by the Relying Party"
        case .crossOrigin:
            return "WebAuthn L3 §7.\(r ? "1 steps 10 and 11" : "2 steps 13 and 14"): C.crossOrigin true or a C.topOrigin is accepted only where the RP expects to be framed by another origin, and then only by the top origins it expects"
        case .swappedType:
            return r ? "WebAuthn L3 §7.1 step 7: verify that C.type is webauthn.create" : "WebAuthn L3 §7.2 step 10: verify that C.type is webauthn.get"
        case .otherRPIDHash:
            return "WebAuthn L3 §7.\(r ? "1 step 14" : "2 step 15"): verify that the rpIdHash in authData is the SHA-256 hash of the RP ID the RP expects"
        case .badSignature:
            return "WebAuthn L3 §7.2 step 21: using the credential record's public key, verify that sig is a valid signature over authData and the client data hash"
        case .badAttestation:
            return "WebAuthn L3 §7.1 step 22 and §8.2 (packed verification procedure): verify that attStmt conveys a valid attestation signature over authData and the client data hash"
        case .unofferedAlgorithm:
            return "WebAuthn L3 §7.1 step 20: verify that the alg of the credential public key matches one of pkOptions.pubKeyCredParams"
        case .noUserPresence:
            return r ? "WebAuthn L3 §7.1 step 15: if options.mediation is not conditional, verify that the UP bit is set"
                     : "WebAuthn L3 §7.2 step 16: verify that the UP bit of the flags in authData is set"
        case .noUserVerification:
            return "WebAuthn L3 §7.\(r ? "1 step 16" : "2 step 17"): if user verification was required, verify that the UV bit is set"
        case .backedUpNotEligible:
            return "WebAuthn L3 §7.\(r ? "1 step 17" : "2 step 18"): if the BE bit is not set, verify that the BS bit is not set"
        case .noAttestedCredentialData:
            return "WebAuthn L3 §6.1 (AT flag) and §7.1 steps 13 and 20: a registration's authData carries attested credential data, the credential public key the record stores"
        case .emptyExtensionData:
            return "WebAuthn L3 §6.1: the ED flag says extension data follow as CBOR; §7.\(r ? "1 step 13" : "2 step 15") decodes authData, which is malformed without them"
        case .trailingBytes:
            return "WebAuthn L3 §6.1: authenticator data ends with its last CBOR item (the credential public key or the extensions); bytes after it make it malformed (§7.\(r ? "1 step 13" : "2 step 15"))"
        case .clientDataNotJSON:
            return "WebAuthn L3 §7.\(r ? "1 steps 5 and 6" : "2 steps 7 and 8"): clientDataJSON is UTF-8 JSON that the RP parses before any check; text that does not parse fails the ceremony"
        case .otherUsersCredential:
            return "WebAuthn L3 §7.2 steps 5 and 6: the credential must be one of allowCredentials and belong to the identified account, and response.userHandle, when present, must be that account's user handle"
        case .replayed:
            return "WebAuthn L3 §7.2 step 11 and §13.4.3: the challenge is the one of this ceremony, made fresh for it and used once; a server that keeps accepting it takes a captured response again"
        case .counterRegression:
            return "WebAuthn L3 §7.2 step 22: when either counter is non-zero, a signCount not greater than the stored one signals a possibly cloned authenticator; the RP decides, and a sign-in it lets through must at least be flagged"
        }
    }

    /// What the server should do instead.
    public var fix: String {
        switch self {
        case .otherChallenge: return "compare C.challenge with the challenge issued for this ceremony (kept server-side, in the session)"
        case .otherOrigin: return "compare C.origin with the exact origins you serve"
        case .crossOrigin: return "refuse crossOrigin true and any topOrigin unless you embed the ceremony in another origin's iframe on purpose"
        case .swappedType: return "check C.type: webauthn.create at registration, webauthn.get at sign-in"
        case .otherRPIDHash: return "compare the rpIdHash with SHA-256 of your RP ID"
        case .badSignature: return "verify the assertion signature with the stored public key before signing anyone in"
        case .badAttestation: return "run the attestation format's verification procedure whatever attestation you asked for, or strip attStmt only when you ignore it entirely"
        case .unofferedAlgorithm: return "refuse a credential key whose alg is not in the pubKeyCredParams you issued"
        case .noUserPresence: return "require UP=1 except in a registration you started with mediation conditional"
        case .noUserVerification: return "require UV=1 when your options said userVerification \"required\""
        case .backedUpNotEligible: return "refuse BS=1 when BE=0"
        case .noAttestedCredentialData: return "refuse a registration whose authData has no AT flag and no credential public key"
        case .emptyExtensionData: return "parse authData strictly: refuse the ED flag without extension CBOR"
        case .trailingBytes: return "parse authData strictly: refuse bytes left after its last CBOR item"
        case .clientDataNotJSON: return "refuse client data that is not UTF-8 JSON"
        case .otherUsersCredential: return "look the credential up among the identified account's own and check userHandle against that account"
        case .replayed: return "make each challenge single-use: drop it from the session when the ceremony finishes, whatever the outcome"
        case .counterRegression: return "store signCount after each sign-in and refuse (or flag for review) one not greater than the stored one when either is non-zero"
        }
    }

    /// The forgery named `name`, or an error naming the ones there are.
    public static func named(_ name: String) throws(ForgeryError) -> Forgery {
        guard let forgery = Forgery(rawValue: name) else {
            throw ForgeryError(.unknownForgery, "There is no forgery '\(String(name.prefix(80)))'; forgeries: "
                               + allCases.map(\.rawValue).joined(separator: ", ") + ".")
        }
        return forgery
    }
}

/// What a forgery needs beside the response: the credential's key to sign again, and the facts of the ceremony.
public struct ForgeryContext: Sendable {
    /// The credential's private key (an assertion's signer, a packed self attestation's).
    public var key: (any SigningKey)?
    /// The algorithms of the options' `pubKeyCredParams` (`unofferedAlgorithm` picks one outside them).
    public var offeredAlgorithms: [COSEAlgorithm]
    /// The user handle to put in place of the response's (`otherUsersCredential`).
    public var userHandle: [UInt8]?
    /// The counter to sign (`counterRegression`: lower than the server's stored one).
    public var signCount: UInt32?

    /// The context of a stored credential: its DER PKCS#8 key (as the vault keeps it), imported and checked.
    public init(pkcs8: [UInt8], offeredAlgorithms: [COSEAlgorithm] = COSEAlgorithm.allCases, userHandle: [UInt8]? = nil,
                signCount: UInt32? = nil) throws(ForgeryError) {
        do { key = try SigningKeys.importPKCS8(pkcs8) } catch { throw ForgeryError(.cannotResign, "The credential's key does not import: \(error.message)") }
        self.offeredAlgorithms = offeredAlgorithms
        self.userHandle = userHandle
        self.signCount = signCount
    }

    public init(key: (any SigningKey)? = nil, offeredAlgorithms: [COSEAlgorithm] = COSEAlgorithm.allCases,
                userHandle: [UInt8]? = nil, signCount: UInt32? = nil) {
        self.key = key
        self.offeredAlgorithms = offeredAlgorithms
        self.userHandle = userHandle
        self.signCount = signCount
    }
}

/// Why a forgery could not be made (errors as data).
public struct ForgeryError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No forgery by that name.
        case unknownForgery
        /// The forgery does not apply to this ceremony's response.
        case notForThisCeremony
        /// The response is not a registration or assertion in its JSON form.
        case malformedResponse
        /// The change needs the response signed again and there is no key that can (a batch certificate's statement, no key given).
        case cannotResign
        /// The forgery needs a fact of the ceremony that was not given (another user's handle, a lower counter).
        case missingContext
        /// Every algorithm credemu makes keys for was offered.
        case noUnofferedAlgorithm
    }

    public var code: Code
    public var message: String
    public var name: String { code.rawValue.prefix(1).uppercased() + code.rawValue.dropFirst() }
    public var description: String { "\(name): \(message)" }

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension Forgery {
    /// A copy of `response` (`toJSON()` form) with this forgery's one fault. `replayed` gives the response unchanged:
    /// the fault is sending it a second time.
    public func apply(to response: JSONValue, _ context: ForgeryContext = ForgeryContext()) throws(ForgeryError) -> JSONValue {
        var parts = try ForgedParts(response)
        guard ceremonies.contains(parts.ceremony) else {
            throw ForgeryError(.notForThisCeremony, "The forgery \(rawValue) applies to \(ceremonies.map(\.rawValue).joined(separator: " and ")) responses, not to \(parts.ceremony.rawValue)s.")
        }
        var resign = true
        var key = context.key
        switch self {
        case .otherChallenge:
            try parts.editClientData { $0.setting("challenge", .string(Base64URL.encode(SecureRandom.bytes(32)))) }
        case .otherOrigin:
            try parts.editClientData { $0.setting("origin", .string(Forgery.foreignOrigin)) }
        case .crossOrigin:
            try parts.editClientData { $0.setting("crossOrigin", .bool(true)).setting("topOrigin", .string(Forgery.foreignOrigin)) }
        case .swappedType:
            let other = parts.ceremony == .registration ? "webauthn.get" : "webauthn.create"
            try parts.editClientData { $0.setting("type", .string(other)) }
        case .otherRPIDHash:
            parts.authData.replaceSubrange(0..<32, with: Digest.sha256(Array("other-rp.credemu.invalid".utf8)))
        case .badSignature:
            parts.signature = try Forgery.sign(Array("credemu: not what a signature covers".utf8), with: key)
            resign = false
        case .badAttestation:
            parts.statement = try Forgery.badStatement(parts.statement.1, key: key)
            resign = false
        case .unofferedAlgorithm:
            guard let algorithm = [COSEAlgorithm.edDSA, .es256, .rs256].first(where: { !context.offeredAlgorithms.contains($0) }) else {
                throw ForgeryError(.noUnofferedAlgorithm, "The options offered every algorithm credemu makes keys for (ES256, EdDSA, RS256).")
            }
            let fresh: any SigningKey
            do { fresh = try SigningKeys.generate(algorithm) } catch {
                throw ForgeryError(.cannotResign, "No \(algorithm.name) key could be made: \(error.message)")
            }
            try parts.replaceCredentialKey(fresh)
            key = fresh
        case .noUserPresence: parts.authData[32] &= ~AuthenticatorData.Flags.userPresent.rawValue
        case .noUserVerification: parts.authData[32] &= ~AuthenticatorData.Flags.userVerified.rawValue
        case .backedUpNotEligible:
            parts.authData[32] = (parts.authData[32] | AuthenticatorData.Flags.backedUp.rawValue) & ~AuthenticatorData.Flags.backupEligible.rawValue
        case .noAttestedCredentialData:
            // The flag and what it announces go together: authData is well formed, with no credential in it.
            guard var parsed = try? AuthenticatorData(bytes: parts.authData) else { throw ForgeryError(.malformedResponse, "The authenticator data does not parse.") }
            parsed.flags.remove(.attestedCredentialData)
            parsed.attestedCredentialData = nil
            parts.authData = parsed.bytes
        case .emptyExtensionData:
            guard parts.authData[32] & AuthenticatorData.Flags.extensionData.rawValue == 0 else {
                throw ForgeryError(.malformedResponse, "The response already carries extension data; emptyExtensionData needs one without.")
            }
            parts.authData[32] |= AuthenticatorData.Flags.extensionData.rawValue
        case .trailingBytes: parts.authData += [0x00, 0x01, 0x02, 0x03]
        case .clientDataNotJSON: parts.clientData = Array("credemu: client data that is not JSON {".utf8)
        case .otherUsersCredential:
            guard let handle = context.userHandle else { throw ForgeryError(.missingContext, "otherUsersCredential needs the user handle to swap in.") }
            parts.userHandle = handle
            resign = false
        case .replayed:
            resign = false
        case .counterRegression:
            guard let count = context.signCount else { throw ForgeryError(.missingContext, "counterRegression needs the lower counter to sign.") }
            parts.authData.replaceSubrange(33..<37, with: [UInt8(count >> 24 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)])
        }
        if resign { try parts.resign(with: key) }
        return parts.json
    }

    /// An origin no RP under test serves (`.invalid` is reserved, RFC 2606).
    public static let foreignOrigin = "https://attacker.credemu.invalid"

    static func sign(_ message: [UInt8], with key: (any SigningKey)?) throws(ForgeryError) -> [UInt8] {
        guard let key else { throw ForgeryError(.cannotResign, "This forgery signs with the credential's key, and none was given.") }
        do { return try key.sign(message) } catch { throw ForgeryError(.cannotResign, "The credential's key did not sign: \(error.message)") }
    }

    /// A packed statement whose signature is over other bytes: the credential key's for self attestation (or for
    /// `none`, made packed), kept beside the batch certificate when there is one.
    static func badStatement(_ statement: CBOR, key: (any SigningKey)?) throws(ForgeryError) -> (fmt: String, CBOR) {
        guard let key else { throw ForgeryError(.cannotResign, "badAttestation signs with the credential's key, and none was given.") }
        let sig = try sign(Array("credemu: not authData || clientDataHash".utf8), with: key)
        var members: [(CBOR, CBOR)] = [(.text("alg"), .int(Int64(key.algorithm.rawValue))), (.text("sig"), .bytes(sig))]
        if let x5c = statement["x5c"] {
            members[0] = (.text("alg"), statement["alg"] ?? .int(-7))
            members.append((.text("x5c"), x5c))
        }
        return ("packed", .map(members))
    }
}

/// A response taken apart into what a forgery changes, and put back together.
struct ForgedParts {
    var source: JSONValue
    var ceremony: Forgery.Ceremony
    var clientData: [UInt8]
    var authData: [UInt8]
    /// Registration: fmt and attStmt.
    var statement: (fmt: String, CBOR) = ("none", .map([]))
    /// Assertion: the signature and user handle.
    var signature: [UInt8] = []
    var userHandle: [UInt8]?
    var publicKey: (spki: [UInt8], algorithm: COSEAlgorithm)?

    init(_ response: JSONValue) throws(ForgeryError) {
        source = response
        func bytes(_ key: String) throws(ForgeryError) -> [UInt8] {
            guard let text = response["response"]?[key]?.stringValue, let value = Base64URL.decode(text) else {
                throw ForgeryError(.malformedResponse, "The response has no base64url response.\(key).")
            }
            return value
        }
        clientData = try bytes("clientDataJSON")
        if response["response"]?["attestationObject"] != nil {
            ceremony = .registration
            guard let object = try? CBOR.decode(try bytes("attestationObject"), options: .lenient),
                  let fmt = object["fmt"]?.textValue, let attStmt = object["attStmt"], let data = object["authData"]?.bytesValue else {
                throw ForgeryError(.malformedResponse, "The attestation object is not CBOR with fmt, attStmt and authData.")
            }
            authData = data
            statement = (fmt, attStmt)
        } else {
            ceremony = .assertion
            authData = try bytes("authenticatorData")
            signature = try bytes("signature")
            userHandle = response["response"]?["userHandle"]?.stringValue.flatMap(Base64URL.decode)
        }
        guard authData.count >= 37 else { throw ForgeryError(.malformedResponse, "The authenticator data is shorter than 37 bytes.") }
    }

    mutating func editClientData(_ edit: (JSONValue) -> JSONValue) throws(ForgeryError) {
        guard let parsed = try? JSONValue.parse(clientData) else { throw ForgeryError(.malformedResponse, "The client data is not JSON.") }
        clientData = edit(parsed).serializedBytes()
    }

    /// Puts `key`'s public key in the attested credential data, in place of the credential's.
    mutating func replaceCredentialKey(_ key: any SigningKey) throws(ForgeryError) {
        guard let parsed = try? AuthenticatorData(bytes: authData), var acd = parsed.attestedCredentialData else {
            throw ForgeryError(.malformedResponse, "The authenticator data carries no attested credential data.")
        }
        acd.publicKey = key.publicKey
        var rebuilt = parsed
        rebuilt.attestedCredentialData = acd
        authData = rebuilt.bytes
        publicKey = (key.subjectPublicKeyInfo, key.algorithm)
    }

    /// Signs again what the response's signature covers: an assertion's, a packed self attestation's. `none` signs nothing.
    mutating func resign(with key: (any SigningKey)?) throws(ForgeryError) {
        let message = authData + Digest.sha256(clientData)
        switch ceremony {
        case .assertion:
            signature = try Forgery.sign(message, with: key)
        case .registration:
            guard statement.fmt != "none" else { return }
            guard statement.fmt == "packed", statement.1["x5c"] == nil, let key else {
                throw ForgeryError(.cannotResign, "The \(statement.fmt) attestation is signed by a key other than the credential's, so the forged response cannot be signed again; ask for attestation none.")
            }
            statement = ("packed", .map([(.text("alg"), .int(Int64(key.algorithm.rawValue))), (.text("sig"), .bytes(try Forgery.sign(message, with: key)))]))
        }
    }

    var json: JSONValue {
        var response = source["response"] ?? .object([])
        response = response.setting("clientDataJSON", .string(Base64URL.encode(clientData)))
        response = response.setting("authenticatorData", .string(Base64URL.encode(authData)))
        switch ceremony {
        case .registration:
            let object = CBOR.map([(.text("fmt"), .text(statement.fmt)), (.text("attStmt"), statement.1), (.text("authData"), .bytes(authData))])
            response = response.setting("attestationObject", .string(Base64URL.encode(object.encoded())))
            if let publicKey {
                response = response.setting("publicKey", .string(Base64URL.encode(publicKey.spki)))
                    .setting("publicKeyAlgorithm", .number(Double(publicKey.algorithm.rawValue)))
            }
        case .assertion:
            response = response.setting("signature", .string(Base64URL.encode(signature)))
            if let userHandle { response = response.setting("userHandle", .string(Base64URL.encode(userHandle))) }
        }
        return source.setting("response", response)
    }
}
