import Synchronization
import WebAuthn

/// The page origins the API answers (CORS): those given with `--allow-origin` ("*" for any) and those a caller
/// that is not a page added while the server runs (`POST /origins`), so a test can allow its RP's origin once
/// the RP has a port.
final class AllowedOrigins: Sendable {
    /// At most this many origins; one more is refused, so a caller cannot grow the set without bound.
    static let limit = 1024
    private let origins: Mutex<Set<String>>

    init(_ initial: Set<String>) {
        origins = Mutex(initial)
    }

    func allows(_ origin: String) -> Bool {
        origins.withLock { $0.contains(origin) || $0.contains("*") }
    }

    var sorted: [String] { origins.withLock { $0.sorted() } }

    /// Adds `origin`; false when the set is full.
    func insert(_ origin: String) -> Bool {
        origins.withLock { origins in
            if origins.contains(origin) { return true }
            guard origins.count < AllowedOrigins.limit else { return false }
            origins.insert(origin)
            return true
        }
    }

    /// Whether `text` is an origin as a browser serializes it in an `Origin` header: `http` or `https`, an ASCII
    /// host in lower case (IDNs in punycode), an optional port other than the scheme's default, nothing else (HTML §7.1.1 "serialization of an
    /// origin").
    static func isSerializedOrigin(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count <= 300 else { return false }
        let https = text.hasPrefix("https://")
        guard https || text.hasPrefix("http://") else { return false }
        guard let authority = Authority(text.dropFirst(https ? 8 : 7)) else { return false }
        if let port = authority.port {
            // A browser leaves the scheme's default port out and writes no leading zero (URL §4.4 "port state").
            guard port != 0, port != (https ? 443 : 80), authority.portText?.first != "0" else { return false }
        }
        let host = authority.host
        guard host.first != ".", host.first != "-" else { return false }
        if host.first == "[" {
            // An IPv6 literal: hex digits and colons in brackets.
            guard host.count > 2 else { return false }
            return host.utf8.dropFirst().dropLast().allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || $0 == 0x3A }
        }
        return host.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2E }
    }
}
