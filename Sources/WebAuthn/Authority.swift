/// `host[:port]` as an origin or a `Host` header writes it (RFC 3986 §3.2.2-3): the one parser of hosts and ports
/// that origins (`Origin`), the allowed page origins and the server's `Host` check share.
public struct Authority: Equatable, Sendable {
    /// The host as written: a name, a dotted address, or an IPv6 literal in brackets.
    public var host: Substring
    public var port: Int?
    /// The port's digits as written (a leading zero, a default port), for callers that must refuse them.
    public var portText: Substring?

    /// Splits `text` into host and port; nil when it is not `host[:port]` (an empty host, an unclosed bracket,
    /// something after it, a port that is not 1 to 5 digits within 0-65535).
    public init?<S: StringProtocol>(_ text: S) where S.SubSequence == Substring {
        let whole = Substring(text)
        var hostPart = whole
        var portPart: Substring?
        if whole.hasPrefix("[") {
            guard let close = whole.firstIndex(of: "]") else { return nil }
            hostPart = whole[...close]
            let rest = whole[whole.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portPart = rest.dropFirst()
            }
        } else if let colon = whole.firstIndex(of: ":") {
            hostPart = whole[..<colon]
            portPart = whole[whole.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { return nil }
        host = hostPart
        portText = portPart
        if let portPart {
            guard !portPart.isEmpty, portPart.utf8.count <= 5, portPart.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let number = Int(portPart), number <= 65535 else { return nil }
            port = number
        }
    }
}
