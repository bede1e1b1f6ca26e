import CredemuEngine
import Foundation
import Vault
import WebAuthn

/// The credential files other virtual authenticators read and write, into and out of one profile
/// (`credemu vault import/export --format`): a passkey a suite registered under Playwright's or Chrome's
/// authenticator signs in through credemu afterwards, and the other way round.
public enum CredentialFileFormat: String, Sendable, CaseIterable {
    /// Playwright's `credentials.get()` list (`PlaywrightCredential`), or a storage state (`storage_state(credentials=True)`,
    /// Playwright 1.62+) whose `credentials` member is that list.
    case playwright
    /// WebDriver's Get Credentials (WebAuthn L3 §11.6, §11.5's Credential Parameters), as Selenium's
    /// `get_credentials` gives it; also WebDriver's `{"value": [...]}` and CDP's `WebAuthn.getCredentials`
    /// `{"credentials": [...]}`, whose byte strings are standard base64.
    case webdriver
    /// The FIDO Alliance's Credential Exchange Format 1.0 (`CXFDocument`): the profile's passkeys and passwords as one
    /// exporter's account, what providers move credentials with (Apple Passwords, Bitwarden, Android's providerevents).
    case cxf
}

extension Operations {
    /// Imports a credential file into the profile: every credential read and checked first (the key through the one
    /// import check, as a fixture's), then all stored in one transaction, or none (a credential ID the vault holds,
    /// or one the file gives twice, is a `conflict`). Returns `{"imported": {"passkeys": n}}`, with `passwords` and
    /// `skipped` (credential types credemu holds none of, by type) for CXF.
    ///
    /// Each passkey gets the profile's pack's settings (`seededSettings`), as one the pack made: a WebDriver
    /// credential keeps its residency, backup flags and (`signCount` null) its lack of a counter; a CXF passkey keeps
    /// no counter, as CXF's importer must not count one.
    public func importCredentials(_ name: String, format: CredentialFileFormat, _ text: String) throws(OperationError) -> JSONValue {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw .invalidInput("The \(format.rawValue) file is not valid JSON: \(error.description).")
        }
        return try importCredentials(name, format: format, document: document)
    }

    /// `importCredentials` of a file already parsed (the API's `document` member).
    public func importCredentials(_ name: String, format: CredentialFileFormat, document: JSONValue) throws(OperationError) -> JSONValue {
        let engine = try self.engine(name)
        let now = clock.now()
        var seeds: [Seed] = [], passwords: [CXFPassword] = [], skipped: [String: Int] = [:]
        switch format {
        case .cxf:
            (seeds, passwords, skipped) = try Operations.cxfSeeds(document, engine, at: now)
        case .playwright, .webdriver:
            seeds = try listSeeds(engine, format, document, at: now)
        }
        if !seeds.isEmpty || !passwords.isEmpty {
            try store(name, seeds, passwords: passwords, by: "import:" + format.rawValue, at: now)
        }
        var imported: [(String, JSONValue)] = [("passkeys", .number(Double(seeds.count)))]
        if format == .cxf {
            imported.append(("passwords", .number(Double(passwords.count))))
            imported.append(("skipped", .object(skipped.sorted { $0.key < $1.key }.map { ($0.key, .number(Double($0.value))) })))
        }
        return .object([("imported", .object(imported))])
    }

    /// A CXF document's passkeys as the profile's (`importedSettings`), its passwords and what it skipped, every member
    /// checked (`CXFDocument.read`); a passkey in `expecting` must carry the public key given there.
    static func cxfSeeds(_ document: JSONValue, _ engine: Engine, expecting: [[UInt8]: COSEKey] = [:], at now: Date)
        throws(OperationError) -> (seeds: [Seed], passwords: [CXFPassword], skipped: [String: Int]) {
        let cxf = try CXFDocument.read(document)
        let settings = try importedSettings(engine)
        var seeds: [Seed] = []
        for (p, path) in cxf.passkeys {
            if let expected = expecting[p.credentialID], expected != p.key.publicKey {
                throw .invalidInput("\(path).key is not the private key of the credential's public key (the one the RP registered).")
            }
            let record = PasskeyRecord(credentialID: p.credentialID, rpID: p.rpID, userHandle: p.userHandle, userName: p.userName,
                                       displayName: p.displayName, algorithm: p.key.algorithm, publicKey: p.key.publicKey,
                                       signCount: 0, settings: settings, createdAt: p.created ?? now)
            seeds.append(Seed(record: record, pkcs8: p.pkcs8, largeBlob: nil))
        }
        return (seeds, cxf.passwords, cxf.skipped)
    }

    /// The settings a passkey the profile imports from a CXF document gets: its pack's new-passkey settings, the backup
    /// state its `import.backupFlags` says, and no counter (CXF §Passkey: the importer sets 0 and never counts).
    static func importedSettings(_ engine: Engine) throws(OperationError) -> PasskeySettings {
        try seededSettings(engine, discoverable: true, backupEligible: nil, backupState: engine.knobs.importedBackupState, counted: false)
    }

    /// The passkeys of a Playwright or WebDriver list, checked.
    private func listSeeds(_ engine: Engine, _ format: CredentialFileFormat, _ document: JSONValue, at now: Date) throws(OperationError) -> [Seed] {
        let (list, member) = try Operations.credentialList(document, format)
        var seeds: [Seed] = []
        for (i, item) in list.enumerated() {
            let path = OptionsPath.element(.root("file"), member, i)
            switch format {
            case .playwright:
                seeds.append(try Operations.seed(try PlaywrightCredential.read(item, path: path), engine, at: now))
            case .webdriver:
                let c = try CredentialParameters.read(Operations.base64URLSpelled(item), for: engine.securityKey ?? AuthenticatorOptions(), path: path)
                let settings = try Operations.seededSettings(engine, discoverable: c.isResidentCredential, backupEligible: c.backupEligibility,
                                                             backupState: c.backupState, counted: c.signCount != nil)
                let record = PasskeyRecord(credentialID: c.credentialID, rpID: c.rpID, userHandle: c.userHandle,
                                           userName: c.userName.isEmpty ? PlaywrightCredential.defaultUserName(c.userHandle) : c.userName,
                                           displayName: c.userDisplayName, algorithm: c.privateKey.algorithm, publicKey: c.privateKey.publicKey,
                                           signCount: settings.counter == .zero ? 0 : c.signCount ?? 0, settings: settings, createdAt: now)
                seeds.append(Seed(record: record, pkcs8: c.privateKey.pkcs8, largeBlob: c.largeBlob))
            case .cxf:
                break
            }
        }
        return seeds
    }

    /// The profile's passkeys as a credential file, oldest first: Playwright's list, or WebDriver's Get Credentials
    /// list (with `signCount` 0, not null, for a passkey without a counter: CDP's `addCredential` takes an integer only).
    ///
    /// Playwright's authenticator signs every assertion with `crypto.sign("sha256", ...)` (credentials.ts
    /// `_handleGet`), which an Ed25519 key refuses ("invalid digest"): its file leaves EdDSA passkeys out, and
    /// `leftOut` names them, rather than hand over a passkey that cannot sign in there.
    public func exportCredentials(_ name: String, format: CredentialFileFormat) throws(OperationError) -> (file: JSONValue, leftOut: [String]) {
        _ = try profile(name)
        var file: [JSONValue] = [], leftOut: [String] = []
        for (record, pkcs8, largeBlob) in try storedCredentials(name) {
            switch format {
            case .playwright:
                guard Operations.playwrightSigns(record.algorithm) else {
                    leftOut.append(record.id)
                    continue
                }
                file.append(PlaywrightCredential.json(record, privateKey: pkcs8))
            case .webdriver:
                file.append(CredentialParameters.json(record, privateKey: pkcs8, largeBlob: largeBlob, noCounter: .number(0)))
            case .cxf:
                throw .invalidInput("A CXF document is one document with passwords too: exportCXF writes it.")
            }
        }
        return (.array(file), leftOut)
    }

    /// The profile's credentials as a file of `format`, for the API and the CLI alike: a CXF document (`exportCXF`, its
    /// private keys and passwords only with `includeSecrets`) or a Playwright or WebDriver list (`exportCredentials`),
    /// which is nothing without its private keys, so it is refused unless `includeSecrets` asks for them: a secret
    /// leaves the vault only when asked for. `leftOut` names the passkeys the format cannot hold (CXF: a counter that
    /// is not 0; Playwright: EdDSA).
    public func exportFile(_ name: String, format: CredentialFileFormat, includeSecrets: Bool) throws(OperationError) -> (document: JSONValue, leftOut: [String]) {
        switch format {
        case .cxf:
            return try exportCXF(name, includeSecrets: includeSecrets)
        case .playwright, .webdriver:
            guard includeSecrets else {
                throw .invalidInput("A \(format.rawValue) file holds every passkey's private key, in the clear: ask for it with includeSecrets.")
            }
            let (file, leftOut) = try exportCredentials(name, format: format)
            return (file, leftOut)
        }
    }

    /// Whether Playwright's authenticator can sign with a key of the algorithm: SHA-256 with ECDSA or RSA, not Ed25519.
    static func playwrightSigns(_ algorithm: COSEAlgorithm) -> Bool { algorithm != .edDSA }

    /// The file's list of credentials and the name its path takes in errors: a bare array, or the member a
    /// Playwright storage state (`credentials`), a WebDriver response (`value`) or a CDP result (`credentials`) holds it in.
    static func credentialList(_ document: JSONValue, _ format: CredentialFileFormat) throws(OperationError) -> ([JSONValue], String) {
        if let list = document.arrayValue { return (list, "credentials") }
        let members = format == .playwright ? ["credentials"] : ["value", "credentials"]
        for member in members {
            if let list = document[member]?.arrayValue { return (list, member) }
        }
        let shape = format == .playwright ? "an array of Playwright credentials or a storage state with a credentials array"
                                          : "an array of credential parameters, or an object with one as value (WebDriver) or credentials (CDP)"
        throw .invalidInput("The \(format.rawValue) file must be \(shape), not \(document.typeName)\(document.objectValue == nil ? "" : " without one").")
    }

    /// A WebDriver credential with its byte strings in base64url: CDP spells them in standard base64 (`+`, `/`, padding).
    static func base64URLSpelled(_ item: JSONValue) -> JSONValue {
        guard let members = item.objectValue else { return item }
        let binary: Set<String> = ["credentialId", "privateKey", "userHandle", "largeBlob"]
        return .object(members.map { key, value in
            guard binary.contains(key), let text = value.stringValue else { return (key, value) }
            return (key, .string(String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })))
        })
    }
}
