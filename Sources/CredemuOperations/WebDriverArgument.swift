import WebAuthn

/// What a reader of WebAuthn L3 §11's command parameters raises: WebDriver's "invalid argument", naming the member.
struct WebDriverArgument: JSONFieldFailure {
    let message: String

    static func invalidField(_ message: String) -> WebDriverArgument { WebDriverArgument(message: message) }

    var operationError: OperationError { .invalidArgument(message) }

    /// Reads `value` with a `JSONFields` of this failure, which becomes the operation's `InvalidArgument`.
    static func reading<T>(_ body: () throws(WebDriverArgument) -> T) throws(OperationError) -> T {
        do {
            return try body()
        } catch {
            throw error.operationError
        }
    }

    /// §11's base64url: RFC 4648 §5, with the `=` padding Selenium's bindings send (`urlsafe_b64encode`) allowed
    /// and ignored, as chromedriver ignores it (`Base64UrlDecodePolicy::IGNORE_PADDING`).
    static func base64URL(_ text: String) -> [UInt8]? {
        var body = Substring(text)
        if text.utf8.count % 4 == 0 {
            while body.hasSuffix("="), text.utf8.count - body.utf8.count < 2 { body = body.dropLast() }
        }
        return Base64URL.decode(String(body))
    }
}
