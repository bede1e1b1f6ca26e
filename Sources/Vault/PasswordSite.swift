import WebAuthn

/// The key under which a password manager's public-suffix matching groups signon realms: scheme, registrable
/// domain and port (`https://example.com` for `https://login.example.com`), or nil for a realm with no listed
/// registrable domain (an app's `android://` realm, an IP address, `localhost`), which matches exactly only.
///
/// Chromium's `IsPublicSuffixDomainMatch` (components/password_manager/core/browser/password_store/
/// psl_matching_helper.cc): same scheme, same port, same `GetDomainAndRegistry(..., INCLUDE_PRIVATE_REGISTRIES)`.
public enum PasswordSite {
    public static func of(_ realm: String) -> String? {
        guard case let .web(scheme, host, port)? = try? Origin(realm),
              let registrable = RelyingPartyID.listedRegistrableDomain(host) else { return nil }
        // Chromium's one exception: under google.com only accounts.google.com and myaccount.google.com (and their
        // subdomains, `DomainIs`) match each other; any other google.com host matches exactly only.
        if registrable == "google.com" && !["accounts.google.com", "myaccount.google.com"].contains(where: { host == $0 || host.hasSuffix("." + $0) }) {
            return nil
        }
        return scheme + "://" + registrable + (port.map { ":\($0)" } ?? "")
    }
}
