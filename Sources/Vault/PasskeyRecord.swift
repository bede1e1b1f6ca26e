import Foundation
import WebAuthn

/// How a credential's signature counter behaves (WebAuthn L3 §6.1.1).
public enum CounterMode: String, Sendable, Codable, CaseIterable {
    /// Constant zero: the synced-passkey convention (providers.md §5).
    case zero
    /// Incremented by one on every assertion.
    case increment
}

/// The attestation a credential can give (WebAuthn L3 §8).
public enum AttestationCapability: String, Sendable, Codable, CaseIterable {
    /// Always `fmt` "none", whatever the RP asks (every synced provider in providers.md §5).
    case none
    /// `packed` self-attestation when the RP asks for "direct" or "enterprise"; "none" otherwise.
    case packed
    /// Full attestation (§8.2 `packed` with an `x5c`, §8.6 `fido-u2f` for a U2F-only key) by a batch key whose
    /// certificate chains to the vault's test CA, when the RP asks for "direct", "indirect" or "enterprise".
    case batch
}

/// Per-credential authenticator behaviour. The defaults are a synced passkey: BE=1, BS=1, counter 0, fmt none.
public struct PasskeySettings: Equatable, Sendable {
    public var backupEligible: Bool
    public var backupState: Bool
    public var counter: CounterMode
    public var aaguid: [UInt8]
    public var attestation: AttestationCapability
    public var discoverable: Bool

    public init(backupEligible: Bool = true, backupState: Bool = true, counter: CounterMode = .zero,
                aaguid: [UInt8] = [UInt8](repeating: 0, count: 16), attestation: AttestationCapability = .none,
                discoverable: Bool = true) {
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.counter = counter
        self.aaguid = aaguid
        self.attestation = attestation
        self.discoverable = discoverable
    }

    public static let syncedPasskey = PasskeySettings()
}

/// A stored passkey, without its private key (read that with `Vault.privateKey(for:)`).
public struct PasskeyRecord: Equatable, Sendable {
    public var credentialID: [UInt8]
    public var rpID: String
    public var userHandle: [UInt8]
    public var userName: String
    public var displayName: String
    public var algorithm: COSEAlgorithm
    public var publicKey: COSEKey
    public var signCount: UInt32
    public var settings: PasskeySettings
    public var hidden: Bool
    public var hiddenAt: Date?
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// The newer passkey of the same account (RP ID and user handle) that shadows this one (`PriorOfSameUser.shadowed`):
    /// a shadowed passkey is listed but never offered, used or signalled. Nil: not shadowed.
    public var shadowedBy: [UInt8]?
    /// The user edited its user name or display name in the provider's own UI; a pack may have signals leave it alone.
    public var editedByUser: Bool

    public init(credentialID: [UInt8], rpID: String, userHandle: [UInt8], userName: String, displayName: String,
                algorithm: COSEAlgorithm, publicKey: COSEKey, signCount: UInt32 = 0, settings: PasskeySettings = .syncedPasskey,
                hidden: Bool = false, hiddenAt: Date? = nil, createdAt: Date, lastUsedAt: Date? = nil,
                shadowedBy: [UInt8]? = nil, editedByUser: Bool = false) {
        self.shadowedBy = shadowedBy
        self.editedByUser = editedByUser
        self.credentialID = credentialID
        self.rpID = rpID
        self.userHandle = userHandle
        self.userName = userName
        self.displayName = displayName
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.signCount = signCount
        self.settings = settings
        self.hidden = hidden
        self.hiddenAt = hiddenAt
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    public var id: String { Base64URL.encode(credentialID) }
}

/// What a new passkey does to the older passkeys of its account (same RP ID and user handle) in the same provider.
public enum PriorOfSameUser: String, Sendable, CaseIterable {
    /// Both stay, both usable.
    case kept
    /// The older ones stay in the vault, shadowed by the new one: listed, never offered, used or signalled, until the
    /// new one is deleted (Chromium's `AddShadowedCredentialIdsToNewPasskey` and `FilterShadowedCredentials`).
    case shadowed
    /// The older discoverable ones are deleted when the new one is discoverable (CTAP 2.1 authenticatorMakeCredential:
    /// a resident credential for the same RP ID and user handle is overwritten).
    case replaced
}

/// A stored password (its secret read with `Vault.password(for:)`).
public struct PasswordRecord: Equatable, Sendable {
    public var id: Int64
    /// The origin, or the signon realm, the password belongs to.
    public var origin: String
    public var username: String
    public var createdAt: Date
    public var lastFilledAt: Date?
    public var lastUsedAt: Date?
    /// The password manager that holds it, when not the profile's own provider.
    public var savedIn: String?
    /// When the provider hid it after the RP reported it unused; a retired password is neither filled nor counted.
    public var retiredAt: Date?

    public init(id: Int64, origin: String, username: String, createdAt: Date, lastFilledAt: Date? = nil, lastUsedAt: Date? = nil,
                savedIn: String? = nil, retiredAt: Date? = nil) {
        self.retiredAt = retiredAt
        self.id = id
        self.origin = origin
        self.username = username
        self.createdAt = createdAt
        self.lastFilledAt = lastFilledAt
        self.lastUsedAt = lastUsedAt
        self.savedIn = savedIn
    }
}

/// A passkey a signal changed: its credential ID and creation time, ordered as the vault lists an account's
/// passkeys (oldest first, then by credential ID as SQLite orders blobs).
public struct ChangedPasskey: Equatable, Sendable, Comparable {
    public var credentialID: [UInt8]
    /// Milliseconds since the epoch.
    public var createdMillis: Int64

    public init(credentialID: [UInt8], createdMillis: Int64) {
        self.credentialID = credentialID
        self.createdMillis = createdMillis
    }

    public var id: String { Base64URL.encode(credentialID) }

    public static func < (a: ChangedPasskey, b: ChangedPasskey) -> Bool {
        a.createdMillis != b.createdMillis ? a.createdMillis < b.createdMillis : a.credentialID.lexicographicallyPrecedes(b.credentialID)
    }
}
