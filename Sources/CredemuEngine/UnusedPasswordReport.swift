import WebAuthn

/// An RP's report that a password is no longer in use, in Apple's shape: `reportUnusedPasswordCredential(domain:
/// userName:)` on `ASCredentialUpdater` (26.0-26.2) and `ASCredentialDataManager` (26.2+).
public struct UnusedPasswordReport: Equatable, Sendable {
    /// The website domain the password is saved for (`example.com`, no scheme).
    public var domain: String
    public var userName: String

    public init(domain: String, userName: String) {
        self.domain = domain
        self.userName = userName
    }

    /// The signon realm the domain names: its HTTPS origin, where the provider saved the password.
    public var signonRealm: String { "https://" + domain }

    /// TypeError unless `domain` is a valid domain (lower-cased first, as a host is) and `userName` is not empty.
    func checked() throws(CeremonyError) -> UnusedPasswordReport {
        let host = domain.lowercased()
        guard RelyingPartyID.isValidDomain(host) else {
            throw CeremonyError(.typeError("The domain '\(domain)' is not a valid domain (a host such as example.com, no scheme or port)."),
                                reason: .malformedRequest)
        }
        guard !userName.isEmpty, !userName.utf8.contains(0) else {
            throw CeremonyError(.typeError("The userName must be a non-empty string without NUL."), reason: .malformedRequest)
        }
        return UnusedPasswordReport(domain: host, userName: userName)
    }
}
