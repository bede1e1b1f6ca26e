import Synchronization

/// A caller's origin as WebAuthn sees it: a web origin in a secure context, or an Android app origin.
public enum Origin: Equatable, Sendable, CustomStringConvertible {
    /// `https://host[:port]`, or `http://localhost[:port]` (a secure context by the HTML spec).
    case web(scheme: String, host: String, port: Int?)
    /// `android:apk-key-hash:<base64url SHA-256 of the signing certificate>` (see providers.md §2.4).
    case androidApp(certificateHash: [UInt8])

    /// Parses a serialized origin; anything else (paths, user info, plain http off localhost) is a
    /// `SecurityError`, as the browser would raise for a caller that is not a secure context.
    ///
    /// The scheme's default port (`https://example.com:443`) is a `TypeError`: no browser serializes it (HTML
    /// §7.1.1, the serialization of an origin; URL's port is null for the default), so whoever wrote it copied it
    /// from somewhere other than a page, most likely an RP's expected origin, which every real browser would then
    /// fail. Normalising it would hide that.
    public init(_ string: String) throws(WebAuthnError) {
        self = try Origin.parsed(string).origin
    }

    /// The origin `string` names and its serialization, parsed once: a ceremony parses its caller's origin, and
    /// a test runs its thousands against a handful of origins (the parse was 3% of a served registration's time).
    /// Only origins that parse are kept, at most `ParsedOrigins.limit` of them, so hostile strings cost their
    /// parse each time and hold no memory.
    public static func parsed(_ string: String) throws(WebAuthnError) -> (origin: Origin, serialized: String) {
        if let known = ParsedOrigins.shared.lookup(string) { return known }
        let origin = try Origin(parsing: string)
        let parsed = (origin, origin.description)
        ParsedOrigins.shared.insert(string, parsed)
        return parsed
    }

    private init(parsing string: String) throws(WebAuthnError) {
        let prefix = "android:apk-key-hash:"
        if string.hasPrefix(prefix) {
            guard let hash = Base64URL.decode(String(string.dropFirst(prefix.count))), hash.count == 32 else {
                throw .securityError("The origin '\(string)' is not a valid Android app origin: expected the base64url SHA-256 of the signing certificate.")
            }
            self = .androidApp(certificateHash: hash)
            return
        }
        let utf8 = Array(string.utf8)
        guard let colon = utf8.firstIndex(of: 0x3A), utf8.count > colon + 2, utf8[colon + 1] == 0x2F, utf8[colon + 2] == 0x2F else {
            throw .securityError("The origin '\(string)' is not a valid origin.")
        }
        let scheme = String(decoding: utf8[..<colon], as: UTF8.self)
        let rest = String(decoding: utf8[(colon + 3)...], as: UTF8.self)
        guard scheme == "https" || scheme == "http" else {
            throw .securityError("The origin '\(string)' is not a secure context: WebAuthn needs https (or http://localhost).")
        }
        guard !rest.isEmpty, !rest.utf8.contains(where: { $0 == 0x2F || $0 == 0x40 || $0 == 0x3F || $0 == 0x23 }) else {  // / @ ? #
            throw .securityError("The origin '\(string)' is not a valid origin: an origin is scheme://host[:port] with no path.")
        }
        guard let authority = Authority(rest) else {
            throw .securityError("The origin '\(string)' has an invalid host or port.")
        }
        let host = String(authority.host)
        let port = authority.port
        if port == 0 { throw .securityError("The origin '\(string)' has an invalid port.") }
        guard Origin.isLowerCaseHost(host) else {
            throw .securityError("The origin '\(string)' has an invalid host.")
        }
        if scheme == "http" && !(host == "localhost" || host.hasSuffix(".localhost")) {
            throw .securityError("The origin '\(string)' is not a secure context: WebAuthn needs https (or http://localhost).")
        }
        if (scheme == "https" && port == 443) || (scheme == "http" && port == 80) {
            throw .typeError("The origin '\(string)' names its scheme's default port, which no browser serializes: a page there has "
                + "the origin '\(scheme)://\(host)'. Pass that; an RP expecting '\(string)' in client data refuses every real browser.")
        }
        self = .web(scheme: scheme, host: host, port: port)
    }

    /// Lower-case letters, digits and "-.[]:" only; ASCII hosts (all a browser serializes) are checked byte-wise,
    /// without Unicode properties.
    static func isLowerCaseHost(_ host: String) -> Bool {
        if host.utf8.allSatisfy({ $0 < 0x80 }) {
            return host.utf8.allSatisfy { byte in
                switch byte {
                case 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5B, 0x5D, 0x3A: return true  // a-z 0-9 - . [ ] :
                default: return false
                }
            }
        }
        return host == host.lowercased() && host.allSatisfy({ $0.isLetter || $0.isNumber || "-.[]:".contains($0) })
    }

    /// The serialized origin, as it appears in client data.
    public var description: String {
        switch self {
        case let .web(scheme, host, port): return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
        case let .androidApp(hash): return "android:apk-key-hash:" + Base64URL.encode(hash)
        }
    }

    /// The host for a web origin; app origins have none.
    public var effectiveDomain: String? {
        if case let .web(_, host, _) = self { return host }
        return nil
    }
}

/// The origins parsed so far (`Origin.parsed`), by the string that named them; emptied when full.
final class ParsedOrigins: Sendable {
    static let shared = ParsedOrigins()
    static let limit = 1024
    private let known = Mutex([String: (origin: Origin, serialized: String)]())

    var count: Int { known.withLock { $0.count } }

    func lookup(_ string: String) -> (origin: Origin, serialized: String)? {
        known.withLock { $0[string] }
    }

    func insert(_ string: String, _ parsed: (origin: Origin, serialized: String)) {
        known.withLock { known in
            if known.count >= ParsedOrigins.limit { known.removeAll(keepingCapacity: true) }
            known[string] = parsed
        }
    }
}
