import Foundation
import Signing
import Synchronization
import WebAuthn

/// The demo shop: a relying party of its own that `credemu serve` runs on a second loopback listener
/// (`POST /demo`), so a newcomer does seed 000's journey in their own browser.
///
/// It is a real RP: it keeps one account with a password, issues its own challenges, and verifies every
/// registration and assertion itself (WebAuthn L3 §7.1 and §7.2: type, challenge, origin, RP ID hash, flags,
/// the signature under the registered key, the counter). The automatic upgrade's registration carries UP=0 and
/// UV=0 (seed 000: "What your server must tolerate"), so UP is required only of a registration the shop asked
/// for with a modal create. Its state lives in memory, bounded: every web page can reach loopback.
final class DemoShop: Sendable {
    static let rpID = "localhost"
    static let rpName = "credemu demo shop"
    static let username = "alice@shop.example"
    static let displayName = "Alice"
    /// Open sessions; a sign-in past this ends the oldest.
    static let sessionLimit = 64
    /// Challenges waiting for their response; one more drops the oldest.
    static let challengeLimit = 64
    /// Passkeys the account may hold; a registration past this is refused (409).
    static let passkeyLimit = 16
    /// How long a challenge stays good (the options' timeout too).
    static let challengeSeconds: TimeInterval = 300

    /// The shop's origin, `http://localhost:PORT`: a secure context, and an origin whose RP ID may be `localhost`.
    let origin: String
    /// The account's password: random for each server process, saved in the profile's vault for autofill.
    let password: String
    /// The account's user handle: the same in every run, so a passkey of an earlier run is shadowed by the next.
    let userID: [UInt8]
    private let state = Mutex(State())

    struct Passkey: Sendable {
        var id: [UInt8]
        var publicKey: COSEKey
        var signCount: UInt32
        var created: Date
        /// Made by the automatic upgrade (mediation conditional), not the account page's button.
        var automatic: Bool
        var flags: AuthenticatorData.Flags
    }

    struct Session: Sendable {
        /// "password" or "passkey".
        var method: String
        var started: Date
    }

    /// What a challenge was issued for: one session's registration (automatic or from the button), or a passkey
    /// sign-in.
    enum Purpose: Equatable, Sendable {
        case register(session: String, conditional: Bool)
        case signIn

        /// The session a registration is for.
        var session: String? {
            if case .register(let session, _) = self { return session }
            return nil
        }
    }

    struct Pending: Sendable {
        var purpose: Purpose
        var expires: Date
    }

    struct State: Sendable {
        var passkeys: [Passkey] = []
        /// Oldest first.
        var sessions: [(id: String, session: Session)] = []
        /// By the challenge's base64url, oldest first.
        var challenges: [(challenge: String, pending: Pending)] = []
    }

    init(port: UInt16) {
        origin = "http://localhost:\(port)"
        password = Base64URL.encode(SecureRandom.bytes(15))
        userID = Array(Digest.sha256(Array("credemu demo shop user:\(DemoShop.username)".utf8)).prefix(16))
    }

    // MARK: sessions

    /// Checks the password (in constant time) and opens a session.
    func signIn(username: String, password given: String) throws(DemoError) -> (String, Session) {
        let matches = APIServer.constantTimeEqual(Array(given.utf8), Array(password.utf8))
        guard username == DemoShop.username, matches else {
            throw DemoError(401, "WrongPassword", "No account \(username) with that password. The demo's account is \(DemoShop.username); its password is saved in the password manager, which fills it.")
        }
        return open("password")
    }

    private func open(_ method: String) -> (String, Session) {
        let id = Base64URL.encode(SecureRandom.bytes(32))
        let session = Session(method: method, started: Date())
        state.withLock { state in
            if state.sessions.count >= DemoShop.sessionLimit { end(state.sessions.removeFirst().id, in: &state) }
            state.sessions.append((id, session))
        }
        return (id, session)
    }

    /// Ends a session and the registrations it asked for (N2.6-AC06: a stale transaction changes nothing).
    func signOut(_ id: String) {
        state.withLock { state in end(id, in: &state) }
    }

    private func end(_ id: String, in state: inout State) {
        state.sessions.removeAll { $0.id == id }
        state.challenges.removeAll { $0.pending.purpose.session == id }
    }

    func session(_ id: String) throws(DemoError) -> Session {
        guard let found = state.withLock({ state in state.sessions.first { $0.id == id }?.session }) else {
            throw DemoError(401, "SignedOut", "The session ended (signed out, or replaced by newer sign-ins): sign in again.")
        }
        return found
    }

