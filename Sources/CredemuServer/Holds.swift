import Foundation
import WebAuthn

/// Held ceremonies (seed criteria N2.5-AC03, N2.6-AC06): a test arms a hold on a profile, the next ceremony
/// for that profile waits until the test releases it (or the hold times out), and meanwhile the test can sign
/// out or switch accounts on the RP.
final class HoldBoard: @unchecked Sendable {
    enum State: String { case armed, holding, released, expired }
    enum Outcome: String { case proceed, cancel }

    struct Hold {
        var id: String
        var profile: String
        var state: State
        var outcome: Outcome
        var timeoutMillis: Int
        var operation: String?

        var json: JSONValue {
            .object([("id", .string(id)), ("profile", .string(profile)), ("state", .string(state.rawValue)),
                     ("outcome", .string(outcome.rawValue)), ("timeoutMs", .number(Double(timeoutMillis))),
                     ("operation", operation.map(JSONValue.string) ?? .null)])
        }
    }

    static let maxTimeoutMillis = 120_000
    private let condition = NSCondition()
    private var holds: [Hold] = []
    private var counter = 0

    func arm(profile: String, timeoutMillis: Int) -> Hold {
        condition.lock()
        defer { condition.unlock() }
        counter += 1
        let hold = Hold(id: "hold-\(counter)", profile: profile, state: .armed, outcome: .proceed,
                        timeoutMillis: min(max(timeoutMillis, 1), HoldBoard.maxTimeoutMillis))
        holds.append(hold)
        return hold
    }

    /// Whether a ceremony for the profile would wait now.
    func isArmed(profile: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return holds.contains { $0.profile == profile && $0.state == .armed }
    }

    var all: [Hold] {
        condition.lock()
        defer { condition.unlock() }
        return holds
    }

    /// Releases a hold; a release before the ceremony arrives disarms it.
    func release(id: String, outcome: Outcome) -> Hold? {
        condition.lock()
        defer { condition.unlock() }
        guard let index = holds.firstIndex(where: { $0.id == id }) else { return nil }
        if holds[index].state == .armed || holds[index].state == .holding {
            holds[index].state = .released
            holds[index].outcome = outcome
        }
        condition.broadcast()
        return holds[index]
    }

    /// Called by a ceremony: waits while an armed hold for the profile is in force. Returns the outcome, or nil
    /// when no hold applied; `.cancel` also on timeout, as a prompt the user let expire.
    func waitIfHeld(profile: String, operation: String) -> (Outcome, timedOut: Bool)? {
        condition.lock()
        defer { condition.unlock() }
        guard let index = holds.firstIndex(where: { $0.profile == profile && $0.state == .armed }) else { return nil }
        holds[index].state = .holding
        holds[index].operation = operation
        let id = holds[index].id
        let deadline = Date().addingTimeInterval(Double(holds[index].timeoutMillis) / 1000)
        while let i = holds.firstIndex(where: { $0.id == id }), holds[i].state == .holding {
            if !condition.wait(until: deadline) {
                holds[i].state = .expired
                return (.cancel, true)
            }
        }
        let final = holds.first { $0.id == id }!
        return (final.outcome, false)
    }
}
