import Foundation

/// An instant by which something must be done, and the `ProbeError` its passing is.
public struct Deadline: Sendable {
    public let instant: ContinuousClock.Instant
    let expired: ProbeError

    public init(after duration: Duration, _ expired: ProbeError) {
        instant = ContinuousClock.now.advanced(by: duration)
        self.expired = expired
    }

    /// The earlier of `self` and `other` (`self` when they are equal).
    func earlier(_ other: Deadline?) -> Deadline {
        guard let other, other.instant < instant else { return self }
        return other
    }

    /// Milliseconds left, for `poll` (at least 1, at most `Int32.max`); its error once none are.
    func remainingMilliseconds() throws(ProbeError) -> Int32 {
        let left = ContinuousClock.now.duration(to: instant)
        guard left > .zero else { throw expired }
        let (seconds, attoseconds) = left.components
        guard seconds < 2_000_000 else { return Int32.max }
        return Int32(seconds) * 1000 + Int32(max(1, attoseconds / 1_000_000_000_000_000))
    }

    /// `duration` in seconds for a message ("30 s", "1.5 s").
    static func text(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return (value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.3g", value)) + " s"
    }
}
