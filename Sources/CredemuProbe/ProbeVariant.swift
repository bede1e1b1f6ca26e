/// One thing the probe sends for each pack: a registration or an assertion of a kind some provider produces.
public enum ProbeVariant: String, Sendable, CaseIterable {
    /// The provider's sheet: UP=1, UV as the pack reports it, the pack's AAGUID, BE/BS and fmt.
    case modal
    /// An automatic passkey upgrade through the engine's conditional-create path (UP and UV per the pack: 0 and 0).
    case upgrade
    /// A modal registration for options asking `userVerification: "discouraged"`: UP=1, UV=0 where the pack
    /// reports UV honestly; it tells a server refusing UV=0 from one refusing UP=0.
    case userVerificationDiscouraged
    /// The pack's passkey before its first sync: BE=1, BS=0.
    case notYetSynced
    /// `packed` attestation for options asking `attestation: "direct"`, where the pack does it (self attestation,
    /// or a security key's batch certificate in `x5c`).
    case packedAttestation
    /// A security key plugged into the pack's browser registers (the user picks it in the browser's sheet): BE=0,
    /// the key's AAGUID, `packed` with `x5c` when the server asks direct attestation (providers/security-key.json).
    case securityKey
    /// The pack on a phone, reached from the desktop by the QR code (WebAuthn L3 §5.8.4 `hybrid`): attachment
    /// cross-platform, transports with hybrid, the phone provider's own AAGUID and flags.
    case hybrid
    /// A sign-in with the first accepted passkey: signCount 0, UV as the pack reports it, the passkey's BS.
    case signIn
    /// A second sign-in with the same passkey: signCount 0 again.
    case signInAgain
    /// Two sign-ins with the security key's credential: a non-zero signCount that grows.
    case securityKeySignIn
    /// The account registers again in the same provider (the server's own user.id, no exclusion of the first
    /// passkey), then signs in with the first passkey's ID: GPM's new passkey shadows the old one, which stops
    /// signing in (`passkeys.priorOfSameUser` shadowed; a key's overwrite: replaced), while Apple and the
    /// extensions keep both. The cell is the second registration's verdict, then the sign-in's.
    case reRegistration
    /// With `--moves`: an account registers in the run's first provider, the user moves its passkey into this column's
    /// pack through a CXF document (`Operations.move`), then signs in with it (issue 36): the same credential ID and
    /// public key, answered with the importer's BE/BS and no counter (`Prober+Move.swift`).
    case signInAfterMove

    /// Sent by the loop of single registrations (the others have flows of their own).
    public var isRegistration: Bool { ![.signIn, .signInAgain, .securityKeySignIn, .reRegistration, .signInAfterMove].contains(self) }

    public var title: String {
        switch self {
        case .modal: return "modal registration"
        case .upgrade: return "automatic upgrade (UP=0, UV=0)"
        case .userVerificationDiscouraged: return "registration, UV discouraged"
        case .notYetSynced: return "registration, BE=1 BS=0"
        case .packedAttestation: return "registration, fmt packed"
        case .securityKey: return "security-key registration (BE=0, packed x5c)"
        case .hybrid: return "hybrid registration (a phone, cross-platform)"
        case .signIn: return "sign-in (signCount 0)"
        case .signInAgain: return "second sign-in (signCount 0)"
        case .securityKeySignIn: return "security-key sign-ins (a growing signCount)"
        case .reRegistration: return "re-registration, then the old ID signs in"
        case .signInAfterMove: return "sign-in after a move here (CXF)"
        }
    }
}
