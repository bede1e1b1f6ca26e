import WebAuthn

/// The passkey the simulated user picks in an account chooser: a credential ID, and on a device the provider
/// account whose entry it is.
///
/// Its text is `CREDENTIAL_ID` (base64url) or `CREDENTIAL_ID@ACCOUNT`. Two providers of one device may hold the same
/// credential ID after a move that kept the source's copy (issue 36); the device's dropdown then lists it once per
/// provider, each offer naming its `provider`, and the account says which entry the user picked. Without one, the
/// first provider in the platform's order holding the ID answers, as a get without a pick is routed. Base64url has
/// no `@`, so the text cannot be read two ways.
public struct Pick: Equatable, Sendable, CustomStringConvertible {
    public var credentialID: [UInt8]
    /// The provider account (a profile's name) whose entry the user picked; nil for "whichever holds it".
    public var account: String?

    public init(_ credentialID: [UInt8], account: String? = nil) {
        self.credentialID = credentialID
        self.account = account
    }

    /// Reads `ID` or `ID@ACCOUNT`; nil for an empty or non-base64url ID, or an account that is no profile name.
    public init?(_ text: String) {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let id = Base64URL.decode(String(parts[0])), !id.isEmpty else { return nil }
        if parts.count == 2 {
            guard Profile.isValidName(String(parts[1])) else { return nil }
            account = String(parts[1])
        }
        credentialID = id
    }

    public var description: String { Base64URL.encode(credentialID) + (account.map { "@" + $0 } ?? "") }

    /// Whether `engine`'s account may be the one the user picked.
    func names(_ engine: Engine) -> Bool { account.map { $0 == engine.profile.name } ?? true }
}
