import CPSL
import CPublicSuffix
import Synchronization

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
        let pair = AcceptedPairs.Pair(rpID: rpID, host: host)
        if AcceptedPairs.shared.contains(pair) { return }
        try check(rpID, host: host)
        AcceptedPairs.shared.insert(pair)
    }

    private static func check(_ rpID: String, host: String) throws(WebAuthnError) {
        try requireValidDomain(host, what: "The origin's effective domain '\(host)'")
        if rpID == host { return }
        guard host.hasSuffix("." + rpID), isValidDomain(rpID) else {
            throw .securityError("The relying party ID '\(rpID)' is not a registrable domain suffix of, nor equal to, the current domain '\(host)'.")
        }
        guard PublicSuffixList.shared.isCookieDomainAcceptable(host: host, domain: rpID) else {
            throw .securityError("The relying party ID '\(rpID)' is a public suffix, so it cannot be used by '\(host)'.")
        }
    }

    /// Whether a domain is itself a listed public suffix (ICANN or private: `com`, `github.io`).
    public static func isPublicSuffix(_ domain: String) -> Bool { PublicSuffixList.shared.isPublicSuffix(domain) }

    /// The registrable domain (eTLD+1) of a domain, or the domain itself when it has none (localhost).
    public static func registrableDomain(_ domain: String) -> String {
        PublicSuffixList.shared.registrableDomain(domain) ?? domain
    }

    /// The registrable domain of a host under a listed public suffix (ICANN or private), or nil: an IP address, a
    /// host with no label before its suffix, or one whose TLD is not in the list (`localhost`, `app.localhost`), as
    /// Chromium's `GetDomainAndRegistry(..., INCLUDE_PRIVATE_REGISTRIES)` leaves unknown registries out.
    public static func listedRegistrableDomain(_ host: String) -> String? {
        guard !isIPAddress(host), let registrable = PublicSuffixList.shared.registrableDomain(host),
              let dot = registrable.firstIndex(of: "."),
              PublicSuffixList.shared.isPublicSuffix(String(registrable[registrable.index(after: dot)...])) else { return nil }
        return registrable
    }

    /// A valid domain in the sense of the URL standard, and not an IP address (which WebAuthn refuses).
    public static func isValidDomain(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        if bytes.isEmpty || bytes.count > 253 || bytes.first == 0x2E || bytes.last == 0x2E { return false }
        if isIPAddress(s) { return false }
        var labelLength = 0
        var previous: UInt8 = 0x2E
        for byte in bytes {
            switch byte {
            case 0x2E:  // '.'
                if labelLength == 0 || previous == 0x2D { return false }
                labelLength = 0
            case 0x2D:  // '-'
                if labelLength == 0 { return false }
                labelLength += 1
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A:
                labelLength += 1
            default:
                return false
            }
            if labelLength > 63 { return false }
            previous = byte
        }
        return previous != 0x2D
    }

    static func isIPAddress(_ s: String) -> Bool {
        if s.utf8.first == 0x5B || s.utf8.contains(0x3A) { return true }
        guard let lastDot = s.utf8.lastIndex(of: 0x2E) else { return !s.isEmpty && s.utf8.allSatisfy { (0x30...0x39).contains($0) } }
        let last = s.utf8[s.utf8.index(after: lastDot)...]
        return !last.isEmpty && last.allSatisfy { (0x30...0x39).contains($0) }
    }

    private static func requireValidDomain(_ s: String, what: String) throws(WebAuthnError) {
        if isIPAddress(s) { throw .securityError("\(what) is an IP address, not a valid domain.") }
        if !isValidDomain(s) { throw .securityError("\(what) is not a valid domain.") }
    }
}

/// (RP ID, host) pairs that passed `validate`: the suffix list does not change while the process runs, and an
/// RP asks with the same pair again and again.
final class AcceptedPairs: Sendable {
    struct Pair: Hashable {
        var rpID: String
        var host: String
    }

    static let shared = AcceptedPairs()
    static let limit = 4096
    private let pairs = Mutex(Set<Pair>())

    func contains(_ pair: Pair) -> Bool {
        pairs.withLock { $0.contains(pair) }
    }

    func insert(_ pair: Pair) {
        pairs.withLock { pairs in
            if pairs.count >= AcceptedPairs.limit { pairs.removeAll(keepingCapacity: true) }
            pairs.insert(pair)
        }
    }
}

/// The public suffix list compiled into the executable (CPublicSuffix: Debian's `publicsuffix` package at build
/// time), loaded once. It never falls back: with no list every domain would pass as registrable (`com` as an RP
/// ID), so a list libpsl cannot load stops the process at the first RP ID check instead of weakening it.
final class PublicSuffixList: @unchecked Sendable {
    static let shared = PublicSuffixList()
    private let context: OpaquePointer

    private init() {
        guard let context = credemu_public_suffix_list() else {
            fatalError("the compiled-in public suffix list does not load (CPublicSuffix): RP ID checks cannot run without it")
        }
        self.context = context
    }

    func isPublicSuffix(_ domain: String) -> Bool {
        return psl_is_public_suffix2(context, domain, PSL_TYPE_ICANN | PSL_TYPE_PRIVATE | PSL_TYPE_NO_STAR_RULE) != 0
    }

    /// libpsl answers with a pointer into `domain`'s bytes, so the answer is copied while they are alive: a String
    /// passed straight to the call would be bridged to a temporary C string, freed before `String(cString:)` ran.
    func registrableDomain(_ domain: String) -> String? {
        return domain.withCString { input in
            psl_registrable_domain(context, input).map { String(cString: $0) }
        }
    }

    func isCookieDomainAcceptable(host: String, domain: String) -> Bool {
        return psl_is_cookie_domain_acceptable(context, host, domain) != 0
    }
}

extension RelyingPartyID {
    /// The related origin validation procedure (WebAuthn L3 §5.11.1) over the `origins` of the RP's
    /// `https://RPID/.well-known/webauthn`: true when `caller` is listed among the first `maxLabels` distinct
    /// labels (a registrable domain without its public suffix: `example` for example.co.uk). Entries that are not
    /// origins, or have no registrable domain, are skipped, as the spec says.
    public static func relatedOriginsAllow(_ origins: [String], caller: Origin, maxLabels: Int) -> Bool {
        var labelsSeen: Set<String> = []
        for item in origins {
            guard let origin = try? Origin(item), let domain = origin.effectiveDomain, isValidDomain(domain),
                  let registrable = PublicSuffixList.shared.registrableDomain(domain) else { continue }
            // A registrable domain is one label before its public suffix.
            guard let label = registrable.split(separator: ".", maxSplits: 1).first.map(String.init), !label.isEmpty else { continue }
            if labelsSeen.count >= maxLabels && !labelsSeen.contains(label) { continue }
            if origin == caller { return true }
            if labelsSeen.count < maxLabels { labelsSeen.insert(label) }
        }
        return false
    }
}
