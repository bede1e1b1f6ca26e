import CredemuEngine
import Signing
import Vault
import WebAuthn

extension Commands {
    static let demo: Command = Command(
        "demo", summary: "Register with an example RP, sign in to it, and print both responses.",
        discussion: """
        Registers a passkey with an example RP, signs in with it, checks both responses the way an RP does, and prints
        them.
        """,
        options: [Option("origin", .text("ORIGIN"), "The example RP's origin (default https://shop.example.com, RP ID example.com).")]
    ) { context, args in try context.demo(args) }
}

extension Context {
    /// Registers with an example RP, signs in, checks both responses as an RP would, and prints them.
    func demo(_ args: Arguments) throws -> ExitStatus {
        let caller = try Caller(origin: args.value("origin") ?? "https://shop.example.com")
        let rpID = try RelyingPartyID.defaultID(for: caller.origin).split(separator: ".").suffix(2).joined(separator: ".")
        let vault = try openVault()
        defer { vault.close() }
        let engine = Engine(vault: vault)

        let userID = SecureRandom.bytes(16)
        let creation = JSONValue.object([
            ("rp", .object([("id", .string(rpID)), ("name", "Example Shop")])),
            ("user", .object([("id", .string(Base64URL.encode(userID))), ("name", "alice@example.com"), ("displayName", "Alice")])),
            ("challenge", .string(Base64URL.encode(SecureRandom.bytes(32)))),
            ("pubKeyCredParams", .array([.object([("type", "public-key"), ("alg", -7)]), .object([("type", "public-key"), ("alg", -257)])])),
            ("authenticatorSelection", .object([("residentKey", "required"), ("userVerification", "preferred")])),
            ("attestation", "none"),
            ("extensions", .object([("credProps", true)])),
        ])
        let registration = try engine.create(try CreationOptions(document: creation), caller: caller)
        let authData = try AuthenticatorData(bytes: registration.authenticatorData)
        guard let publicKey = authData.attestedCredentialData?.publicKey else { throw UsageError("registration carries no public key") }

        let request = JSONValue.object([
            ("challenge", .string(Base64URL.encode(SecureRandom.bytes(32)))),
            ("rpId", .string(rpID)),
            ("allowCredentials", .array([.object([("type", "public-key"), ("id", .string(Base64URL.encode(registration.credentialID)))])])),
            ("userVerification", "preferred"),
        ])
        let assertion = try engine.get(try RequestOptions(document: request), caller: caller)
        let signedOK = publicKey.verify(signature: assertion.signature,
                                        message: assertion.authenticatorData + Digest.sha256(assertion.clientDataJSON))
        printJSON(.object([
            ("vault", .string(vaultPath)),
            ("origin", .string(caller.serializedOrigin)),
            ("rpId", .string(rpID)),
            ("creationOptions", creation),
            ("registration", registration.json),
            ("requestOptions", request),
            ("authentication", assertion.json),
            ("assertionSignatureVerifies", .bool(signedOK)),
        ]))
        return signedOK ? .success : .webAuthnError
    }
}
