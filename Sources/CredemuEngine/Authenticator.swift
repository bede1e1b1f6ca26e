import Vault
import WebAuthn

/// What the provider's authenticator is: the algorithms it can make, the transports and attachment it
/// reports, and the settings new passkeys get.
public struct AuthenticatorModel: Equatable, Sendable {
    /// Algorithms this authenticator can create, in no particular order; the RP's order decides.
    public var algorithms: [COSEAlgorithm]
    public var transports: [String]
    public var attachment: String
    public var credentialIDLength: Int
    public var newPasskeys: PasskeySettings

    public init(algorithms: [COSEAlgorithm] = COSEAlgorithm.allCases, transports: [String] = ["internal", "hybrid"],
                attachment: String = "platform", credentialIDLength: Int = 16, newPasskeys: PasskeySettings = .syncedPasskey) {
        self.algorithms = algorithms
        self.transports = transports
        self.attachment = attachment
        self.credentialIDLength = credentialIDLength
        self.newPasskeys = newPasskeys
    }

    /// A synced passkey provider that can make all three algorithms: the foundation's default.
    public static let standard = AuthenticatorModel()
}

/// Who is calling: the origin in client data, and whether the frame is cross-origin to the top level.
public struct Caller: Equatable, Sendable {
    public var origin: Origin
    public var topOrigin: Origin?

    public init(origin: Origin, topOrigin: Origin? = nil) {
        self.origin = origin
        self.topOrigin = topOrigin
    }

    public init(origin: String, topOrigin: String? = nil) throws(WebAuthnError) {
        self.origin = try Origin(origin)
        self.topOrigin = try topOrigin.map { (s) throws(WebAuthnError) in try Origin(s) }
    }

    /// `sameOriginWithAncestors` is false when a top origin differs from the caller's.
    public var isCrossOrigin: Bool { topOrigin.map { $0 != origin } ?? false }
}
