import WebAuthn

/// Why the vault could not be opened or changed. Every such failure leaves the file as it was.
public struct VaultError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The key (passphrase or key file) does not open this vault.
        case wrongKey
        /// The key source does not fit the vault (a passphrase for a key-file vault, a missing key file, ...).
        case keyUnavailable
        /// The file is not a credemu vault, or is damaged.
        case corrupt
        /// The vault was written by a newer credemu.
        case newerSchema
        /// A record the call names does not exist.
        case notFound
        /// The record would collide with one already stored.
        case duplicate
        /// The input (a fixture, a field) is not acceptable.
        case invalidInput
        /// Another process holds the vault (a running server).
        case locked
        /// The file system or SQLite failed.
        case storage
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A fixture member that is missing or malformed is `invalidInput`.
extension VaultError: JSONFieldFailure {
    public static func invalidField(_ message: String) -> VaultError { VaultError(.invalidInput, message) }
}