    /// The account as its page shows it: the user, how the session signed in, and the passkeys.
    func account(_ id: String) throws(DemoError) -> JSONValue {
        let session = try session(id)
        let passkeys = state.withLock { $0.passkeys }
        return .object([
            ("username", .string(DemoShop.username)), ("displayName", .string(DemoShop.displayName)),
            ("signedInWith", .string(session.method)), ("rpId", .string(DemoShop.rpID)), ("userId", .string(Base64URL.encode(userID))),
            ("passkeys", .array(passkeys.map(DemoShop.listing))),
        ])
    }

    static func listing(_ passkey: Passkey) -> JSONValue {
        .object([
            ("id", .string(Base64URL.encode(passkey.id))), ("algorithm", .string(passkey.publicKey.algorithm.name)),
            ("created", .string(ISO8601DateFormatter().string(from: passkey.created))), ("automatic", .bool(passkey.automatic)),
            ("signCount", .number(Double(passkey.signCount))), ("flags", flags(passkey.flags)),
        ])
    }

    static func flags(_ flags: AuthenticatorData.Flags) -> JSONValue {
        .object([("UP", .bool(flags.contains(.userPresent))), ("UV", .bool(flags.contains(.userVerified))),
                 ("BE", .bool(flags.contains(.backupEligible))), ("BS", .bool(flags.contains(.backedUp)))])
    }

    // MARK: challenges

    /// A fresh challenge for `purpose`; a newer registration of the same session supersedes an older one.
    private func issue(_ purpose: Purpose) -> [UInt8] {
        let challenge = SecureRandom.bytes(32)
        let now = Date()
        state.withLock { state in
            state.challenges.removeAll { $0.pending.expires < now || ($0.pending.purpose.session != nil && $0.pending.purpose.session == purpose.session) }
            if state.challenges.count >= DemoShop.challengeLimit { state.challenges.removeFirst() }
            state.challenges.append((Base64URL.encode(challenge), Pending(purpose: purpose, expires: now.addingTimeInterval(DemoShop.challengeSeconds))))
        }
        return challenge
    }

    /// Takes the challenge the client data names: each is good once, for its purpose, until it expires.
    private func redeem(_ challenge: String, _ accepts: (Purpose) -> Bool) throws(DemoError) -> Purpose {
        let found = state.withLock { state -> Pending? in
            guard let index = state.challenges.firstIndex(where: { $0.challenge == challenge }), accepts(state.challenges[index].pending.purpose) else { return nil }
            return state.challenges.remove(at: index).pending
        }
        guard let found, found.expires >= Date() else {
            throw DemoError(400, "UnknownChallenge", "The response answers no challenge the shop issued for this (used already, expired, superseded, or its session ended).")
        }
        return found.purpose
    }

    /// The creation options of a registration for this session: the automatic upgrade (`conditional`) or the
    /// account page's button; every passkey the shop knows is excluded (seed 000: duplicate prevention).
    func creationOptions(session id: String, conditional: Bool) throws(DemoError) -> JSONValue {
        _ = try session(id)
        let challenge = issue(.register(session: id, conditional: conditional))
        let known = state.withLock { $0.passkeys.map(\.id) }
        return .object([
            ("rp", .object([("id", .string(DemoShop.rpID)), ("name", .string(DemoShop.rpName))])),
            ("user", .object([("id", .string(Base64URL.encode(userID))), ("name", .string(DemoShop.username)), ("displayName", .string(DemoShop.displayName))])),
            ("challenge", .string(Base64URL.encode(challenge))),
            ("pubKeyCredParams", .array([COSEAlgorithm.edDSA, .es256, .rs256].map { .object([("type", "public-key"), ("alg", .number(Double($0.rawValue)))]) })),
            ("timeout", .number(DemoShop.challengeSeconds * 1000)),
            ("excludeCredentials", .array(known.map { .object([("type", "public-key"), ("id", .string(Base64URL.encode($0)))]) })),
            ("authenticatorSelection", .object([("residentKey", "required"), ("requireResidentKey", true), ("userVerification", "preferred")])),
            ("attestation", "none"),
        ])
    }

    /// The request options of a passkey sign-in: discoverable (no allow list), as a "Sign in with a passkey" button asks.
    func requestOptions() -> JSONValue {
        .object([
            ("challenge", .string(Base64URL.encode(issue(.signIn)))), ("rpId", .string(DemoShop.rpID)),
            ("timeout", .number(DemoShop.challengeSeconds * 1000)), ("userVerification", "preferred"),
        ])
    }

    // MARK: verification

