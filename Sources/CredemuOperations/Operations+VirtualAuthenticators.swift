import CredemuEngine
import Signing
import Vault
import WebAuthn

/// WebAuthn L3 §11's virtual authenticators over credemu's model: an authenticator is a profile whose pack's
/// `authenticator.model` is `securityKey` (a new one plays `security-key`), its §11.1 configuration the profile's
/// `authenticator` setting, its credentials the profile's passkeys. Any such profile answers to its name as an
/// `authenticatorId`, so a key made with `credemu profile create` is one too. An unknown ID (or a provider's
/// profile) is `NotFound`, where WebDriver says "invalid argument"; every other refusal is §11's, named.
extension Operations {
    /// The pack a new virtual authenticator plays.
    public static let virtualAuthenticatorPack = "security-key"

    /// §11.3 Add Virtual Authenticator: a new profile of the security-key pack with the configuration's options, a
    /// key of the testing API (`AuthenticatorOptions.testingAPI`); returns its `authenticatorId` (`wd-` and 16 hex
    /// digits: §11.2's unreserved characters, a profile name).
    public func addVirtualAuthenticator(_ parameters: JSONValue) throws(OperationError) -> String {
        var options = try AuthenticatorConfiguration.read(parameters)
        options.testingAPI = true
        let id = "wd-" + Hex.encode(SecureRandom.bytes(8))
        _ = try createProfile(id, settings: [("pack", .string(Operations.virtualAuthenticatorPack)), ("authenticator", options.json)],
                              allowPackPath: false)
        return id
    }

    /// §11.4 Remove Virtual Authenticator: the profile goes with its credentials and log. It is unplugged from every
    /// profile and device that names it in `authenticators` first, as a key pulled out of the port (Chrome never
    /// refuses to remove a virtual authenticator).
    public func removeVirtualAuthenticator(_ id: String) throws(OperationError) {
        _ = try virtualAuthenticator(id)
        for entry in try stored({ () throws(VaultError) in try vault.allProfiles() }) where Operations.plugs(entry.settings, id) {
            _ = try updateProfile(entry.name, settings: [("authenticators", Operations.unplugged(entry.settings, id))], allowPackPath: false)
        }
        for entry in try stored({ () throws(VaultError) in try vault.allDevices() }) where Operations.plugs(entry.settings, id) {
            _ = try updateDevice(entry.name, settings: [("authenticators", Operations.unplugged(entry.settings, id))])
        }
        try removeProfile(id)
    }

    /// §11.5 Add Credential: the credential stored on the key with its private key, counter, flags and large blob.
    public func addVirtualCredential(_ id: String, _ parameters: JSONValue) throws(OperationError) {
        let (engine, key) = try virtualAuthenticator(id)
        if parameters.objectValue == nil { throw .invalidArgument("parameters must be an object of credential parameters, not \(parameters.typeName).") }
        let credential = try CredentialParameters.read(parameters, for: key)
        if credential.isResidentCredential, !key.supportsResidentKeys {
            throw .invalidArgument("The authenticator \(id) has no resident keys (hasResidentKey false\(key.isU2F ? ", U2F only" : "")), so it cannot hold a resident credential.")
        }
        var settings = engine.keyCredentialSettings(discoverable: credential.isResidentCredential,
                                                    backupEligible: credential.backupEligibility ?? key.defaultBackupEligibility,
                                                    backupState: credential.backupState ?? key.defaultBackupState)
        settings.counter = credential.signCount == nil ? .zero : .increment
        let now = clock.now()
        let record = PasskeyRecord(credentialID: credential.credentialID, rpID: credential.rpID, userHandle: credential.userHandle,
                                   userName: credential.userName, displayName: credential.userDisplayName, algorithm: credential.privateKey.algorithm,
                                   publicKey: credential.privateKey.publicKey, signCount: credential.signCount ?? 0, settings: settings, createdAt: now)
        let scoped = vault.scoped(to: id)
        try stored { () throws(VaultError) in
            try scoped.transaction { () throws(VaultError) in
                try scoped.insertPasskey(record, privateKey: credential.privateKey.pkcs8)
                if let blob = credential.largeBlob { try scoped.setLargeBlob(blob, for: record.credentialID) }
                try scoped.appendEvent(kind: "vault", outcome: "added", reason: "success",
                                       detail: .object([("credentialId", .string(record.id)), ("rpId", .string(record.rpID)), ("by", "webdriver")]), at: now)
            }
        }
        forget(id)
    }

    /// §11.6 Get Credentials: every credential on the key, made by a ceremony or injected, with its private key.
    public func virtualCredentials(_ id: String) throws(OperationError) -> [JSONValue] {
        _ = try virtualAuthenticator(id)
        let scoped = vault.scoped(to: id)
        return try stored { () throws(VaultError) in
            try scoped.allPasskeys().map { (record) throws(VaultError) in
                CredentialParameters.json(record, privateKey: try scoped.privateKey(for: record.credentialID),
                                          largeBlob: try scoped.largeBlob(for: record.credentialID))
            }
        }
    }

