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
}

extension Operations {
    /// Imports a credential file into the profile: every credential read and checked first (the key through the one
    /// import check, as a fixture's), then all stored in one transaction, or none (a credential ID the vault holds,
    /// or one the file gives twice, is a `conflict`). Returns `{"imported": {"passkeys": n}}`.
    ///
    /// Each passkey gets the profile's pack's settings (`seededSettings`), as one the pack made: a WebDriver
    /// credential keeps its residency, backup flags and (`signCount` null) its lack of a counter.
    public func importCredentials(_ name: String, format: CredentialFileFormat, _ text: String) throws(OperationError) -> JSONValue {
        let engine = try self.engine(name)
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw .invalidInput("The \(format.rawValue) file is not valid JSON: \(error.description).")
        }
        let (list, member) = try Operations.credentialList(document, format)
        let now = clock.now()
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
            }
        }
        if !seeds.isEmpty { try store(name, seeds, by: "import:" + format.rawValue) }
        return .object([("imported", .object([("passkeys", .number(Double(seeds.count)))]))])
    }

    /// The profile's passkeys as a credential file, oldest first: Playwright's list, or WebDriver's Get Credentials
    /// list (with `signCount` 0, not null, for a passkey without a counter: CDP's `addCredential` takes an integer only).
    public func exportCredentials(_ name: String, format: CredentialFileFormat) throws(OperationError) -> JSONValue {
        _ = try profile(name)
        return .array(try storedCredentials(name).map { record, pkcs8, largeBlob in
            switch format {
            case .playwright: return PlaywrightCredential.json(record, privateKey: pkcs8)
            case .webdriver: return CredentialParameters.json(record, privateKey: pkcs8, largeBlob: largeBlob, noCounter: .number(0))
            }
        })
    }

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
