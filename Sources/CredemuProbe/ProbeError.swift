/// Why a probe could not run at all (as opposed to a server rejecting a response, which is a result).
public struct ProbeError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The target URL, or the server at it: unreachable, not HTTP, not the interface it was said to be.
        case target
        /// The adapter file is unreadable or malformed.
        case adapter
        /// The vault the probe logs to could not be made.
        case vault
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