    /// §11.7 Remove Credential.
    public func removeVirtualCredential(_ id: String, credentialID: String) throws(OperationError) {
        let bytes = try virtualCredentialID(id, credentialID)
        let scoped = vault.scoped(to: id)
        try stored { () throws(VaultError) in
            _ = try scoped.removePasskey(credentialID: bytes)
            try scoped.appendEvent(kind: "vault", outcome: "removed", reason: "success",
                                   detail: .object([("credentialId", .string(Base64URL.encode(bytes))), ("by", "webdriver")]), at: clock.now())
        }
        forget(id)
    }

    /// §11.8 Remove All Credentials.
    public func removeAllVirtualCredentials(_ id: String) throws(OperationError) {
        _ = try virtualAuthenticator(id)
        let scoped = vault.scoped(to: id)
        try stored { () throws(VaultError) in
            let count = try scoped.removeAllPasskeys()
            try scoped.appendEvent(kind: "vault", outcome: "removedAll", reason: "success",
                                   detail: .object([("count", .number(Double(count))), ("by", "webdriver")]), at: clock.now())
        }
        forget(id)
    }

    /// §11.9 Set User Verified: the key's `isUserVerified`, changed as a profile setting.
    public func setVirtualUserVerified(_ id: String, _ parameters: JSONValue) throws(OperationError) {
        _ = try virtualAuthenticator(id)
        let verified = try WebDriverArgument.reading { () throws(WebDriverArgument) in
            let fields = try JSONFields<WebDriverArgument>(parameters, path: "parameters")
            try fields.onlyKeys(["isUserVerified"])
            guard let b = try fields.bool("isUserVerified") else { throw fields.invalid("isUserVerified", "is required: true or false") }
            return b
        }
        _ = try updateProfile(id, settings: [("authenticator", .object([("isUserVerified", .bool(verified))]))], allowPackPath: false)
    }

    /// §11.10 Set Credential Properties: a credential's backup flags and signature counter (`signCount` null: no counter).
    public func setVirtualCredentialProperties(_ id: String, credentialID: String, _ parameters: JSONValue) throws(OperationError) {
        let bytes = try virtualCredentialID(id, credentialID)
        let (eligible, state, count) = try WebDriverArgument.reading { () throws(WebDriverArgument) -> (Bool?, Bool?, UInt32??) in
            let fields = try JSONFields<WebDriverArgument>(parameters, path: "parameters")
            try fields.onlyKeys(["backupEligibility", "backupState", "signCount"])
            var count: UInt32??
            if let v = fields.value["signCount"] {
                if v.isNull {
                    count = .some(nil)
                } else {
                    guard let n = v.numberValue, let integer = JSONValue.number(n).integerValue(in: 0...Int64(UInt32.max)) else {
                        throw fields.invalid("signCount", "must be an integer from 0 to 4294967295, or null")
                    }
                    count = .some(UInt32(integer))
                }
            }
            return (try fields.bool("backupEligibility"), try fields.bool("backupState"), count)
        }
        let scoped = vault.scoped(to: id)
        try stored { () throws(VaultError) in
            try scoped.setCredentialProperties(credentialID: bytes, backupEligible: eligible, backupState: state,
                                               signCount: count.map { $0 ?? 0 }, counter: count.map { $0 == nil ? .zero : .increment })
            var detail: [(String, JSONValue)] = [("credentialId", .string(Base64URL.encode(bytes)))]
            if let eligible { detail.append(("backupEligibility", .bool(eligible))) }
            if let state { detail.append(("backupState", .bool(state))) }
            if let count { detail.append(("signCount", count.map { .number(Double($0)) } ?? .null)) }
            try scoped.appendEvent(kind: "vault", outcome: "changed", reason: "success", detail: .object(detail + [("by", "webdriver")]), at: clock.now())
        }
        forget(id)
    }

    /// The key's engine and hardware; a missing profile, or one of a passkey provider, is `NotFound`.
    func virtualAuthenticator(_ id: String) throws(OperationError) -> (Engine, AuthenticatorOptions) {
        let missing = OperationError.notFound("No virtual authenticator '\(id.prefix(64))'; add one with POST /webauthn/authenticator.")
        guard Profile.isValidName(id) else { throw missing }
        let engine: Engine
        do {
            engine = try self.engine(id)
        } catch where error.code == .notFound {
            throw missing
        }
        guard let key = engine.securityKey else { throw missing }
        return (engine, key)
    }

    /// A credential ID of the key's, decoded and looked up; one the key does not hold is `NotFound`.
    private func virtualCredentialID(_ id: String, _ credentialID: String) throws(OperationError) -> [UInt8] {
        _ = try virtualAuthenticator(id)
        guard let bytes = WebDriverArgument.base64URL(credentialID), !bytes.isEmpty else {
            throw .invalidArgument("The credential ID '\(credentialID.prefix(80))' is not base64url text.")
        }
        guard try stored({ () throws(VaultError) in try vault.scoped(to: id).passkey(id: bytes, includeShadowed: true) }) != nil else {
            throw .notFound("The virtual authenticator \(id) holds no credential \(Base64URL.encode(bytes)).")
        }
        return bytes
    }

    private static func plugs(_ settings: JSONValue, _ id: String) -> Bool {
        (settings["authenticators"]?.arrayValue ?? []).contains { $0.stringValue == id }
    }

    private static func unplugged(_ settings: JSONValue, _ id: String) -> JSONValue {
        .array((settings["authenticators"]?.arrayValue ?? []).filter { $0.stringValue != id })
    }
}
