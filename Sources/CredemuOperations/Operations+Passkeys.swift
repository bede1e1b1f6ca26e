import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// The profile's passkeys as listings: metadata and public keys, never a private key.
    public func listPasskeys(_ name: String) throws(OperationError) -> [JSONValue] {
        _ = try profile(name)
        return try stored { () throws(VaultError) in try vault.scoped(to: name).allPasskeys() }.map { VaultFixture.passkeyJSON($0, privateKey: nil) }
    }

    public func passkey(_ name: String, id: String) throws(OperationError) -> JSONValue {
        VaultFixture.passkeyJSON(try record(name, id), privateKey: nil)
    }

    /// Removes a passkey, as the user deleting it in the password manager would.
    public func removePasskey(_ name: String, id: String) throws(OperationError) -> JSONValue {
        let record = try record(name, id)
        let scoped = vault.scoped(to: name)
        try stored { () throws(VaultError) in
            _ = try scoped.removePasskey(credentialID: record.credentialID)
            try scoped.appendEvent(kind: "vault", outcome: "removed", reason: "success",
                                   detail: .object([("credentialId", .string(id)), ("rpId", .string(record.rpID))]), at: clock.now())
        }
        forget(name)
        return .object([("removed", VaultFixture.passkeyJSON(record, privateKey: nil))])
    }

    private func record(_ name: String, _ id: String) throws(OperationError) -> PasskeyRecord {
        _ = try profile(name)
        guard let bytes = Base64URL.decode(id), !bytes.isEmpty else { throw .invalidInput("'\(id)' is not a base64url credential ID.") }
        guard let record = try stored({ () throws(VaultError) in try vault.scoped(to: name).passkey(id: bytes) }) else {
            throw .notFound("No passkey \(id) in profile \(name).")
        }
        return record
    }
}
