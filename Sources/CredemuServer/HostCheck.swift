import WebAuthn
/// The `Host` a request names must be this server's: a loopback name, the bound address, or a name given with
/// `--allow-host`. Anything else is a DNS-rebinding page speaking to loopback under its own name.
struct HostCheck: Sendable {
    let bindAddress: String
    let allowed: Set<String>

    init(bindAddress: String, allowed: Set<String>) {
        self.bindAddress = bindAddress
        self.allowed = Set(allowed.map { $0.lowercased() })
    }

    func check(_ request: HTTPRequest) throws(APIError) {
        guard let header = request.headers["host"] else { throw APIError(400, "BadRequest", "The request has no valid Host header.") }
        if HostCheck.isPlainLoopback(header) { return }
        guard let name = HostCheck.name(header) else {
            throw APIError(400, "BadRequest", "The request has no valid Host header.")
        }
        guard HostCheck.isLoopbackName(name) || name == bindAddress || allowed.contains(name) else {
            throw APIError(403, "Forbidden", "The host '\(name)' is not this server's; use 127.0.0.1 or localhost, or start the server with --allow-host \(name).")
        }
    }

    /// The common case, checked without allocating: `127.0.0.1` or `localhost`, with or without a port.
    static func isPlainLoopback(_ header: String) -> Bool {
        var utf8 = header.utf8[...]
        if utf8.starts(with: "127.0.0.1".utf8) {
            utf8 = utf8.dropFirst(9)
        } else if utf8.starts(with: "localhost".utf8) {
            utf8 = utf8.dropFirst(9)
        } else {
            return false
        }
        if utf8.isEmpty { return true }
        guard utf8.first == UInt8(ascii: ":") else { return false }
        let port = utf8.dropFirst()
        return !port.isEmpty && port.count <= 5 && port.allSatisfy { (0x30...0x39).contains($0) }
            && port.reduce(0, { $0 * 10 + Int($1 - 0x30) }) <= 65535
    }

    /// The server's own origin as the request reaches it (`http://HOST[:PORT]` from a checked Host header).
    func ownOrigin(_ request: HTTPRequest) -> String? {
        request.headers["host"].map { "http://" + $0.lowercased() }
    }

    /// The host name of a Host header, lower-cased, without the port; nil when it is malformed.
    static func name(_ header: String) -> String? {
        let value = header.lowercased()
        guard !value.isEmpty, value.utf8.count <= 255,
              value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "@") }),
              let authority = Authority(value) else { return nil }
        return String(authority.host)
    }

    /// `localhost`, a name under `.localhost` (browsers resolve those to loopback themselves), `[::1]` and
    /// 127.0.0.0/8.
    static func isLoopbackName(_ name: String) -> Bool {
        name == "localhost" || name.hasSuffix(".localhost") || name == "[::1]" || isLoopbackAddress(name)
    }

    /// A dotted IPv4 address in 127.0.0.0/8.
    static func isLoopbackAddress(_ address: String) -> Bool {
        let octets = address.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 3 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } && Int($0)! <= 255 })
        else { return false }
        return octets[0] == "127"
    }
}
