import Foundation
import Vault
import WebAuthn

extension Operations {
    /// Seeds the vault from a fixture (`vault-fixtures/README.md`): every record checked first, then all stored in
    /// one transaction, or nothing. Returns how many passwords and passkeys it added.
    public func importFixture(_ text: String) throws(OperationError) -> JSONValue {
        let (passwords, passkeys) = try stored { () throws(VaultError) in try VaultFixture.importFixture(text, into: vault) }
        forgetAll()
        return .object([("imported", .object([("passwords", .number(Double(passwords))), ("passkeys", .number(Double(passkeys)))]))])
    }

    /// The whole vault as a fixture; private keys and passwords only with `includeSecrets` (a trusted front end's).
    public func exportFixture(includeSecrets: Bool) throws(OperationError) -> String {
        try stored { () throws(VaultError) in try VaultFixture.export(vault, includeSecrets: includeSecrets) }
    }
}

extension Operations {
    /// The vault's test attestation root (`Vault.attestationRoot`), made on first need: what an RP that checks
    /// attestation trusts instead of a vendor's root, as DER (base64) and PEM.
    public func attestationRoot() throws(OperationError) -> JSONValue {
        let der = try stored { () throws(VaultError) in try vault.attestationRoot() }
        let base64 = Data(der).base64EncodedString()
        let lines = stride(from: 0, to: base64.count, by: 64).map { start -> String in
            let from = base64.index(base64.startIndex, offsetBy: start)
            return String(base64[from..<(base64.index(from, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex)])
        }
        let pem = "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
        return .object([("certificate", .string(base64)), ("pem", .string(pem))])
    }
}
