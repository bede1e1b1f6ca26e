import Signing
import Vault
import WebAuthn

extension Engine {
    /// The attestation statement of a new credential (WebAuthn L3 §8): what the credential can give, when the RP's
    /// conveyance preference asks for it (§5.4.7; Chrome treats "indirect" as "direct"), else "none".
    ///
    /// - `packed`: self attestation by the credential's key, for "direct" or "enterprise".
    /// - `batch`: full attestation by the vault's batch key for the credential's AAGUID, its certificate chaining to
    ///   the vault's test CA (`Vault.attestationRoot`); `fido-u2f` (§8.6) for a U2F-only key's credential, `packed`
    ///   with `x5c` (§8.2) otherwise.
    func attestationStatement(_ capability: AttestationCapability, conveyance: String, algorithm: COSEAlgorithm, key: any SigningKey,
                              authData: [UInt8], clientData: [UInt8], rpID: String,
                              credentialID: [UInt8]) throws(CeremonyError) -> AttestationObject.Statement {
        // Hashed only for a statement that signs it: a `none` registration (most) makes no digest.
        var clientDataHash: [UInt8] { Digest.sha256(clientData) }
        switch capability {
        case .none:
            return .none
        case .packed:
            guard conveyance == "direct" || conveyance == "enterprise" else { return .none }
            return .packedSelf(algorithm: algorithm, signature: try signAttestation { () throws(SigningError) in try key.sign(authData + clientDataHash) })
        case .batch:
            guard ["direct", "indirect", "enterprise"].contains(conveyance) else { return .none }
            let aaguid = securityKey?.isU2F == true ? [UInt8](repeating: 0, count: 16) : knobs.aaguid
            // The certificate's O: the pack's name cut as the name's bound counts it, or its ID when nothing of the name is left.
            let vendor = [policy.name, policy.id].lazy.map(CertificateName.fitting).first { !$0.isEmpty } ?? AttestationCA.organization
            let batch = try store { () throws(VaultError) in
                try vault.attestationBatch(aaguid: aaguid, vendor: vendor,
                                           transports: U2FTransports(webAuthnNames: knobs.transports))
            }
            if securityKey?.isU2F == true {
                guard let data = AttestationObject.fidoU2FVerificationData(rpIDHash: rpIDHash(rpID), clientDataHash: clientDataHash,
                                                                           credentialID: credentialID, publicKey: key.publicKey) else {
                    throw CeremonyError(WebAuthnError(.unknownError, "A U2F key signs only ES256 credentials with IDs up to 255 bytes."), reason: .storage)
                }
                return .fidoU2F(signature: try signAttestation { () throws(SigningError) in try batch.sign(data) }, x5c: batch.x5c)
            }
            return .packed(algorithm: .es256, signature: try signAttestation { () throws(SigningError) in try batch.sign(authData + clientDataHash) },
                           x5c: batch.x5c)
        }
    }

    private func signAttestation(_ sign: () throws(SigningError) -> [UInt8]) throws(CeremonyError) -> [UInt8] {
        do { return try sign() } catch {
            throw CeremonyError(WebAuthnError(.unknownError, "Attestation signing failed: \(error.message)"), reason: .storage)
        }
    }
}
