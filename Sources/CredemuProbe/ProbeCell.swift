import CredemuEngine
import WebAuthn

/// What one variant of one pack came to against the server.
public struct ProbeCell: Sendable {
    public enum Outcome: String, Sendable {
        /// The server accepted the response.
        case accepted
        /// The server refused a response a correct server must accept.
        case rejected
        /// The server's own options made this variant impossible (say, UV required rules out an upgrade).
        case ruledOut
        /// The server's options are not valid WebAuthn options: a browser refuses them with a TypeError before any
        /// provider sees them, so no user could register or sign in. A finding about the server, as a rejection is.
        case invalidOptions
        /// The pack never sends this (its knob says so).
        case notApplicable
        /// Nothing to sign in with: no registration of this pack was accepted.
        case notRun
    }

    public var outcome: Outcome
    /// The server's message for a rejection; why, for the other outcomes but `accepted`.
    public var message: String
    /// The HTTP status of the finish step, when it was reached.
    public var status: Int?
    /// What the response sent carried that servers are known to refuse.
    public var traits: [ProbeTrait] = []
    /// For a rejection: the traits no accepted response carried, the likely causes (empty: none stands out).
    public var suspects: [ProbeTrait] = []
    /// The flags and AAGUID sent, for the report ("UP=1 UV=1 BE=1 BS=1 signCount=0 fmt=none").
    public var sent: String = ""
    /// What the probe saw beside the verdict, whatever the outcome: after a re-registration, that the first
    /// passkey's ID no longer signs in with this pack and whether the server still lists it.
    public var note: String = ""

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("outcome", .string(outcome.rawValue))]
        if !message.isEmpty { members.append(("message", .string(message))) }
        if let status { members.append(("status", .number(Double(status)))) }
        if !sent.isEmpty { members.append(("sent", .string(sent))) }
        if !note.isEmpty { members.append(("note", .string(note))) }
        members.append(("traits", .array(traits.map { .string($0.rawValue) })))
        if outcome == .rejected {
            members.append(("suspects", .array(suspects.map { .string($0.rawValue) })))
            members.append(("rules", .array(suspects.map { .object([("trait", .string($0.rawValue)), ("rule", .string($0.rule)), ("fix", .string($0.fix))]) })))
        }
        return .object(members)
    }
}

/// A pack on a platform: one column of the report.
public struct ProbeColumn: Sendable {
    public var pack: String
    public var name: String
    public var version: String
    public var platform: Platform
    public var header: String { "\(pack)@\(platform.rawValue)" }
}
