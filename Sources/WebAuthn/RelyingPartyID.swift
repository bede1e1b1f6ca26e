import CPSL

/// RP ID rules (WebAuthn L3 §5.1.3 step 8, §5.1.4 step 8, and the HTML "is a registrable domain suffix of or
/// equal to" test), with the public suffix list from libpsl.
public enum RelyingPartyID {
    /// The default RP ID for an origin: its effective domain.
    public static func defaultID(for origin: Origin) throws(WebAuthnError) -> String {
        guard let host = origin.effectiveDomain else {
            throw .typeError("An Android app origin has no default RP ID: the request must name rp.id (or rpId).")
        }
        try requireValidDomain(host, what: "The origin's effective domain '\(host)'")
        return host
    }

    /// Throws `SecurityError` unless `rpID` may be used by `origin`.
    ///
    /// For Android app origins the platform checks Digital Asset Links; credemu has no such file to read, so
    /// it accepts any RP ID that is a valid registrable domain (the association is the RP's to configure).
    public static func validate(_ rpID: String, for origin: Origin) throws(WebAuthnError) {
        guard let host = origin.effectiveDomain else {
            try requireValidDomain(rpID, what: "The RP ID '\(rpID)'")
            if PublicSuffixList.shared.isPublicSuffix(rpID) {
                throw .securityError("The RP ID '\(rpID)' is a public suffix.")
            }
            return
        }
        try requireValidDomain(host, what: "The origin's effective domain '\(host)'")
        if rpID == host { return }
        guard host.hasSuffix("." + rpID), isValidDomain(rpID) else {
            throw .securityError("The relying party ID '\(rpID)' is not a registrable domain suffix of, nor equal to, the current domain '\(host)'.")
        }
        guard PublicSuffixList.shared.isCookieDomainAcceptable(host: host, domain: rpID) else {
            throw .securityError("The relying party ID '\(rpID)' is a public suffix, so it cannot be used by '\(host)'.")
        }
    }

    /// A valid domain in the sense of the URL standard, and not an IP address (which WebAuthn refuses).
    public static func isValidDomain(_ s: String) -> Bool {
        if s.isEmpty || s.count > 253 || s.hasPrefix(".") || s.hasSuffix(".") { return false }
        if isIPAddress(s) { return false }
        let labels = s.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" }
        }
    }

    static func isIPAddress(_ s: String) -> Bool {
        if s.hasPrefix("[") || s.contains(":") { return true }
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        return parts.last.map { $0.allSatisfy(\.isNumber) && !$0.isEmpty } ?? false
    }

    private static func requireValidDomain(_ s: String, what: String) throws(WebAuthnError) {
        if isIPAddress(s) { throw .securityError("\(what) is an IP address, not a valid domain.") }
        if !isValidDomain(s) { throw .securityError("\(what) is not a valid domain.") }
    }
}

/// The public suffix list, loaded once from Debian's `publicsuffix` package (libpsl's built-in list otherwise).
final class PublicSuffixList: @unchecked Sendable {
    static let shared = PublicSuffixList()
    private let context: OpaquePointer?

    private init() {
        context = psl_latest(nil) ?? psl_builtin()
    }

    func isPublicSuffix(_ domain: String) -> Bool {
        guard let context else { return false }
        return psl_is_public_suffix2(context, domain, PSL_TYPE_ICANN | PSL_TYPE_PRIVATE | PSL_TYPE_NO_STAR_RULE) != 0
    }

    func isCookieDomainAcceptable(host: String, domain: String) -> Bool {
        guard let context else { return false }
        return psl_is_cookie_domain_acceptable(context, host, domain) != 0
    }
}
