/// A credential's protection level, CTAP 2.1 §12.1 `credProtect`, as the WebAuthn input names it
/// (`credentialProtectionPolicy`, CTAP 2.1 §12.1's WebAuthn client extension inputs).
public enum CredentialProtection: Int, Sendable, CaseIterable, Comparable {
    /// Level 1: usable with or without user verification, discoverable.
    case userVerificationOptional = 1
    /// Level 2: without user verification only when the RP names it in `allowCredentials`.
    case userVerificationOptionalWithCredentialIDList = 2
    /// Level 3: only after user verification.
    case userVerificationRequired = 3

    public init?(name: String) {
        guard let level = CredentialProtection.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public var name: String {
        switch self {
        case .userVerificationOptional: return "userVerificationOptional"
        case .userVerificationOptionalWithCredentialIDList: return "userVerificationOptionalWithCredentialIDList"
        case .userVerificationRequired: return "userVerificationRequired"
        }
    }

    public static func < (a: CredentialProtection, b: CredentialProtection) -> Bool { a.rawValue < b.rawValue }
}
