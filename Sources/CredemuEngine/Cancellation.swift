import Foundation

/// Why a wait or a long run should end before it is done: the client that asked went away, its deadline passed, the
/// profile or device it runs for was removed, or the process is stopping. Checked between steps and while waiting,
/// never by interrupting work.
public struct Cancellation: Sendable {
    public enum Reason: String, Sendable {
        case clientGone, deadline, stopping
        /// The target (or a profile acting for it) was removed: a key pulled out mid-ceremony.
        case removed
    }

    /// The work ended early, after `completed` units of it (scenario step runs).
    public struct Stopped: Error, Sendable {
        public var reason: Reason
        public var completed: Int
        public var total: Int

        public init(reason: Reason, completed: Int, total: Int) {
            self.reason = reason
            self.completed = completed
            self.total = total
        }
    }

    /// Whether the client has gone (its connection closed); asked at most every poll interval of a wait.
    public var clientGone: @Sendable () -> Bool
    public var deadline: Date?
    public var stopping: StopSignal?
    /// Set when what the work runs for is removed.
    public var removed: StopSignal?

    public init(clientGone: @escaping @Sendable () -> Bool = { false }, deadline: Date? = nil, stopping: StopSignal? = nil,
                removed: StopSignal? = nil) {
        self.clientGone = clientGone
        self.deadline = deadline
        self.stopping = stopping
        self.removed = removed
    }

    /// Nothing ends the work early (an in-process caller, the CLI without a deadline).
    public static let never = Cancellation()

    /// The same, with a deadline `seconds` from now (or the earlier one it had).
    public func within(seconds: TimeInterval) -> Cancellation {
        var copy = self
        let limit = Date().addingTimeInterval(seconds)
        copy.deadline = deadline.map { min($0, limit) } ?? limit
        return copy
    }

    /// Why the work should end now, or nil to go on. The process stopping comes first, then the removal, the
    /// deadline, then the client (the one that costs a system call).
    public func reason(now: Date = Date()) -> Reason? {
        if stopping?.isSet == true { return .stopping }
        if removed?.isSet == true { return .removed }
        if let deadline, now >= deadline { return .deadline }
        return clientGone() ? .clientGone : nil
    }
}
