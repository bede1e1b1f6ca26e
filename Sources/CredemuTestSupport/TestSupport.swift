import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// A directory under the system temporary directory, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init() {
        path = NSTemporaryDirectory() + "credemu-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ name: String) -> String { path + "/" + name }
}

/// A fresh vault in a temporary directory, with a raw key (no Argon2id, no key file); `held`, opened as `credemu
/// serve` opens one (exclusive, so registrations are staged).
public func makeTestVault(in directory: TemporaryDirectory = TemporaryDirectory(), key: [UInt8] = Array(repeating: 7, count: 32),
                          held: Bool = false) throws -> (Vault, TemporaryDirectory) {
    (try Vault.open(path: directory.file("vault.db"), key: .raw(key), exclusive: held), directory)
}

/// The bytes of a file, for checking a failed operation left it untouched.
public func fileBytes(_ path: String) -> [UInt8] {
    FileManager.default.contents(atPath: path).map(Array.init) ?? []
}

/// Creation options shaped like py_webauthn's `options_to_json` output.
public func creationOptionsJSON(rpID: String? = "example.com", userID: [UInt8] = Array("user-1".utf8), userName: String = "alice",
                                displayName: String = "Alice", challenge: [UInt8] = Array(repeating: 1, count: 32),
                                algorithms: [Int] = [-7, -8, -257], exclude: [[UInt8]] = [],
                                userVerification: String = "preferred", attestation: String = "none",
                                extensions: JSONValue? = nil, mediation: String? = nil) -> String {
    var rp: [(String, JSONValue)] = [("name", "Example")]
    if let rpID { rp.append(("id", .string(rpID))) }
    var options: [(String, JSONValue)] = [
        ("rp", .object(rp)),
        ("user", .object([("id", .string(Base64URL.encode(userID))), ("name", .string(userName)), ("displayName", .string(displayName))])),
        ("challenge", .string(Base64URL.encode(challenge))),
        ("pubKeyCredParams", .array(algorithms.map { .object([("type", "public-key"), ("alg", .number(Double($0)))]) })),
        ("timeout", 60000),
        ("excludeCredentials", .array(exclude.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
        ("authenticatorSelection", .object([("residentKey", "preferred"), ("requireResidentKey", false), ("userVerification", .string(userVerification))])),
        ("attestation", .string(attestation)),
    ]
    if let extensions { options.append(("extensions", extensions)) }
    var document = JSONValue.object(options)
    if let mediation { document = .object([("publicKey", document), ("mediation", .string(mediation))]) }
    return document.serialized()
}

/// Request options shaped like py_webauthn's output.
public func requestOptionsJSON(rpID: String? = "example.com", challenge: [UInt8] = Array(repeating: 2, count: 32),
                               allow: [[UInt8]] = [], userVerification: String = "preferred", extensions: JSONValue? = nil) -> String {
    var options: [(String, JSONValue)] = [("challenge", .string(Base64URL.encode(challenge))), ("timeout", 60000)]
    if let rpID { options.append(("rpId", .string(rpID))) }
    options.append(("allowCredentials", .array(allow.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })))
    options.append(("userVerification", .string(userVerification)))
    if let extensions { options.append(("extensions", extensions)) }
    return JSONValue.object(options).serialized()
}

/// What an RP checks of a registration (WebAuthn L3 §7.1), enough for tests to prove a response is sound
/// without trusting the code that made it. The Python interop suite checks the same responses independently.
public struct RPCheck {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static func registration(_ response: RegistrationResponse, challenge: [UInt8], origin: String, rpID: String,
                                    requireUserPresence: Bool = true, requireUserVerification: Bool = false,
                                    offeredAlgorithms: [COSEAlgorithm] = COSEAlgorithm.allCases) throws -> AuthenticatorData {
        try clientData(response.clientDataJSON, "webauthn.create", challenge: challenge, origin: origin)
        let attestation = try CBOR.decode(response.attestationObject)
        guard let authDataBytes = attestation["authData"]?.bytesValue, let fmt = attestation["fmt"]?.textValue else {
            throw Failure(description: "attestation object")
        }
        let authData = try authenticatorData(authDataBytes, rpID: rpID, requireUserPresence: requireUserPresence,
                                             requireUserVerification: requireUserVerification)
        guard let credential = authData.attestedCredentialData, credential.credentialID == response.credentialID else {
            throw Failure(description: "attested credential data")
        }
        guard offeredAlgorithms.contains(credential.publicKey.algorithm) else { throw Failure(description: "algorithm not offered") }
        switch fmt {
        case "none":
            guard attestation["attStmt"] == .map([]) else { throw Failure(description: "none attStmt not empty") }
        case "packed":
            guard let sig = attestation["attStmt"]?["sig"]?.bytesValue,
                  attestation["attStmt"]?["alg"]?.intValue == Int64(credential.publicKey.algorithm.rawValue),
                  credential.publicKey.verify(signature: sig, message: authDataBytes + Digest.sha256(response.clientDataJSON))
            else { throw Failure(description: "packed self-attestation signature") }
        default:
            throw Failure(description: "unexpected fmt \(fmt)")
        }
        guard response.publicKey.map({ $0 == credential.publicKey.subjectPublicKeyInfo }) ?? true else { throw Failure(description: "getPublicKey() mismatch") }
        return authData
    }

    /// §7.2: client data, rpIdHash, UP, and the signature under the registered key.
    /// With `userHandle`, the account's handle the response must carry (§7.2 step 6); with `storedSignCount`, the
    /// counter stored for the credential, which a non-zero one must exceed (§7.2 step 22).
    public static func assertion(_ response: AuthenticationResponse, publicKey: COSEKey, challenge: [UInt8], origin: String,
                                 rpID: String, requireUserVerification: Bool = false, userHandle: [UInt8]? = nil,
                                 storedSignCount: UInt32 = 0) throws -> AuthenticatorData {
        try clientData(response.clientDataJSON, "webauthn.get", challenge: challenge, origin: origin)
        let authData = try authenticatorData(response.authenticatorData, rpID: rpID, requireUserPresence: true,
                                             requireUserVerification: requireUserVerification)
        guard publicKey.verify(signature: response.signature, message: response.authenticatorData + Digest.sha256(response.clientDataJSON)) else {
            throw Failure(description: "signature")
        }
        if let userHandle, let sent = response.userHandle, sent != userHandle { throw Failure(description: "user handle") }
        if (authData.signCount != 0 || storedSignCount != 0) && authData.signCount <= storedSignCount { throw Failure(description: "counter") }
        return authData
    }

    /// §7.1 steps 5-11, §7.2 steps 7-14: JSON, type, challenge, origin, and no cross-origin frame (tests embed none).
    static func clientData(_ bytes: [UInt8], _ type: String, challenge: [UInt8], origin: String) throws {
        guard let clientData = try? JSONValue.parse(bytes) else { throw Failure(description: "client data not JSON") }
        guard clientData["type"]?.stringValue == type else { throw Failure(description: "type") }
        guard clientData["challenge"]?.stringValue == Base64URL.encode(challenge) else { throw Failure(description: "challenge") }
        guard clientData["origin"]?.stringValue == origin else { throw Failure(description: "origin") }
        guard clientData["crossOrigin"]?.boolValue != true, clientData["topOrigin"] == nil else { throw Failure(description: "cross origin") }
    }

    /// §6.1 parsed strictly (no ED without extensions, no trailing bytes), then rpIdHash, UP, UV and BS/BE.
    static func authenticatorData(_ bytes: [UInt8], rpID: String, requireUserPresence: Bool, requireUserVerification: Bool) throws -> AuthenticatorData {
        guard let authData = try? AuthenticatorData(bytes: bytes) else { throw Failure(description: "authenticator data") }
        guard authData.rpIDHash == Digest.sha256(rpID.utf8) else { throw Failure(description: "rpIdHash") }
        if requireUserPresence && !authData.flags.contains(.userPresent) { throw Failure(description: "UP not set") }
        if requireUserVerification && !authData.flags.contains(.userVerified) { throw Failure(description: "UV not set") }
        if authData.flags.contains(.backedUp) && !authData.flags.contains(.backupEligible) { throw Failure(description: "BS without BE") }
        return authData
    }
}

extension AuthenticationResponse {
    /// A get's answer read back from its JSON (`PublicKeyCredential.toJSON()`'s shape), as an RP reads what a page posts.
    public init(answer: JSONValue) throws {
        func bytes(_ value: JSONValue?) throws -> [UInt8] {
            guard let bytes = Base64URL.decode(value?.stringValue ?? "") else { throw RPCheck.Failure(description: "not base64url") }
            return bytes
        }
        self.init(credentialID: try bytes(answer["rawId"]), clientDataJSON: try bytes(answer["response"]?["clientDataJSON"]),
                  authenticatorData: try bytes(answer["response"]?["authenticatorData"]), signature: try bytes(answer["response"]?["signature"]),
                  userHandle: answer["response"]?["userHandle"]?.stringValue.flatMap(Base64URL.decode))
    }
}

extension RegistrationResponse {
    /// A create's answer read back from its JSON, as an RP reads what a page posts (what `RPCheck.registration` reads of it).
    public init(answer: JSONValue) throws {
        func bytes(_ value: JSONValue?) throws -> [UInt8] {
            guard let bytes = Base64URL.decode(value?.stringValue ?? "") else { throw RPCheck.Failure(description: "not base64url") }
            return bytes
        }
        let attestationObject = try bytes(answer["response"]?["attestationObject"])
        self.init(credentialID: try bytes(answer["rawId"]), clientDataJSON: try bytes(answer["response"]?["clientDataJSON"]),
                  attestationObject: attestationObject, authenticatorData: try bytes(answer["response"]?["authenticatorData"]),
                  transports: [], publicKey: nil, publicKeyAlgorithm: .es256)
    }
}

/// A value several threads set and read.
public final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T

    public init(_ value: T) { self.value = value }

    public func get() -> T {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    public func set(_ new: T) { update { $0 = new } }

    /// Changes the value in place, under the lock (an append from several threads loses none).
    public func update(_ change: (inout T) -> Void) {
        lock.lock()
        change(&value)
        lock.unlock()
    }
}
