import Foundation
import Signing
import Vault
import WebAuthn

extension Engine {
    /// `navigator.credentials.get()` with the simulated user choosing a credential (WebAuthn L3 §5.1.4, §6.3.3).
    ///
    /// - Parameter pick: the credential the user picks when several match; by default the most recently used
    ///   (or, failing that, the newest).
    public func get(_ options: RequestOptions, caller: Caller, pick: [UInt8]? = nil) throws(WebAuthnError) -> AuthenticationResponse {
        let rpID = try relyingPartyID(options.rpId, caller: caller)
        let record = try chooseCredential(options, rpID: rpID, pick: pick)
        let key = try signingKey(for: record)

        let signCount = record.settings.counter == .increment ? record.signCount &+ 1 : 0
        var flags: AuthenticatorData.Flags = [.userPresent]
        if options.userVerification != .discouraged { flags.insert(.userVerified) }
        if record.settings.backupEligible { flags.insert(.backupEligible) }
        if record.settings.backupEligible && record.settings.backupState { flags.insert(.backedUp) }
        let authData = AuthenticatorData(rpIDHash: Digest.sha256(rpID.utf8), flags: flags, signCount: signCount).bytes
        let clientData = clientData(.get, challenge: options.challenge, caller: caller).bytes
        let signature: [UInt8]
        do {
            signature = try key.sign(authData + Digest.sha256(clientData))
        } catch {
            throw WebAuthnError(.unknownError, "Signing failed: \(error.message)")
        }
        do {
            try vault.recordAssertion(credentialID: record.credentialID, signCount: signCount, at: clock.now())
        } catch {
            throw Engine.storageFailure(error)
        }
        return AuthenticationResponse(
            credentialID: record.credentialID, clientDataJSON: clientData, authenticatorData: authData, signature: signature,
            userHandle: record.userHandle, authenticatorAttachment: authenticator.attachment)
    }

    /// The credentials a get may use (never hidden ones), then the user's choice among them.
    func chooseCredential(_ options: RequestOptions, rpID: String, pick: [UInt8]?) throws(WebAuthnError) -> PasskeyRecord {
        let allowed = options.allowCredentials.filter { $0.type == "public-key" }.map(\.id)
        var candidates: [PasskeyRecord] = []
        do {
            if allowed.isEmpty {
                candidates = try vault.passkeys(rpID: rpID).filter(\.settings.discoverable)
            } else {
                // Look the allowed IDs up one by one: an RP's allow list is short, a vault may be large.
                for id in allowed {
                    if let record = try vault.passkey(id: id), record.rpID == rpID, !record.hidden,
                       !candidates.contains(where: { $0.credentialID == id }) {
                        candidates.append(record)
                    }
                }
            }
        } catch {
            throw Engine.storageFailure(error)
        }
        guard !candidates.isEmpty else {
            let scope = allowed.isEmpty ? "no discoverable credential" : "none of the \(allowed.count) allowed credentials"
            throw .notAllowed("The operation either timed out or was not allowed: the vault holds \(scope) for \(rpID).")
        }
        if let pick {
            guard let chosen = candidates.first(where: { $0.credentialID == pick }) else {
                throw .notAllowed("The operation either timed out or was not allowed: the credential \(Base64URL.encode(pick)) the user was to pick is not offered for \(rpID).")
            }
            return chosen
        }
        return candidates.max { a, b in
            (a.lastUsedAt ?? a.createdAt, a.createdAt) < (b.lastUsedAt ?? b.createdAt, b.createdAt)
        }!
    }
}
