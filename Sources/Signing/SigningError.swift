/// A key could not be made, read or used.
public struct SigningError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case keyGeneration, invalidKey, algorithmMismatch, signing, library
        /// A certificate could not be made, or a field given for it is not acceptable.
        case certificate
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
