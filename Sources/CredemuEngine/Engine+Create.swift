import Foundation
import Signing
import Vault
import WebAuthn

extension Engine {
    /// `navigator.credentials.create()` with a modal confirmation the simulated user accepts
    /// (WebAuthn L3 §5.1.3 for the client steps, §6.3.2 for the authenticator's).
    public func create(_ options: CreationOptions, caller: Caller, settings: PasskeySettings? = nil) throws(WebAuthnError) -> RegistrationResponse {
        if options.mediation == "conditional" {
            throw .notSupported("Conditional create (mediation \"conditional\") needs a provider policy; none is configured for this engine.")
        }
        let rpID = try relyingPartyID(options.rp.id, caller: caller)
        let algorithm = try negotiateAlgorithm(options.pubKeyCredParams)
        try checkExclusions(options.excludeCredentials, rpID: rpID)

        let settings = settings ?? authenticator.newPasskeys
        let userVerified = options.userVerification != .discouraged
        let key: any SigningKey
        do {
            key = try SigningKeys.generate(algorithm)
        } catch {
            throw WebAuthnError(.unknownError, "Key generation failed: \(error.message)")
        }
        let credentialID = SecureRandom.bytes(authenticator.credentialIDLength)
        var flags: AuthenticatorData.Flags = [.userPresent]
        if userVerified { flags.insert(.userVerified) }
        if settings.backupEligible { flags.insert(.backupEligible) }
        if settings.backupEligible && settings.backupState { flags.insert(.backedUp) }
        let authData = AuthenticatorData(
            rpIDHash: Digest.sha256(rpID.utf8), flags: flags, signCount: 0,
            attestedCredentialData: .init(aaguid: settings.aaguid, credentialID: credentialID, publicKey: key.publicKey)).bytes
        let clientData = clientData(.create, challenge: options.challenge, caller: caller).bytes

        let statement: AttestationObject.Statement
        if settings.attestation == .packed && (options.attestation == "direct" || options.attestation == "enterprise") {
            do {
                statement = .packedSelf(algorithm: algorithm, signature: try key.sign(authData + Digest.sha256(clientData)))
            } catch {
                throw WebAuthnError(.unknownError, "Attestation signing failed: \(error.message)")
            }
        } else {
            statement = .none
        }

        let record = PasskeyRecord(
            credentialID: credentialID, rpID: rpID, userHandle: options.user.id, userName: options.user.name,
            displayName: options.user.displayName, algorithm: algorithm, publicKey: key.publicKey, signCount: 0,
            settings: settings, createdAt: clock.now())
        do {
            try vault.insertPasskey(record, privateKey: key.pkcs8)
        } catch {
            throw Engine.storageFailure(error)
        }
        remember(key, for: credentialID)

        var extensionResults: [(String, JSONValue)] = []
        if options.wantsCredProps { extensionResults.append(("credProps", .object([("rk", .bool(settings.discoverable))]))) }
        return RegistrationResponse(
            credentialID: credentialID, clientDataJSON: clientData,
            attestationObject: AttestationObject(authenticatorData: authData, statement: statement).encoded,
            authenticatorData: authData, transports: authenticator.transports, publicKey: key.subjectPublicKeyInfo,
            publicKeyAlgorithm: algorithm, authenticatorAttachment: authenticator.attachment,
            clientExtensionResults: extensionResults)
    }

    /// The first of the RP's `pubKeyCredParams` this authenticator supports (§5.1.3 steps 10 and 11; an empty
    /// list means ES256 then RS256).
    func negotiateAlgorithm(_ params: [CreationOptions.Parameter]) throws(WebAuthnError) -> COSEAlgorithm {
        let requested = params.isEmpty
            ? [COSEAlgorithm.es256.rawValue, COSEAlgorithm.rs256.rawValue]
            : params.filter { $0.type == "public-key" }.map(\.alg)
        for alg in requested {
            if let algorithm = COSEAlgorithm(rawValue: alg), authenticator.algorithms.contains(algorithm) { return algorithm }
        }
        let offered = authenticator.algorithms.map { "\($0.name) (\($0.rawValue))" }.joined(separator: ", ")
        throw .notSupported("None of the requested algorithms \(requested) is supported; this authenticator offers \(offered).")
    }

    /// §6.3.2 step 3: a credential in `excludeCredentials` for this RP means the user already has one here.
    func checkExclusions(_ excluded: [CredentialDescriptor], rpID: String) throws(WebAuthnError) {
        guard !excluded.isEmpty else { return }
        let stored: [PasskeyRecord]
        do {
            stored = try vault.passkeys(rpID: rpID, includeHidden: true)
        } catch {
            throw Engine.storageFailure(error)
        }
        let ids = Set(excluded.filter { $0.type == "public-key" }.map(\.id))
        if let match = stored.first(where: { ids.contains($0.credentialID) }) {
            throw .invalidState("The user attempted to register an authenticator that contains one of the credentials already registered with the relying party (credential \(match.id) for \(match.userName)).")
        }
    }
}
