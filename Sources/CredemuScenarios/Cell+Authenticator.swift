import WebAuthn

extension Cell {
    /// What an RP sees of a security key or a phone that answered a registration: the attachment, transports,
    /// backup bits, signature counter and attestation format (WebAuthn L3 §5.2.1, §6.1, §6.5.4).
    static func authenticator(registration response: RegistrationResponse) throws -> String {
        let data = try AuthenticatorData(bytes: response.authenticatorData)
        let fmt = try CBOR.decode(response.attestationObject)["fmt"]?.textValue ?? "?"
        let x5c = try CBOR.decode(response.attestationObject)["attStmt"]?["x5c"] != nil
        return [response.authenticatorAttachment, "transports " + response.transports.joined(separator: ","), backup(data.flags),
                "counter \(data.signCount)", "fmt \(fmt)" + (x5c ? " with x5c" : "")].joined(separator: " · ")
    }

    /// What an RP sees of a security key or a phone that answered an assertion: the attachment, backup bits and counter.
    static func authenticator(assertion response: AuthenticationResponse) throws -> String {
        let data = try AuthenticatorData(bytes: response.authenticatorData)
        return [response.authenticatorAttachment, backup(data.flags), "counter \(data.signCount)"].joined(separator: " · ")
    }

    private static func backup(_ flags: AuthenticatorData.Flags) -> String {
        "BE=\(flags.contains(.backupEligible) ? 1 : 0) BS=\(flags.contains(.backedUp) ? 1 : 0)"
    }
}
