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

/// A clock tests set and advance by hand.
public final class VirtualClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    public func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    public func set(_ date: Date) {
        lock.lock()
        current = date
        lock.unlock()
    }

    public func advance(by seconds: TimeInterval) {
        lock.lock()
        current = current.addingTimeInterval(seconds)
        lock.unlock()
    }
}

/// The system clock until a test sets it; then virtual, standing still until set or advanced again. The
/// server uses one for every engine, so `POST /clock` moves time for all profiles at once.
public final class AdjustableClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var virtualNow: Date?

    public init(virtual: Date? = nil) { virtualNow = virtual }

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