    /// Verifies a registration (`RegistrationResponseJSON`) for this session (§7.1) and keeps its passkey.
    func register(session id: String, _ credential: JSONValue) throws(DemoError) -> (Passkey, conditional: Bool) {
        _ = try session(id)
        let rawID = try DemoShop.credentialID(credential)
        let clientDataJSON = try DemoShop.bytes(credential["response"]?["clientDataJSON"], "response.clientDataJSON")
        let attestationBytes = try DemoShop.bytes(credential["response"]?["attestationObject"], "response.attestationObject")
        let challenge = try clientData(clientDataJSON, type: "webauthn.create")
        let purpose = try redeem(challenge) { $0.session == id }
        guard case .register(_, let conditional) = purpose else { throw DemoError(400, "UnknownChallenge", "The challenge was not issued for a registration.") }
        let attestation: CBOR
        do { attestation = try CBOR.decode(attestationBytes) } catch { throw DemoError(400, "BadAttestationObject", "response.attestationObject is not CBOR: \(error).") }
        // The shop asks for attestation "none": a browser then sends fmt "none" with an empty statement (§8.7).
        guard attestation["fmt"]?.textValue == "none", attestation["attStmt"] == .map([]) else {
            throw DemoError(400, "UnexpectedAttestation", "The shop asked for attestation \"none\"; the response carries fmt \(attestation["fmt"]?.textValue ?? "(none)").")
        }
        guard let authDataBytes = attestation["authData"]?.bytesValue else { throw DemoError(400, "BadAttestationObject", "The attestation object has no authData.") }
        let authData = try DemoShop.authenticatorData(authDataBytes)
        // UP=0 and UV=0 are what an automatic upgrade carries: required only of a modal create (seed 000).
        if !conditional && !authData.flags.contains(.userPresent) {
            throw DemoError(400, "UserNotPresent", "A registration the shop asked for with a modal create must carry UP=1.")
        }
        guard let attested = authData.attestedCredentialData, authData.flags.contains(.attestedCredentialData) else {
            throw DemoError(400, "NoCredential", "The authenticator data carries no attested credential data.")
        }
        guard attested.credentialID == rawID else { throw DemoError(400, "CredentialIDMismatch", "The attested credential ID is not the response's rawId.") }
        guard attested.credentialID.count <= 1023 else { throw DemoError(400, "CredentialIDTooLong", "A credential ID is at most 1023 bytes (§5.8.3).") }
        let passkey = Passkey(id: rawID, publicKey: attested.publicKey, signCount: authData.signCount, created: Date(), automatic: conditional, flags: authData.flags)
        try state.withLock { (state) throws(DemoError) in
            guard state.sessions.contains(where: { $0.id == id }) else { throw DemoError(401, "SignedOut", "The session ended while the passkey was being made: nothing was registered.") }
            guard !state.passkeys.contains(where: { $0.id == rawID }) else { throw DemoError(409, "CredentialExists", "That credential is registered already.") }
            guard state.passkeys.count < DemoShop.passkeyLimit else {
                throw DemoError(409, "TooManyPasskeys", "The demo's account holds \(DemoShop.passkeyLimit) passkeys already: restart credemu serve to start again.")
            }
            state.passkeys.append(passkey)
        }
        return (passkey, conditional)
    }

    /// Verifies an assertion (`AuthenticationResponseJSON`, §7.2) and opens a session signed in with the passkey.
    func signIn(_ credential: JSONValue) throws(DemoError) -> (String, Passkey, AuthenticatorData) {
        let rawID = try DemoShop.credentialID(credential)
        let clientDataJSON = try DemoShop.bytes(credential["response"]?["clientDataJSON"], "response.clientDataJSON")
        let authDataBytes = try DemoShop.bytes(credential["response"]?["authenticatorData"], "response.authenticatorData")
        let signature = try DemoShop.bytes(credential["response"]?["signature"], "response.signature")
        let challenge = try clientData(clientDataJSON, type: "webauthn.get")
        _ = try redeem(challenge) { $0 == .signIn }
        guard let known = state.withLock({ state in state.passkeys.first { $0.id == rawID } }) else {
            throw DemoError(404, "UnknownCredential", "The shop knows no passkey \(Base64URL.encode(rawID)) (one of an earlier run? The shop's accounts live in memory).",
                            extra: [("unknownCredentialId", .string(Base64URL.encode(rawID)))])
        }
        if let handle = credential["response"]?["userHandle"], !handle.isNull {
            guard try DemoShop.bytes(handle, "response.userHandle") == userID else { throw DemoError(400, "UserHandleMismatch", "The user handle is not the account's.") }
        }
        let authData = try DemoShop.authenticatorData(authDataBytes)
        guard authData.flags.contains(.userPresent) else { throw DemoError(400, "UserNotPresent", "A sign-in must carry UP=1.") }
        guard known.publicKey.verify(signature: signature, message: authDataBytes + Digest.sha256(clientDataJSON)) else {
            throw DemoError(400, "BadSignature", "The signature does not verify under the registered public key.")
        }
        try state.withLock { (state) throws(DemoError) in
            guard let index = state.passkeys.firstIndex(where: { $0.id == rawID }) else { throw DemoError(404, "UnknownCredential", "The passkey was removed meanwhile.") }
            let stored = state.passkeys[index].signCount
            // §7.2 step 22: a counter that does not grow is a sign of a cloned authenticator; 0 and 0 means none kept.
            if (stored != 0 || authData.signCount != 0) && authData.signCount <= stored {
                throw DemoError(400, "CounterDidNotIncrease", "The signature counter went from \(stored) to \(authData.signCount).")
            }
            state.passkeys[index].signCount = authData.signCount
        }
        let (id, _) = open("passkey")
        return (id, known, authData)
    }

