import Signing
import Vault
import WebAuthn

extension Engine {
    /// The extensions whose inputs the engine processes and whose outputs it gives, as the pack's knobs say
    /// (`extensions.prf`, `extensions.largeBlob`, and the authenticator extensions of `Engine+AuthenticatorExtensions`;
    /// `credProps` from the new credential). A pack may claim no other
    /// in its capabilities (`PolicyPack.checkExtensionClaims`, `credemu providers validate`).
    public static let answeredExtensions: Set<String> = [
        "appid", "appidExclude", "credBlob", "credProps", "credentialProtectionPolicy", "enforceCredentialProtectionPolicy",
        "getCredBlob", "hmacCreateSecret", "largeBlob", "minPinLength", "prf",
    ]

    // MARK: Creation

    /// The client's refusals of a create's extension inputs, before anything else is asked (Chromium's renderer
    /// makes them, with these messages; a malformed input is the options reader's TypeError).
    func checkCreationExtensions(_ inputs: ExtensionInputs) throws(CeremonyError) {
        if inputs.largeBlob?.read != nil {
            throw CeremonyError(.notSupported("The 'largeBlob' extension's 'read' parameter is only valid when requesting an assertion"),
                                reason: .invalidExtensionInput)
        }
        if inputs.largeBlob?.write != nil {
            throw CeremonyError(.notSupported("The 'largeBlob' extension's 'write' parameter is only valid when requesting an assertion"),
                                reason: .invalidExtensionInput)
        }
        if inputs.prf?.evalByCredential != nil {
            throw CeremonyError(.notSupported("The 'evalByCredential' field cannot be set when creating a credential."), reason: .invalidExtensionInput)
        }
        try checkAuthenticatorCreationInputs(inputs)
    }

    /// A create that requires large blob support cannot be made on a provider without it (WebAuthn L3 §10.1.5:
    /// the client creates the credential on an authenticator that supports it; Chromium does not use one that does not).
    func largeBlobRequirementUnmet(_ inputs: ExtensionInputs) -> Bool {
        inputs.largeBlob?.support == "required" && knobs.largeBlob != .supported
    }

