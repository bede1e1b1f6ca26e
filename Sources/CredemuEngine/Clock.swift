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

/// The longest duration a clock may be moved by: 10,000 years, in seconds.
public let maximumDuration: TimeInterval = 10_000 * 366 * 86400

/// Seconds in "90s", "6m", "2h", "1d" or "42" / "1.5": ASCII digits with at most one point, a whole
/// duration of at most `maximumDuration`; nil for anything else.
public func parseDuration(_ text: String) -> TimeInterval? {
    let units: [UInt8: Double] = [UInt8(ascii: "s"): 1, UInt8(ascii: "m"): 60, UInt8(ascii: "h"): 3600, UInt8(ascii: "d"): 86400]
    var digits = Array(text.utf8)
    var factor = 1.0
    if let last = digits.last, let f = units[last] {
        factor = f
        digits.removeLast()
    }
    guard !digits.isEmpty, digits.count <= 24, digits.first != UInt8(ascii: "."), digits.last != UInt8(ascii: "."),
          digits.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E }), digits.filter({ $0 == 0x2E }).count <= 1,
          let n = Double(String(decoding: digits, as: UTF8.self)) else { return nil }
    let seconds = n * factor
    guard seconds.isFinite, seconds <= maximumDuration else { return nil }
    return seconds
}
