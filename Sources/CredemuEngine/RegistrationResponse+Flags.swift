import WebAuthn

extension RegistrationResponse {
    /// The flags this response's authenticator data carries (§6.1 byte 32), as a create's event records them.
    ///
    /// Read from the bytes sent, not from the knobs that chose them, so the console and the log show what the RP got.
    var flagsDetail: (String, JSONValue) {
        let byte = authenticatorData.count > 32 ? authenticatorData[32] : 0
        let flags = AuthenticatorData.Flags(rawValue: byte)
        return ("authenticatorFlags", .object([
            ("UP", .bool(flags.contains(.userPresent))), ("UV", .bool(flags.contains(.userVerified))),
            ("BE", .bool(flags.contains(.backupEligible))), ("BS", .bool(flags.contains(.backedUp))),
        ]))
    }
}
