import Foundation
import Signing
import Vault
import WebAuthn

extension Engine {
    /// `navigator.credentials.create()`: modal, or an automatic upgrade when `mediation` is "conditional"
    /// (WebAuthn L3 §5.1.3 for the client steps, §6.3.2 for the authenticator's).
    ///
    /// - Parameter settings: overrides the pack's settings for the new passkey.
    public func create(_ options: CreationOptions, caller: Caller, settings: PasskeySettings? = nil) throws(CeremonyError) -> RegistrationResponse {
        // Checked once; a bad RP ID is thrown, in its place among the checks, by the ceremony below.
        let rpID = Result { () throws(CeremonyError) in try relyingPartyID(options.rp.id, caller: caller) }
        if case .success(let id) = rpID { reviewCreate(options, caller: caller, rpID: id) }
        if options.mediation == "conditional" { return try conditionalCreate(options, rpID: rpID, caller: caller, settings: settings) }
        return try modalCreate(options, rpID: rpID, caller: caller, settings: settings, note: nil)
    }

    /// A create with the provider's sheet: the user confirms (or cancels, or lets it time out).
    func modalCreate(_ options: CreationOptions, rpID checkedRPID: Result<String, CeremonyError>, caller: Caller, settings: PasskeySettings?,
                     note: String?) throws(CeremonyError) -> RegistrationResponse {
        var detail = ceremonyDetail(options, caller: caller)
        if let note { detail.append(("note", .string(note))) }
        do throws(CeremonyError) {
            try checkCreationRequest(options)
            let rpID = try checkedRPID.get()
            let appidExclude = try creationAppIDExclude(options, caller: caller)
            let protection = try requestedProtection(options)
            let algorithm = try negotiateAlgorithm(options.pubKeyCredParams)
            // WebAuthn L3 §5.1.3: an authenticator of another attachment is not used (Chromium: not a candidate).
            if let asked = options.authenticatorAttachment, ["platform", "cross-platform"].contains(asked), asked != knobs.attachment,
               knobs.otherAttachment == .notOffered {
                detail.append(("attachment", .string(knobs.cite("authenticator.otherAttachment", knobs.otherAttachment.rawValue))))
                // Chrome's sheet then offers security keys and phones (`Sheet`): the user cancels it, or with none used
                // it settles at the timeout.
                if let failure = declined(try nextDecision(), timeout: options.timeout) { throw failure }
                let millis = Int(saturating: options.timeout ?? 300_000)
                throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the RP asked for a \(asked) authenticator and the provider's passkeys are \(knobs.attachment); the browser's sheet offered security keys and phones, none was used, and the request settled at its \(millis) ms timeout."),
                                    reason: .attachmentNotOffered, settlesAfterMillis: millis)
            }
            if largeBlobRequirementUnmet(options.extensionInputs) {
                detail.append(("largeBlob", .string(knobs.cite("extensions.largeBlob", knobs.largeBlob.rawValue))))
                throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the RP requires large blob support, which the provider does not have; the user dismissed the dialog."),
                                    reason: .largeBlobUnsupported)
            }
            guard profile.passkeysEnabled else {
                throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: passkeys are turned off in the provider."),
                                    reason: .passkeysDisabled)
            }
            try checkKeyCanStore(options)
            if let match = try excludedMatch(options, rpID: rpID, appidExclude: appidExclude) { throw exclusionFailure(match, timeout: options.timeout) }
            if let failure = declined(try nextDecision(), timeout: options.timeout) { throw failure }
            let verification = try creationVerification(options)
            try checkKeyCanAnswer(verification, timeout: options.timeout, forResidentKey: verification != options.userVerification)
            try checkProtectionEnforceable(protection)
            let response = try makeCredential(options, rpID: rpID, algorithm: algorithm, caller: caller, settings: settings,
                                              userPresent: true, userVerified: reportsUserVerification(verification),
                                              detail: &detail)
            log("create", "success", .success, detail + [("credentialId", .string(Base64URL.encode(response.credentialID))),
                                                         ("userVerification", userVerificationCitation), response.flagsDetail])
            return response
        } catch {
            throw failed("create", error, detail)
        }
    }

    /// Generates, stores and answers with a new credential; the caller has made every check.
    func makeCredential(_ options: CreationOptions, rpID: String, algorithm: COSEAlgorithm, caller: Caller, settings given: PasskeySettings?,
                        userPresent: Bool, userVerified: Bool, detail: inout [(String, JSONValue)]) throws(CeremonyError) -> RegistrationResponse {
        let settings: PasskeySettings
        if let given { settings = given } else { settings = try newCredentialSettings(options) }
        let key: any SigningKey
        do {
            key = try SigningKeys.generate(algorithm)
        } catch {
            throw CeremonyError(WebAuthnError(.unknownError, "Key generation failed: \(error.message)"), reason: .storage)
        }
        let credentialID = SecureRandom.bytes(16)
        var flags: AuthenticatorData.Flags = []
        if userPresent { flags.insert(.userPresent) }
        if userVerified { flags.insert(.userVerified) }
        if settings.backupEligible { flags.insert(.backupEligible) }
        if settings.backupEligible && settings.backupState { flags.insert(.backedUp) }
        let authenticatorExtensions = try creationExtensions(options, rpID: rpID)
        let authData = AuthenticatorData(
            rpIDHash: rpIDHash(rpID), flags: flags, signCount: 0,
            attestedCredentialData: .init(aaguid: settings.aaguid, credentialID: credentialID, publicKey: key.publicKey),
            extensions: authenticatorExtensions.authenticatorData).bytes
        let clientData = clientData(.create, challenge: options.challenge, caller: caller).bytes

        let statement = try attestationStatement(settings.attestation, conveyance: options.attestation, algorithm: algorithm, key: key,
                                                 authData: authData, clientData: clientData, rpID: rpID, credentialID: credentialID)
        let record = PasskeyRecord(
            credentialID: credentialID, rpID: rpID, userHandle: options.user.id, userName: options.user.name,
            displayName: options.user.displayName, algorithm: algorithm, publicKey: key.publicKey, signCount: 0,
            settings: settings, createdAt: clock.now())
        // GPM's enclave gives every passkey its PRF secret at birth (passkeys.rs `do_create`); no RP can tell that
        // from a secret made later, so one is made here only when the create asks for the extension and the
        // provider evaluates it (a get makes it otherwise: `assertionExtensionResults`): a registration that does not
        // ask costs no secret.
        let prfSecret: [UInt8]? = options.extensionInputs.prf != nil && (knobs.prf == .evaluatedOnCreateAndGet || knobs.prf == .evaluatedOnGet)
            ? SecureRandom.bytes(32) : nil
        // The account's older passkeys, per `passkeys.priorOfSameUser`: kept, shadowed (GPM) or replaced (a key).
        let prior = try store { () throws(VaultError) in
            try vault.insertPasskey(record, privateKey: key.pkcs8, prfSecret: prfSecret, prior: knobs.priorOfSameUser)
        }
        if knobs.priorOfSameUser == .replaced { for passkey in prior { forget(passkey.credentialID) } }
        if !prior.isEmpty {
            detail.append((knobs.priorOfSameUser.rawValue, .array(prior.map { .string($0.id) })))
            detail.append(("priorOfSameUser", .string(knobs.cite("passkeys.priorOfSameUser", knobs.priorOfSameUser.rawValue))))
        }
        try storeCreationExtensions(authenticatorExtensions, for: credentialID)
        remember(key, for: credentialID)

        let extensionResults = (creationExtensionResults(options.extensionInputs, residentKey: reportedResidentKey(discoverable: settings.discoverable),
                                                         prfSecret: prfSecret)
            + authenticatorExtensions.results).sorted { $0.0 < $1.0 }
        return RegistrationResponse(
            credentialID: credentialID, clientDataJSON: clientData,
            attestationObject: AttestationObject(authenticatorData: authData, statement: statement).encoded,
            authenticatorData: authData, transports: reportedTransports,
            publicKey: knobs.publicKeyExposure == .subjectPublicKeyInfo ? key.subjectPublicKeyInfo : nil,
            publicKeyAlgorithm: algorithm, authenticatorAttachment: knobs.attachment, clientExtensionResults: extensionResults)
    }

    /// The first of the RP's `pubKeyCredParams` this provider supports (§5.1.3 steps 10 and 11; an empty list
    /// means ES256 then RS256).
    func negotiateAlgorithm(_ params: [CreationOptions.Parameter]) throws(CeremonyError) -> COSEAlgorithm {
        let requested = params.isEmpty
            ? [COSEAlgorithm.es256.rawValue, COSEAlgorithm.rs256.rawValue]
            : params.filter { $0.type == "public-key" }.map(\.alg)
        for alg in requested {
            if let algorithm = COSEAlgorithm(rawValue: alg), offeredAlgorithms.contains(algorithm) { return algorithm }
        }
        let offered = offeredAlgorithms.map { "\($0.name) (\($0.rawValue))" }.joined(separator: ", ")
        throw CeremonyError(.notSupported("None of the requested algorithms \(requested) is supported; \(policy.name) offers \(offered)."))
    }

    /// §6.3.2 step 3, scoped as the pack says: a stored credential the RP listed in `excludeCredentials`, under the RP
    /// ID or the checked `appidExclude` (§10.1.2: a U2F-era credential registered under the AppID).
    /// A provider that never reads the list (`exclusion.excludeCredentials` ignored) matches nothing, so a modal and a
    /// conditional create alike make a second passkey for the account.
    func excludedMatch(_ options: CreationOptions, rpID: String, appidExclude: String? = nil) throws(CeremonyError) -> PasskeyRecord? {
        guard knobs.exclusionList == .checked else { return nil }
        // The RP's exclude list is short and the vault may be large: look each ID up.
        for descriptor in options.excludeCredentials where descriptor.type == "public-key" {
            // A shadowed passkey is still the RP's credential in the vault: it excludes, as a hidden one does.
            guard let record = try store({ () throws(VaultError) in try vault.passkey(id: descriptor.id, includeShadowed: true) }),
                  record.rpID == rpID || (appidExclude != nil && record.rpID == appidExclude) else { continue }
            if knobs.exclusionScope == .relyingParty || record.userHandle == options.user.id { return record }
        }
        return nil
    }

    /// What the page sees when an excluded credential is found, per the pack.
    func exclusionFailure(_ match: PasskeyRecord, timeout: Double?) -> CeremonyError {
        switch knobs.exclusionOutcome {
        case .invalidStateError:
            return CeremonyError(.invalidState("The user attempted to register an authenticator that contains one of the credentials already registered with the relying party (credential \(match.id) for \(match.userName))."),
                                 reason: .excludedCredential)
        case .notAllowedError:
            return CeremonyError(.notAllowed("The operation either timed out or was not allowed: the provider holds an excluded credential (\(match.id))."),
                                 reason: .excludedCredential)
        case .noAnswer:
            let millis = Int(saturating: timeout ?? 300_000)
            return CeremonyError(.notAllowed("The operation either timed out or was not allowed: the provider showed an 'already registered' notice and never answered; the promise settled at the \(millis) ms timeout."),
                                 reason: .noAnswerUntilTimeout, settlesAfterMillis: millis)
        }
    }

    func ceremonyDetail(_ options: CreationOptions, caller: Caller) -> [(String, JSONValue)] {
        let ignored: [(String, JSONValue)] = knobs.exclusionList == .ignored && !options.excludeCredentials.isEmpty
            ? [("exclusion", .string(knobs.cite("exclusion.excludeCredentials", "ignored")))] : []
        return [("origin", .string(caller.serializedOrigin)), ("rpId", .string(options.rp.id ?? caller.origin.effectiveDomain ?? "")),
         ("userName", .string(options.user.name)), ("userHandle", .string(Base64URL.encode(options.user.id))),
         ("mediation", .string(options.mediation ?? "modal")), ("excludeCredentials", .number(Double(options.excludeCredentials.count)))] + ignored
    }
}
