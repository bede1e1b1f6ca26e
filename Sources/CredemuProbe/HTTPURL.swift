/// A plain `http://host[:port]/path` URL, the only kind the probe's client speaks (loopback and test servers;
/// put a TLS-terminating proxy in front of an `https` server).
///
/// Hosts are ASCII names, IPv4 or bracketed IPv6 addresses (no zone), lowercased; a path is visible ASCII only
/// (percent-encode the rest), so nothing in a URL can reach the request line or headers but the URL itself.
public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    /// The path with its query, starting with "/" (the fragment is dropped).
    public var path: String

    /// The longest path (with its query) the probe sends.
    static let maxPath = 8192

    public init(_ text: String) throws(ProbeError) {
        let shown = ProbeError.quote(text)
        guard text.utf8.count >= 7, text.utf8.prefix(7).map({ $0 | 0x20 }) == Array("http://".utf8) else {
            throw ProbeError(.badURL, "'\(shown)' is not an http:// URL; the probe speaks plain HTTP/1.1 only (put a TLS-terminating proxy in front of an https server).")
        }
        let rest = Substring(text.unicodeScalars.dropFirst(7))
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        path = try HTTPURL.path(rest.dropFirst(authority.count), shown)
        guard !authority.isEmpty else { throw ProbeError(.badURL, "'\(shown)' has no host.") }
        guard !authority.contains("@") else { throw ProbeError(.badURL, "'\(shown)' has user information, which the probe does not send.") }
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ProbeError(.badURL, "'\(shown)' has a malformed IPv6 host.") }
            host = String(authority[authority.index(after: authority.startIndex)..<close]).lowercased()
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw ProbeError(.badURL, "'\(shown)' has something after its IPv6 host.") }
            guard host.contains(":"), host.utf8.allSatisfy({ $0.isHexDigit || $0 == 58 || $0 == 46 }) else {
                throw ProbeError(.badURL, "'\(shown)' has a malformed IPv6 host.")
            }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else {
            let colon = authority.firstIndex(of: ":")
            host = String(authority[..<(colon ?? authority.endIndex)]).lowercased()
            portText = colon.map { authority[authority.index(after: $0)...] }
            guard host.utf8.allSatisfy({ $0.isHostByte }) else { throw ProbeError(.badURL, "'\(shown)' has a malformed host.") }
        }
        guard !host.isEmpty, host.utf8.count <= 253 else { throw ProbeError(.badURL, "'\(shown)' has a malformed host.") }
        port = try HTTPURL.port(portText, shown)
    }

    /// A port of 1-65535 in ASCII digits; none (or empty, as WHATWG reads it) is 80.
    private static func port(_ text: Substring?, _ shown: String) throws(ProbeError) -> UInt16 {
        guard let text, !text.isEmpty else { return 80 }
        guard text.utf8.count <= 5, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = UInt16(text), value > 0 else {
            throw ProbeError(.badURL, "'\(shown)' has a bad port (1-65535).")
        }
        return value
    }

    /// The request target from what follows the authority: "/" when empty, without the fragment.
    private static func path(_ text: Substring, _ shown: String) throws(ProbeError) -> String {
        let target = text.prefix { $0 != "#" }
        let path = target.hasPrefix("/") ? String(target) : "/" + target
        guard path.utf8.count <= maxPath else { throw ProbeError(.badURL, "'\(shown)' has a path over \(maxPath) bytes.") }
        guard path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ProbeError(.badURL, "'\(shown)' has a space, control or non-ASCII character in its path (percent-encode it).")
        }
        return path
    }

    /// `reference` (an http:// URL, or a path absolute or relative to this URL's path) on this URL's server.
    public func resolving(_ reference: String) throws(ProbeError) -> HTTPURL {
        if reference.lowercased().hasPrefix("http://") || reference.lowercased().hasPrefix("https://") { return try HTTPURL(reference) }
        var copy = self
        let directory = path.prefix { $0 != "?" }
        let base = directory.hasSuffix("/") ? directory.dropLast() : directory
        copy.path = try HTTPURL.path(Substring(reference.hasPrefix("/") ? base + reference : base + "/" + reference),
                                     ProbeError.quote(reference))
        return copy
    }

    /// The server part alone, as the `Host` header and an origin name it.
    public var hostHeader: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? h : "\(h):\(port)"
    }

    /// The origin a browser would give a page on this server.
    public var origin: String { "http://" + hostHeader }

    public var description: String { "http://" + hostHeader + path }
}

private extension UInt8 {
    var isHexDigit: Bool { (48...57).contains(self) || (97...102).contains(self) || (65...70).contains(self) }
    /// A byte of a DNS name or IPv4 address (and `_`, which some local names carry).
    var isHostByte: Bool { (48...57).contains(self) || (97...122).contains(self) || (65...90).contains(self) || self == 46 || self == 45 || self == 95 }
}
