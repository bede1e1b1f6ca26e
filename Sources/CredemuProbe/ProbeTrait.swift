/// Something a provider's response carries that some RP servers refuse though a correct one must accept it;
/// each names the rule it rests on and the fix.
public enum ProbeTrait: String, Sendable, CaseIterable, Comparable {
    case registrationUserNotPresent
    case registrationUserNotVerified
    case zeroAAGUID
    case backupEligibleNotBackedUp
    case backedUp
    case packedSelfAttestation
    case nonES256Algorithm
    case assertionUserNotVerified
    case signCountZero
    case signCountNotGrowing

    public static func < (a: ProbeTrait, b: ProbeTrait) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// A few words for tables.
    public var label: String {
        switch self {
        case .registrationUserNotPresent: return "UP=0 registration"
        case .registrationUserNotVerified: return "UV=0 registration"
        case .zeroAAGUID: return "all-zero AAGUID"
        case .backupEligibleNotBackedUp: return "BE=1 without BS"
        case .backedUp: return "synced passkey (BE=1, BS=1)"
        case .packedSelfAttestation: return "packed self attestation"
        case .nonES256Algorithm: return "an algorithm other than ES256"
        case .assertionUserNotVerified: return "UV=0 assertion"
        case .signCountZero: return "signCount 0"
        case .signCountNotGrowing: return "signCount that never grows"
        }
    }

    /// The seed criterion or spec rule a server that refuses this breaks.
    public var rule: String {
        switch self {
        case .registrationUserNotPresent:
            return "seed 000 'What your server must tolerate': \"The registration response carries UP and UV as false. No user interaction takes place, so there is no user presence or user verification to assert.\"; WebAuthn L3 §7.1: verify the UP bit only \"if options.mediation is not set to conditional\""
        case .registrationUserNotVerified:
            return "seed 000 'What your server must tolerate': \"A registration verifier configured to reject UV=0 will fail every automatic upgrade. This is the most common integration bug on this flow\"; WebAuthn L3 §7.1: check the UV bit only when user verification was required"
        case .zeroAAGUID:
            return "WebAuthn L3 §6.5.1 and §8.7 (attestation none): the AAGUID is the authenticator's to report; Apple Passwords / iCloud Keychain report all zeros (providers.md §3.6), and the community AAGUID list is \"not intended to be used for any other purpose\" than naming passkeys"
        case .backupEligibleNotBackedUp:
            return "WebAuthn L3 §6.1.3: a backup-eligible credential's backup state may be 0 and \"can change over time\"; BE=1 with BS=0 is a valid single-device credential"
        case .backedUp:
            return "WebAuthn L3 §6.1.3: BE=1 BS=1 is a synced (multi-device) passkey, what every shipped provider creates (providers.md §5)"
        case .packedSelfAttestation:
            return "WebAuthn L3 §8.2: packed self attestation (no x5c) is verified with the credential's own public key"
        case .nonES256Algorithm:
            return "WebAuthn L3 §5.1.3 step 10: the client picks from the RP's own pubKeyCredParams, so every algorithm listed there must verify"
        case .assertionUserNotVerified:
            return "WebAuthn L3 §7.2: check the UV bit only when user verification was required"
        case .signCountZero, .signCountNotGrowing:
            return "WebAuthn L3 §6.1.1: \"Authenticators that do not implement a signature counter leave signCount constant at zero\"; §7.2: compare counters only when either is non-zero (providers.md §1: every synced provider sends 0)"
        }
    }

    /// What the server should do instead.
    public var fix: String {
        switch self {
        case .registrationUserNotPresent: return "accept UP=0 registrations from conditional create (automatic upgrades)"
        case .registrationUserNotVerified: return "accept UV=0 registrations unless your options said userVerification \"required\""
        case .zeroAAGUID: return "accept an all-zero AAGUID; use the AAGUID only to name the provider, never to refuse"
        case .backupEligibleNotBackedUp: return "accept BE=1 with BS=0 and store BS from each response (it changes when the passkey syncs)"
        case .backedUp: return "accept synced passkeys (BE=1, BS=1)"
        case .packedSelfAttestation: return "verify packed self attestation with the credential public key, or treat it as none"
        case .nonES256Algorithm: return "verify every algorithm you list in pubKeyCredParams, or list only those you verify"
        case .assertionUserNotVerified: return "accept UV=0 assertions unless your options said userVerification \"required\""
        case .signCountZero, .signCountNotGrowing: return "treat signCount 0 (stored and received) as 'no counter'; do not require it to grow"
        }
    }
}
