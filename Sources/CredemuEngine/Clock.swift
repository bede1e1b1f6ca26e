import Foundation

/// The one source of time for the engine: autofill windows, creation and use times, rate limits.
public protocol Clock: Sendable {
    func now() -> Date
}

/// Wall-clock time, the default.
public struct SystemClock: Clock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock tests set and advance by hand: an `AdjustableClock` that starts virtual.
public typealias VirtualClock = AdjustableClock

/// The system clock until a test sets it; then virtual, standing still until set or advanced again. The
/// server uses one for every engine, so `POST /clock` moves time for all profiles at once.
public final class AdjustableClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var virtualNow: Date?

    /// A clock on system time when `virtual` is nil, else standing at `virtual`.
    public init(virtual: Date?) { virtualNow = virtual }

    /// A virtual clock standing at `start`.
    public convenience init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { self.init(virtual: start) }

    public func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return virtualNow ?? Date()
    }

    public var isVirtual: Bool {
        lock.lock()
        defer { lock.unlock() }
        return virtualNow != nil
    }

    public func set(_ date: Date) {
        lock.lock()
        virtualNow = date
        lock.unlock()
    }

    public func advance(by seconds: TimeInterval) {
        lock.lock()
        virtualNow = (virtualNow ?? Date()).addingTimeInterval(seconds)
        lock.unlock()
    }

    public func useSystemTime() {
        lock.lock()
        virtualNow = nil
        lock.unlock()
    }
}

/// Seconds in a duration such as "90s", "6m", "2h", "1d", or plain seconds; nil for anything else.
public func parseDuration(_ s: String) -> TimeInterval? {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
    if let unit = s.last, let factor = units[unit], let n = Double(s.dropLast()), n >= 0 { return n * factor }
    return Double(s).flatMap { $0 >= 0 ? $0 : nil }
}
