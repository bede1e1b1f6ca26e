/// A credential ID as a dictionary key, hashed as one block of bytes (an array hashes element by element).
struct CredentialKey: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}

/// A passkey's key in the vault, its credential ID and profile (migration 14: two profiles may hold one credential ID),
/// as a dictionary key for what is kept in memory about passkeys (staged rows, cached records, pending last uses).
struct PasskeyKey: Hashable {
    let id: CredentialKey
    let profile: String

    init(_ credentialID: [UInt8], _ profile: String) {
        id = CredentialKey(credentialID)
        self.profile = profile
    }
}
