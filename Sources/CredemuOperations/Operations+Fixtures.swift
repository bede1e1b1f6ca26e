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
