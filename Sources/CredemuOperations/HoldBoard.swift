import CredemuEngine
import Foundation
import WebAuthn

/// Held ceremonies (seed criteria N2.5-AC03, N2.6-AC06): a test arms a hold on a profile, the next ceremony
/// for that profile waits until the test releases it (or the hold times out), and meanwhile the test can sign
/// out or switch accounts on the RP.
///
/// Bounded per profile and in all: at most `maxArmedPerProfile` holds are armed on one profile and `maxArmed` on the
/// server, so one caller filling a profile leaves the others their holds; a finished hold (released, expired or
/// abandoned) is dropped after `finishedLifetime`, or sooner when more than `maxFinished` are kept. Holds are kept
/// by ID: a ceremony's wait looks its hold up again after every wake-up, so pruning others never moves it.
public final class HoldBoard: @unchecked Sendable {
    /// `abandoned`: the held ceremony's client went away before the hold ended; `removed`: its profile was removed.
    public enum State: String, Sendable { case armed, holding, released, expired, abandoned, removed }
    public enum Outcome: String, Sendable { case proceed, cancel }

    public struct Hold: Sendable {
        public var id: String
        public var profile: String
        public var state: State
        public var outcome: Outcome
        public var timeoutMillis: Int
        public var operation: String?
        /// The order holds were armed in (listings, and which of a profile's armed holds a ceremony takes).
        var sequence: Int
        /// When the hold was released, expired or was abandoned.
        var finishedAt: Date?

        public var json: JSONValue {
            .object([("id", .string(id)), ("profile", .string(profile)), ("state", .string(state.rawValue)),
                     ("outcome", .string(outcome.rawValue)), ("timeoutMs", .number(Double(timeoutMillis))),
                     ("operation", operation.map(JSONValue.string) ?? .null)])
        }
    }

    /// What arming gave: the hold, or which bound refused it.
    enum Armed {
        case hold(Hold)
        case profileFull
        case boardFull
    }

    /// How a ceremony's wait on a hold ended.
    enum Ending: Equatable {
        case proceed
        case cancel
        case timedOut
        /// The ceremony's client went away; the hold is `abandoned`.
        case clientGone
        /// The profile was removed while the ceremony waited (`TargetLeases`); the hold is `removed`.
        case removed
    }

    public static let maxTimeoutMillis = 120_000
    public static let maxArmedPerProfile = 16
    public static let maxArmed = 256
    static let maxFinished = 64
    static let finishedLifetime: TimeInterval = 60
    private let condition = NSCondition()
    private var holds: [String: Hold] = [:]
    private var counter = 0
    /// Set when the server stops: no ceremony waits any more.
    private var closed = false

    public init() {}

    /// Arms a hold, unless the profile or the board has as many armed as it may.
    func arm(profile: String, timeoutMillis: Int) -> Armed {
        condition.lock()
        defer { condition.unlock() }
        prune()
        let armed = holds.values.filter { $0.state == .armed }
        guard armed.count < HoldBoard.maxArmed else { return .boardFull }
        guard armed.count(where: { $0.profile == profile }) < HoldBoard.maxArmedPerProfile else { return .profileFull }
        counter += 1
        let hold = Hold(id: "hold-\(counter)", profile: profile, state: .armed, outcome: .proceed,
                        timeoutMillis: min(max(timeoutMillis, 1), HoldBoard.maxTimeoutMillis), sequence: counter)
        holds[hold.id] = hold
        return .hold(hold)
    }

    /// Whether a ceremony for the profile would wait now.
    public func isArmed(profile: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return !closed && holds.values.contains { $0.profile == profile && $0.state == .armed }
    }

    /// Every hold kept, in the order they were armed.
    public var all: [Hold] {
        condition.lock()
        defer { condition.unlock() }
        prune()
        return holds.values.sorted { $0.sequence < $1.sequence }
    }

    /// Drops finished holds past their lifetime, and the oldest finished ones beyond `maxFinished`. Called with
    /// the lock held.
    private func prune() {
        let now = Date()
        holds = holds.filter { _, hold in hold.finishedAt.map { now.timeIntervalSince($0) <= HoldBoard.finishedLifetime } ?? true }
        let finished = holds.values.filter { $0.finishedAt != nil }
        guard finished.count > HoldBoard.maxFinished else { return }
        for hold in finished.sorted(by: { $0.sequence < $1.sequence }).prefix(finished.count - HoldBoard.maxFinished) {
            holds[hold.id] = nil
        }
    }

    /// Ends a hold that is armed or holding as `state`. Called with the lock held.
    private func finish(_ id: String, _ state: State, outcome: Outcome) {
        guard let hold = holds[id], hold.state == .armed || hold.state == .holding else { return }
        holds[id]?.state = state
        holds[id]?.outcome = outcome
        holds[id]?.finishedAt = Date()
    }

    /// Releases a hold; a release before the ceremony arrives disarms it.
    func release(id: String, outcome: Outcome) -> Hold? {
        condition.lock()
        defer { condition.unlock() }
        guard holds[id] != nil else { return nil }
        finish(id, .released, outcome: outcome)
        condition.broadcast()
        return holds[id]
    }

    /// Cancels every hold that is armed or holding, and lets no later ceremony wait (the server is stopping).
    func releaseAll() {
        condition.lock()
        closed = true
        for id in holds.keys { finish(id, .released, outcome: .cancel) }
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the holds of a removed profile, armed or holding (a profile made later under the name inherits none),
    /// and wakes the ceremonies waiting on them, whose `Cancellation.removed` is set.
    func removeProfile(_ profile: String) {
        condition.lock()
        for (id, hold) in holds where hold.profile == profile { finish(id, .removed, outcome: .cancel) }
        condition.broadcast()
        condition.unlock()
    }

    /// Called by a ceremony: waits while the profile's oldest armed hold is in force. Returns nil when no hold
    /// applied; an expired hold is `timedOut`, as a prompt the user let expire.
    func waitIfHeld(profile: String, operation: String, cancellation: Cancellation) -> Ending? {
        condition.lock()
        defer { condition.unlock() }
        if closed { return nil }
        guard let hold = holds.values.filter({ $0.profile == profile && $0.state == .armed }).min(by: { $0.sequence < $1.sequence }) else {
            return nil
        }
        let id = hold.id
        holds[id]?.state = .holding
        holds[id]?.operation = operation
        let deadline = Date().addingTimeInterval(Double(hold.timeoutMillis) / 1000)
        switch BoundedWait.wait(condition, until: deadline, cancellation: cancellation, while: { holds[id]?.state == .holding }) {
        case .done:
            if holds[id]?.state == .removed { return .removed }
            return holds[id]?.outcome == .proceed ? .proceed : .cancel
        case .timedOut, .cancelled(.deadline):
            finish(id, .expired, outcome: .cancel)
            return .timedOut
        case .cancelled(.clientGone):
            finish(id, .abandoned, outcome: .cancel)
            return .clientGone
        case .cancelled(.stopping):
            finish(id, .released, outcome: .cancel)
            return .cancel
        case .cancelled(.removed):
            finish(id, .removed, outcome: .cancel)
            return .removed
        }
    }
}
