import Foundation

/// The cookies servers set for one client, keyed as RFC 6265 §5.3 keys them (name, domain, path), and the
/// `Cookie` header a browser would send back for a URL.
///
/// Storing a cookie costs one dictionary update whatever the jar holds. `Domain`, `Path` and `Max-Age` (zero or
/// less removes the cookie) are kept; `Expires`, `Secure`, `HttpOnly` and `SameSite` are ignored (a run lasts
/// minutes, and the probe's plain HTTP often stands in for HTTPS behind a proxy). There is no public suffix
/// list: a jar belongs to one probed account, and the adapter names its servers.
public struct CookieJar: Sendable {
    struct Key: Hashable, Sendable {
        var name: String
        /// The host that set a host-only cookie, else the `Domain` attribute (lowercase, no leading dot).
        var domain: String
        var path: String
    }

    struct Entry: Sendable {
        var value: String
        var hostOnly: Bool
        /// When the cookie was first set, for the header's order (RFC 6265 §5.4).
        var order: Int
    }

    let limits: HTTPLimits
    private(set) var entries: [Key: Entry] = [:]
    private var nextOrder = 0

    public init(limits: HTTPLimits = .standard) {
        self.limits = limits
    }

    public var count: Int { entries.count }

    /// The value of the cookie `name` that a request to `url` would carry.
    public func value(_ name: String, for url: HTTPURL) -> String? {
        matching(url).first { $0.0.name == name }?.1.value
    }

    /// Stores one `Set-Cookie` value that came from `url`; a cookie for another domain is ignored, as a browser does.
    public mutating func store(_ header: String, from url: HTTPURL) throws(ProbeError) {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = parts.first, let eq = pair.firstIndex(of: "=") else { return }
        let name = pair[..<eq].trimmingCharacters(in: [" ", "\t"])
        let value = pair[pair.index(after: eq)...].trimmingCharacters(in: [" ", "\t"])
        guard !name.isEmpty else { return }
        guard name.utf8.count + value.utf8.count <= limits.cookieBytes else {
            throw ProbeError(.cookieOverLimit, "\(url) set the cookie '\(ProbeError.quote(name))' of \(name.utf8.count + value.utf8.count) bytes; a cookie's name and value may have \(limits.cookieBytes).")
        }
        var domain = ""
        var path: String?
        var expired = false
        for attribute in parts.dropFirst() {
            let (key, text) = CookieJar.attribute(attribute)
            switch key {
            case "domain": domain = text.hasPrefix(".") ? String(text.dropFirst()).lowercased() : text.lowercased()
            case "path": path = text.hasPrefix("/") ? text : nil
            case "max-age": expired = CookieJar.isNotPositive(text) ?? expired
            default: break
            }
        }
        let hostOnly = domain.isEmpty
        if hostOnly {
            domain = url.host
        } else if !CookieJar.domain(url.host, matches: domain) {
            return
        }
        let key = Key(name: name, domain: domain, path: path ?? CookieJar.defaultPath(url))
        if expired {
            entries[key] = nil
        } else if let old = entries[key] {
            entries[key] = Entry(value: value, hostOnly: hostOnly, order: old.order)
        } else {
            guard entries.count < limits.cookieCount else {
                throw ProbeError(.cookieOverLimit, "\(url) set more than \(limits.cookieCount) cookies.")
            }
            entries[key] = Entry(value: value, hostOnly: hostOnly, order: nextOrder)
            nextOrder += 1
        }
    }

    /// The `Cookie` header for a request to `url`, or nil when no cookie matches.
    public func header(for url: HTTPURL) -> String? {
        let pairs = matching(url).map { "\($0.0.name)=\($0.1.value)" }
        return pairs.isEmpty ? nil : pairs.joined(separator: "; ")
    }

    /// The cookies a request to `url` carries: longer paths first, then the earlier set (RFC 6265 §5.4).
    private func matching(_ url: HTTPURL) -> [(Key, Entry)] {
        let path = CookieJar.requestPath(url)
        return entries.filter { key, entry in
            (entry.hostOnly ? url.host == key.domain : CookieJar.domain(url.host, matches: key.domain)) && CookieJar.path(path, matches: key.path)
        }
        .map { ($0.key, $0.value) }
        .sorted { $0.0.path.count != $1.0.path.count ? $0.0.path.count > $1.0.path.count : $0.1.order < $1.1.order }
    }

    // MARK: RFC 6265 §5.1

    private static func attribute(_ text: Substring) -> (String, String) {
        guard let eq = text.firstIndex(of: "=") else { return (text.trimmingCharacters(in: [" ", "\t"]).lowercased(), "") }
        return (text[..<eq].trimmingCharacters(in: [" ", "\t"]).lowercased(), text[text.index(after: eq)...].trimmingCharacters(in: [" ", "\t"]))
    }

    /// Whether a `Max-Age` value is zero or less, without reading it into an integer; nil when it is not one.
    private static func isNotPositive(_ text: String) -> Bool? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return text.hasPrefix("-") || digits.utf8.allSatisfy { $0 == 48 }
    }

    static func domain(_ host: String, matches domain: String) -> Bool {
        if host == domain { return true }
        let isAddress = host.contains(":") || host.utf8.allSatisfy { (48...57).contains($0) || $0 == 46 }
        return !isAddress && host.hasSuffix("." + domain)
    }

    static func path(_ requestPath: String, matches cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }

    private static func requestPath(_ url: HTTPURL) -> String {
        String(url.path.prefix { $0 != "?" })
    }

    /// The directory of the request's path (RFC 6265 §5.1.4).
    private static func defaultPath(_ url: HTTPURL) -> String {
        let path = requestPath(url)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
