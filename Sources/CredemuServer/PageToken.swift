import CredemuOperations
import Signing
import WebAuthn

/// The bearer token a page's shim carries instead of the server's own: it opens the page routes of one
/// profile or device, and nothing else.
///
/// `page.` + base64url(HMAC-SHA256(token, "credemu-page" 0 kind 0 name)). `/shim.js?token=T` derives it from the
/// `T` it is given, right or wrong, so the script never depends on whether a guess was right; the server checks
/// it against its own token when the page calls. A script on the page that reads it learns no more than the
/// page could already do.
enum PageToken {
    static let prefix = "page."

    static func derive(from token: String, kind: CeremonyTarget.Kind, name: String) -> String {
        let message = Array("credemu-page".utf8) + [0] + Array(kind.rawValue.utf8) + [0] + Array(name.utf8)
        return prefix + Base64URL.encode(Digest.hmacSHA256(key: Array(token.utf8), message))
    }

    /// Whether `given` is the page token the server's `token` derives for this target.
    static func opens(_ given: Substring, token: String, kind: CeremonyTarget.Kind, name: String) -> Bool {
        APIServer.constantTimeEqual(Array(given.utf8), Array(derive(from: token, kind: kind, name: name).utf8))
    }
}
