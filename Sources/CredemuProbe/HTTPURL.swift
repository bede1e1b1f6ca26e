/// A plain `http://host[:port]/path` URL, the only kind the probe's client speaks (loopback and test servers;
/// put a TLS-terminating proxy in front of an `https` server).
public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    /// The path with its query, starting with "/".
    public var path: String

    public init(_ text: String) throws(ProbeError) {
        guard text.hasPrefix("http://") else {
            throw ProbeError(.target, "'\(text)' is not an http:// URL; the probe speaks plain HTTP/1.1 only (put a TLS-terminating proxy in front of an https server).")
        }
        let rest = text.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        path = rest.count > authority.count ? String(rest.dropFirst(authority.count)) : "/"
        guard !authority.isEmpty, !authority.contains("@") else { throw ProbeError(.target, "'\(text)' has no host.") }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ProbeError(.target, "'\(text)' has a malformed IPv6 host.") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = try HTTPURL.port(after.hasPrefix(":") ? after.dropFirst() : nil, text)
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = try HTTPURL.port(authority[authority.index(after: colon)...], text)
        } else {
            host = String(authority)
            port = 80
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-_:".contains($0) }) else {
            throw ProbeError(.target, "'\(text)' has a malformed host.")
        }
    }

    private static func port(_ text: Substring?, _ url: String) throws(ProbeError) -> UInt16 {
        guard let text else { return 80 }
        guard let value = UInt16(text), value > 0 else { throw ProbeError(.target, "'\(url)' has a bad port.") }
        return value
    }

    /// `path` (absolute, or relative to this URL's root) on this URL's server.
    public func resolving(_ reference: String) throws(ProbeError) -> HTTPURL {
        if reference.hasPrefix("http://") || reference.hasPrefix("https://") { return try HTTPURL(reference) }
        var copy = self
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        copy.path = reference.hasPrefix("/") ? base + reference : base + "/" + reference
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
