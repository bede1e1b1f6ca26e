import Foundation
import WebAuthn

/// Held ceremonies (seed criteria N2.5-AC03, N2.6-AC06): a test arms a hold on a profile, the next ceremony
/// for that profile waits until the test releases it (or the hold times out), and meanwhile the test can sign
/// out or switch accounts on the RP.
///
/// The board stays small whatever callers do: at most `maxArmed` holds wait for a ceremony, and a finished hold
/// (released or expired) is dropped after `finishedLifetime`, or sooner when more than `maxFinished` are kept.
public final class HoldBoard: @unchecked Sendable {
    public enum State: String, Sendable { case armed, holding, released, expired }
    public enum Outcome: String, Sendable { case proceed, cancel }

    public struct Hold: Sendable {
        public var id: String
        public var profile: String
        public var state: State
        public var outcome: Outcome
        public var timeoutMillis: Int
        public var operation: String?
        /// When the hold was released or expired.
        var finishedAt: Date?

        public var json: JSONValue {
            .object([("id", .string(id)), ("profile", .string(profile)), ("state", .string(state.rawValue)),
                     ("outcome", .string(outcome.rawValue)), ("timeoutMs", .number(Double(timeoutMillis))),
                     ("operation", operation.map(JSONValue.string) ?? .null)])
        }
    }

    public static let maxTimeoutMillis = 120_000
    public static let maxArmed = 64
    static let maxFinished = 64
    static let finishedLifetime: TimeInterval = 60
    private let condition = NSCondition()
    private var holds: [Hold] = []
    private var counter = 0
    /// Set when the server stops: no ceremony waits any more.
    private var closed = false

    public init() {}

    /// Arms a hold; nil when `maxArmed` holds are armed already.
    func arm(profile: String, timeoutMillis: Int) -> Hold? {
        condition.lock()
        defer { condition.unlock() }
        prune()
        guard holds.filter({ $0.state == .armed }).count < HoldBoard.maxArmed else { return nil }
        counter += 1
        let hold = Hold(id: "hold-\(counter)", profile: profile, state: .armed, outcome: .proceed,
                        timeoutMillis: min(max(timeoutMillis, 1), HoldBoard.maxTimeoutMillis))
        holds.append(hold)
        return hold
    }

    /// Whether a ceremony for the profile would wait now.
    public func isArmed(profile: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return holds.contains { $0.profile == profile && $0.state == .armed }
    }

    public var all: [Hold] {
        condition.lock()
        defer { condition.unlock() }
        prune()
        return holds
    }

    /// Drops finished holds past their lifetime, and the oldest finished ones beyond `maxFinished`. Called with
    /// the lock held.
    private func prune() {
        let now = Date()
        holds.removeAll { hold in hold.finishedAt.map { now.timeIntervalSince($0) > HoldBoard.finishedLifetime } ?? false }
        var finished = holds.filter { $0.finishedAt != nil }.count
        while finished > HoldBoard.maxFinished, let oldest = holds.firstIndex(where: { $0.finishedAt != nil }) {
            holds.remove(at: oldest)
            finished -= 1
        }
    }

    /// Releases a hold; a release before the ceremony arrives disarms it.
    func release(id: String, outcome: Outcome) -> Hold? {
        condition.lock()
        defer { condition.unlock() }
        guard let index = holds.firstIndex(where: { $0.id == id }) else { return nil }
        if holds[index].state == .armed || holds[index].state == .holding {
            holds[index].state = .released
            holds[index].outcome = outcome
            holds[index].finishedAt = Date()
        }
        condition.broadcast()
        return holds[index]
    }

    /// Cancels every hold that is armed or holding, and lets no later ceremony wait (the server is stopping).
    func releaseAll() {
        condition.lock()
        closed = true
        for i in holds.indices where holds[i].state == .armed || holds[i].state == .holding {
            holds[i].state = .released
            holds[i].outcome = .cancel
            holds[i].finishedAt = Date()
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Called by a ceremony: waits while an armed hold for the profile is in force. Returns the outcome, or nil
    /// when no hold applied; `.cancel` also on timeout, as a prompt the user let expire.
    func waitIfHeld(profile: String, operation: String) -> (Outcome, timedOut: Bool)? {
        condition.lock()
        defer { condition.unlock() }
        if closed { return nil }
        guard let index = holds.firstIndex(where: { $0.profile == profile && $0.state == .armed }) else { return nil }
        holds[index].state = .holding
        holds[index].operation = operation
        let id = holds[index].id
        let deadline = Date().addingTimeInterval(Double(holds[index].timeoutMillis) / 1000)
        while let i = holds.firstIndex(where: { $0.id == id }), holds[i].state == .holding {
            if !condition.wait(until: deadline) {
                holds[i].state = .expired
                holds[i].finishedAt = Date()
                return (.cancel, true)
            }
        }
        return (holds.first { $0.id == id }?.outcome ?? .cancel, false)
    }
}
