import CredemuEngine
import Foundation

/// The one way anything in credemu waits for another request: on a condition, until a deadline, and never past
/// its client. libmicrohttpd does not watch a suspended connection, so the wait asks `Cancellation.clientGone`
/// itself every `pollInterval`; a client that closed its connection frees what it waited in within that.
enum BoundedWait {
    enum End: Equatable {
        /// `pending` turned false.
        case done
        case timedOut
        case cancelled(Cancellation.Reason)
    }

    static let pollInterval: TimeInterval = 0.25

    /// Waits on `condition`, which the caller holds locked, while `pending()` is true. `pending` is read with the
    /// lock held after every wake-up, so it must look its state up afresh (by key, never by a position kept from
    /// before the wait).
    static func wait(_ condition: NSCondition, until deadline: Date, cancellation: Cancellation, while pending: () -> Bool) -> End {
        while pending() {
            let now = Date()
            if let reason = cancellation.reason(now: now) { return .cancelled(reason) }
            if now >= deadline { return .timedOut }
            _ = condition.wait(until: min(deadline, now.addingTimeInterval(pollInterval)))
        }
        return .done
    }
}