    /// A new credential's extension outputs, by name (`clientExtensionResults`, Chromium's members and order);
    /// `residentKey` is `credProps.rk`, nil when the client cannot tell (`reportedResidentKey`).
    func creationExtensionResults(_ inputs: ExtensionInputs, residentKey: Bool?, prfSecret: [UInt8]?) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        if inputs.credProps { out.append(("credProps", .object(residentKey.map { [("rk", .bool($0))] } ?? []))) }
        if inputs.largeBlob != nil, knobs.largeBlob != .notProcessed {
            out.append(("largeBlob", .object([("supported", .bool(knobs.largeBlob == .supported))])))
        }
        if let prf = inputs.prf {
            switch knobs.prf {
            case .notProcessed: break
            case .unsupported: out.append(("prf", .object([("enabled", false)])))
            case .evaluatedOnGet: out.append(("prf", .object([("enabled", true)])))
            case .evaluatedOnCreateAndGet:
                var members: [(String, JSONValue)] = [("enabled", true)]
                if let eval = prf.eval, let prfSecret { members.append(("results", Engine.prfResults(eval, secret: prfSecret))) }
                out.append(("prf", .object(members)))
            }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    // MARK: Assertion

    /// The client's refusals of a get's extension inputs (Chromium's renderer, its messages; `credProps` and the blob's
    /// 2 KiB only where Blink checks: `makesBlinkChecks`).
    func checkRequestExtensions(_ options: RequestOptions) throws(CeremonyError) {
        let inputs = options.extensionInputs
        // Only the blob's and the PRF's checks read the allow list (most gets have neither).
        lazy var allowed = options.allowCredentials.filter { $0.type == "public-key" }.map(\.id)
        if inputs.credProps && makesBlinkChecks {
            throw CeremonyError(.notSupported("The 'credProps' extension is only valid when creating a credential"), reason: .invalidExtensionInput)
        }
        if let blob = inputs.largeBlob {
            if blob.support != nil {
                throw CeremonyError(.notSupported("The 'largeBlob' extension's 'support' parameter is only valid when creating a credential"),
                                    reason: .invalidExtensionInput)
            }
            // Blink's renderer bound, before the browser's checks below (`Engine+BlinkChecks`).
            if let write = blob.write, write.count > Engine.blinkMaxLargeBlobBytes, makesBlinkChecks {
                throw CeremonyError(.notSupported("The 'largeBlob' extension's 'write' parameter exceeds the maximum allowed size (2kb)"),
                                    reason: .invalidExtensionInput)
            }
            if blob.read == true && blob.write != nil {
                throw CeremonyError(.notSupported("Only one of the 'largeBlob' extension's 'read' and 'write' parameters is allowed at a time"),
                                    reason: .invalidExtensionInput)
            }
            if blob.write != nil && allowed.count != 1 {
                throw CeremonyError(.notSupported("The 'largeBlob' extension's 'write' parameter can only be used with a single credential present on 'allowCredentials'"),
                                    reason: .invalidExtensionInput)
            }
        }
        if let byCredential = inputs.prf?.evalByCredential {
            if !byCredential.isEmpty && allowed.isEmpty {
                throw CeremonyError(.notSupported("'prf' extension has 'evalByCredential' with an empty allow list"), reason: .invalidExtensionInput)
            }
            for (key, _) in byCredential {
                guard let id = Base64URL.decode(key) else {
                    throw CeremonyError(WebAuthnError(.syntaxError, "'prf' extension contains invalid base64url data in 'evalByCredential'"),
                                        reason: .invalidExtensionInput)
                }
                guard allowed.contains(id) else {
                    throw CeremonyError(WebAuthnError(.syntaxError, "'prf' extension contains 'evalByCredential' key that doesn't match any in allowedCredentials"),
                                        reason: .invalidExtensionInput)
                }
            }
        }
    }

    /// An assertion's extension outputs, in its transaction: the PRF evaluated with the passkey's secret (one made
    /// now for a passkey that has none), the large blob read or written.
    func assertionExtensionResults(_ inputs: ExtensionInputs, record: PasskeyRecord) throws(CeremonyError) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        if let blob = inputs.largeBlob, knobs.largeBlob != .notProcessed {
            if let write = blob.write {
                // An authenticator refuses a blob beyond its storage: not written (WebAuthn L3 §10.1.5 `written`).
                let written = knobs.largeBlob == .supported && write.count <= Vault.largeBlobLimit
                if written { try store { () throws(VaultError) in try vault.setLargeBlob(write, for: record.credentialID) } }
                out.append(("largeBlob", .object([("written", .bool(written))])))
            } else if blob.read == true {
                let stored = knobs.largeBlob == .supported
                    ? try store { () throws(VaultError) in try vault.largeBlob(for: record.credentialID) } : nil
                out.append(("largeBlob", .object(stored.map { [("blob", .string(Base64URL.encode($0)))] } ?? [])))
            }
        }
        if let prf = inputs.prf, knobs.prf != .notProcessed {
            // §10.1.4: the entry for the credential returned, else eval.
            let ev = prf.evalByCredential?.first(where: { Base64URL.decode($0.0) == record.credentialID })?.1 ?? prf.eval
            if let ev, knobs.prf != .unsupported {
                let secret = try store { () throws(VaultError) -> [UInt8] in
                    if let stored = try vault.prfSecret(for: record.credentialID) { return stored }
                    return try vault.ensurePRFSecret(SecureRandom.bytes(32), for: record.credentialID)
                }
                out.append(("prf", .object([("results", Engine.prfResults(ev, secret: secret))])))
            } else {
                out.append(("prf", .object([])))
            }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// `results` of the PRF (WebAuthn L3 §10.1.4): each input hashed as SHA-256("WebAuthn PRF" || 0x00 || input),
    /// then HMAC-SHA-256 under the credential's secret (the hmac-secret evaluation of CTAP 2.2 §12.5).
    static func prfResults(_ values: ExtensionInputs.PRFValues, secret: [UInt8]) -> JSONValue {
        func evaluate(_ input: [UInt8]) -> JSONValue {
            .string(Base64URL.encode(Digest.hmacSHA256(key: secret, Digest.sha256(Array("WebAuthn PRF".utf8) + [0] + input))))
        }
        var members: [(String, JSONValue)] = [("first", evaluate(values.first))]
        if let second = values.second { members.append(("second", evaluate(second))) }
        return .object(members)
    }
}
