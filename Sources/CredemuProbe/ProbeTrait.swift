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
    case notBackupEligible
    case packedBatchAttestation
    case signCountGrowing
    case hybridTransport
    /// A registration for an account that already has a passkey in this provider (the same user.id, not excluded).
    case secondPasskeyOfAccount
    /// After a re-registration, a sign-in with the account's newest passkey: the one GPM (and a key) still has.
    case newestPasskeyOfAccount
    /// After a re-registration, a sign-in with the account's first passkey, which Apple and the extensions keep.
    case olderPasskeyOfAccount
    /// After a move (`signInAfterMove`), BE differs from the registration's: the importer's pack answers for it.
    case backupEligibilityChangedByMove
    /// After a move, BS differs from the registration's while BE does not.
    case backupStateChangedByMove
    /// After a move from a pack that counts, signCount 0 for good (CXF §Passkey: the importer never counts).
    case counterStoppedByMove

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
        case .notBackupEligible: return "device-bound credential (BE=0)"
        case .packedBatchAttestation: return "packed attestation with x5c"
        case .signCountGrowing: return "a non-zero, growing signCount"
        case .hybridTransport: return "a phone over hybrid (cross-platform)"
        case .secondPasskeyOfAccount: return "a second passkey for an account"
        case .newestPasskeyOfAccount: return "the newest passkey of a re-registered account"
        case .olderPasskeyOfAccount: return "the older passkey of a re-registered account"
        case .backupEligibilityChangedByMove: return "BE changed by a move to another manager"
        case .backupStateChangedByMove: return "BS changed by a move to another manager"
        case .counterStoppedByMove: return "signCount 0 after a move from a counting manager"
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
        case .notBackupEligible:
            return "WebAuthn L3 §6.1.3: BE=0 is a single-device credential, what every security key makes; §7.1 checks the backup flags only against the RP's own policy"
        case .packedBatchAttestation:
            return "WebAuthn L3 §8.2: packed attestation with x5c verifies with the attestation certificate's key; §7.1: an attestation the RP cannot trust fails only under an attestation policy, which MAY instead register the credential as self attested; credemu's batch certificates chain to the vault's test root (credemu vault attestation-root), which a server with such a policy must trust in tests"
        case .signCountGrowing:
            return "WebAuthn L3 §6.1.1 and §7.2: a non-zero signCount greater than the stored one is the expected case; store the new value after each assertion"
        case .hybridTransport:
            return "WebAuthn L3 §5.8.4: transport \"hybrid\" and §5.4.5 attachment \"cross-platform\" are what a phone reached from a desktop reports; §5.8.4: an RP stores transports as given and passes them back in allowCredentials"
        case .secondPasskeyOfAccount:
            return "WebAuthn L3 §5.4 excludeCredentials: the RP lists the credentials already mapped to the user account so that no second one is made on the same authenticator; without that, a second registration makes one, and a refusal comes too late: GPM's new passkey has already shadowed the account's older one, which no longer signs in (Chromium passkey_sync_bridge.cc AddShadowedCredentialIdsToNewPasskey; providers/gpm.json passkeys.priorOfSameUser)"
        case .newestPasskeyOfAccount:
            return "Chromium's GPM keeps one usable passkey per RP ID and user.id: a new one shadows the older ones, never offered or used to sign in again (passkey_model_utils FilterShadowedCredentials; passkeys.priorOfSameUser shadowed), and a security key overwrites a discoverable credential of the same user (CTAP 2.1 authenticatorMakeCredential; replaced); a server that keeps or asks for only the account's first credential locks those users out"
        case .olderPasskeyOfAccount:
            return "WebAuthn L3 §7.1 stores a new credential record for the account and §7.2 verifies a sign-in against the record of the credential used: nothing in a registration revokes the account's other credentials; Apple Passwords and the extensions keep the older passkey beside the new one and offer both (passkeys.priorOfSameUser kept, unconfirmed)"
        case .backupEligibilityChangedByMove:
            return "CXF 1.0 §Passkey carries no backup flags, so after a move the importer's pack sets BE (WebAuthn L3 §6.1.3: BE is fixed for a credential's lifetime on one authenticator, and a move puts the credential on another); §7.2 has an RP that uses the backup state compare BE with the stored one and then \"apply Relying Party policy\": a server that refuses every sign-in whose BE changed locks out each user who moved a passkey between a device-bound and a synced manager"
        case .backupStateChangedByMove:
            return "WebAuthn L3 §6.1.3: the backup state \"can change over time\", and a move (CXF 1.0) hands the passkey to a manager with its own; §7.2: store the new BS after each sign-in"
        case .counterStoppedByMove:
            return "CXF 1.0 §Passkey: \"Importers MUST set a zero value for the imported passkey signature counters and MUST NOT increment them after the fact\"; WebAuthn L3 §6.1.1 and §7.2: compare counters only when either is non-zero, so a counter that stays 0 is no counter, not a cloned authenticator"
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
        case .notBackupEligible: return "accept BE=0 credentials (security keys, device-bound passkeys); require BE=1 only as a deliberate policy"
        case .packedBatchAttestation: return "verify packed x5c statements; in tests, trust the vault's test root (credemu vault attestation-root) or treat an unknown root as self attestation"
        case .signCountGrowing: return "accept a signCount greater than the stored one and store it after every sign-in"
        case .hybridTransport: return "accept cross-platform responses and store their transports, hybrid included"
        case .secondPasskeyOfAccount: return "store a second passkey for an account, or list the account's credentials in excludeCredentials so the browser refuses before a provider makes one"
        case .newestPasskeyOfAccount: return "store every credential registered to the account and ask for all of them in allowCredentials (or none), never the first one only"
        case .olderPasskeyOfAccount: return "keep an account's older credentials after a re-registration until the user removes them"
        case .backupEligibilityChangedByMove: return "do not refuse a verified sign-in only because BE differs from the registration's: the passkey moved to another manager; apply your policy to the new flags and store them"
        case .backupStateChangedByMove: return "read BS from every assertion and store the latest instead of refusing a change"
        case .counterStoppedByMove: return "treat a counter that goes to 0 and stays there as no counter (§7.2 compares only when either is non-zero), not as a clone"
        case .signCountZero, .signCountNotGrowing: return "treat signCount 0 (stored and received) as 'no counter'; do not require it to grow"
        }
    }
}