    /// The client data's checks (§7.1 steps 7-10, §7.2 steps 11-14); returns its challenge.
    private func clientData(_ bytes: [UInt8], type: String) throws(DemoError) -> String {
        let data: JSONValue
        do { data = try JSONValue.parse(bytes, maxDepth: 4) } catch { throw DemoError(400, "BadClientData", "clientDataJSON is not JSON: \(error).") }
        guard data["type"]?.stringValue == type else { throw DemoError(400, "WrongCeremonyType", "clientDataJSON.type must be \(type).") }
        guard data["origin"]?.stringValue == origin else {
            throw DemoError(400, "WrongOrigin", "clientDataJSON.origin is \(data["origin"]?.stringValue ?? "missing"), not the shop's \(origin).")
        }
        guard data["crossOrigin"]?.boolValue != true else { throw DemoError(400, "CrossOrigin", "The shop is not embedded in another site: crossOrigin must not be true.") }
        guard let challenge = data["challenge"]?.stringValue else { throw DemoError(400, "BadClientData", "clientDataJSON has no challenge.") }
        return challenge
    }

    /// The authenticator data, whose RP ID hash must be the shop's (§7.1 step 13, §7.2 step 15).
    private static func authenticatorData(_ bytes: [UInt8]) throws(DemoError) -> AuthenticatorData {
        let authData: AuthenticatorData
        do { authData = try AuthenticatorData(bytes: bytes) } catch { throw DemoError(400, "BadAuthenticatorData", "The authenticator data does not parse: \(error).") }
        guard authData.rpIDHash == Digest.sha256(Array(rpID.utf8)) else {
            throw DemoError(400, "WrongRPIDHash", "The authenticator data's RP ID hash is not SHA-256 of \(rpID).")
        }
        if authData.flags.contains(.backedUp) && !authData.flags.contains(.backupEligible) {
            throw DemoError(400, "BackupStateWithoutEligibility", "BS is set without BE (§6.1.3).")
        }
        return authData
    }

    /// `id`, equal to `rawId`, of a `public-key` credential.
    private static func credentialID(_ credential: JSONValue) throws(DemoError) -> [UInt8] {
        guard credential["type"]?.stringValue == "public-key" else { throw DemoError(400, "BadCredential", "credential.type must be public-key.") }
        let raw = try bytes(credential["rawId"], "rawId")
        guard credential["id"]?.stringValue == Base64URL.encode(raw), !raw.isEmpty else { throw DemoError(400, "BadCredential", "credential.id must be rawId in base64url.") }
        return raw
    }

    private static func bytes(_ value: JSONValue?, _ field: String) throws(DemoError) -> [UInt8] {
        guard let text = value?.stringValue, let bytes = Base64URL.decode(text) else { throw DemoError(400, "BadCredential", "credential.\(field) must be base64url.") }
        return bytes
    }
}

/// A refusal of the demo shop: its HTTP status, a name and a message, and any member the page reads.
struct DemoError: Error {
    var status: Int
    var name: String
    var message: String
    var extra: [(String, JSONValue)] = []

    init(_ status: Int, _ name: String, _ message: String, extra: [(String, JSONValue)] = []) {
        self.status = status
        self.name = name
        self.message = message
        self.extra = extra
    }

    var body: JSONValue { ErrorBody.json([("name", .string(name)), ("message", .string(message))] + extra) }
}
