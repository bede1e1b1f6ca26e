import CredemuEngine
import Foundation
import Vault
import WebAuthn

/// Ceremonies in flight on the server, by target (a `CeremonyTarget`: a profile or a device) and the ID the caller gave (the shim
/// sends one with every request): a page's abort reaches them, and a conditional get waits here for the simulated
/// user's pick from its autofill dropdown.
///
/// Each target has its slots: at most `maxWaitingPerTarget` conditional gets wait on one target, at most
/// `maxWaitingPerPage` from one page origin (across targets; callers without an origin count against the target
/// only), and `maxWaiting` on the server. Each waits at most `maxWaitSeconds`, and a wait whose client closed its
/// connection ends within `BoundedWait.pollInterval`, freeing its slot.
public final class CeremonyBoard: @unchecked Sendable {
    /// How a waiting ceremony ended.
    public enum Ending: Equatable, Sendable {
        case picked(Pick)
        case aborted
        case expired
        /// Its client went away.
        case abandoned
        /// Its target, or a profile acting for it, was removed (`TargetLeases`).
        case removed
    }

    struct Entry {
        var id: String
        var origin: String
        /// The page origin the request came from (its `Origin` header), whose slots it takes.
        var page: String?
        var conditional: Bool
        var rpID: String?
        var offer: [OfferedPasskey]?
        var since: Date
        var ending: Ending?
    }

    public static let maxWaitingPerTarget = 32
    public static let maxWaitingPerPage = 8
    public static let maxWaiting = 256
    public static let maxWaitSeconds: TimeInterval = 600
    private let condition = NSCondition()
    /// Target, then ceremony ID.
    private var targets: [CeremonyTarget: [String: Entry]] = [:]
    private var counter = 0
    /// Set when the server stops: nothing waits any more.
    private var closed = false

    public init() {}

    /// A ceremony ID a caller may give: 1 to 64 characters of the base64url alphabet.
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5a).contains(c) || (0x61...0x7a).contains(c) || c == 0x2d || c == 0x5f
        }
    }

    /// Registers a ceremony on the target `profile`. Returns the ID (the given one, or a new one), or nil when the
    /// ID is in use there or a conditional get would pass a bound.
    ///
    /// A waiting conditional get is not replaced by a later request: Chromium 156 refuses the later one with
    /// "A request is already pending." (OperationError) and the page must abort the conditional get first; the
    /// shim does that refusing in the page, so API callers may run ceremonies side by side.
    func begin(target: CeremonyTarget, id given: String?, origin: String, page: String? = nil, conditional: Bool) -> String? {
        condition.lock()
        defer { condition.unlock() }
        if conditional && !hasSlot(target: target, page: page) { return nil }
        counter += 1
        let id = given ?? "ceremony-\(counter)"
        guard targets[target]?[id] == nil else { return nil }
        targets[target, default: [:]][id] = Entry(id: id, origin: origin, page: page, conditional: conditional, since: Date())
        return id
    }

    /// Whether one more conditional get may wait on `target` for `page`. Called with the lock held.
    private func hasSlot(target: CeremonyTarget, page: String?) -> Bool {
        var all = 0, onTarget = 0, fromPage = 0
        for (name, entries) in targets {
            for entry in entries.values where entry.conditional {
                all += 1
                if name == target { onTarget += 1 }
                if page != nil && entry.page == page { fromPage += 1 }
            }
        }
        return all < CeremonyBoard.maxWaiting && onTarget < CeremonyBoard.maxWaitingPerTarget
            && (page == nil || fromPage < CeremonyBoard.maxWaitingPerPage)
    }

    /// Publishes a conditional get's dropdown.
    func offer(target: CeremonyTarget, id: String, rpID: String, passkeys: [OfferedPasskey]) {
        condition.lock()
        targets[target]?[id]?.rpID = rpID
        targets[target]?[id]?.offer = passkeys
        condition.unlock()
    }

    /// Waits until the ceremony ends (picked, aborted), `maxWaitSeconds` pass or `cancellation` ends it (its client
    /// gone: `abandoned`; the server stopping: `aborted`).
    func wait(target: CeremonyTarget, id: String, cancellation: Cancellation) -> Ending {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(CeremonyBoard.maxWaitSeconds)
        if closed { end(target, id, .aborted) }
        switch BoundedWait.wait(condition, until: deadline, cancellation: cancellation, while: {
            targets[target]?[id] != nil && targets[target]?[id]?.ending == nil
        }) {
        case .done: break
        case .timedOut, .cancelled(.deadline): end(target, id, .expired)
        case .cancelled(.clientGone): end(target, id, .abandoned)
        case .cancelled(.stopping): end(target, id, .aborted)
        case .cancelled(.removed): end(target, id, .removed)
        }
        return targets[target]?[id]?.ending ?? .aborted
    }

    /// Ends a ceremony that has not ended. Called with the lock held.
    private func end(_ target: CeremonyTarget, _ id: String, _ ending: Ending) {
        guard targets[target]?[id] != nil, targets[target]?[id]?.ending == nil else { return }
        targets[target]?[id]?.ending = ending
        condition.broadcast()
    }

    /// Whether the caller aborted the ceremony (or a modal request replaced it) since it began.
    func ending(target: CeremonyTarget, id: String) -> Ending? {
        condition.lock()
        defer { condition.unlock() }
        return targets[target]?[id]?.ending
    }

    /// Forgets a ceremony that has answered, and its target once it has none.
    func finish(target: CeremonyTarget, id: String) {
        condition.lock()
        targets[target]?[id] = nil
        if targets[target]?.isEmpty == true { targets[target] = nil }
        condition.unlock()
    }

    /// Aborts a ceremony in flight; false when none has that ID (it answered already, or never began), or
    /// when a page asks for a ceremony of another origin.
    func abort(target: CeremonyTarget, id: String, view: PageView) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let entry = targets[target]?[id], entry.ending == nil, view.sees(ceremonyOrigin: entry.origin) else { return false }
        end(target, id, .aborted)
        return true
    }

    /// Wakes every wait, so one whose `Cancellation` has ended (its target removed) sees it at once rather than at its
    /// next poll.
    func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every waiting ceremony with an abort, and every later one as it begins to wait (the server is
    /// stopping).
    func abortAll() {
        condition.lock()
        closed = true
        for (target, entries) in targets {
            for id in entries.keys { end(target, id, .aborted) }
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The simulated user picks a passkey in a waiting dropdown (the named one, or the only one offering it); a pick
    /// naming an account matches only that provider's entry (a profile's dropdown names none: its own account's).
    func pick(target: CeremonyTarget, _ pick: Pick, ceremony: String?, view: PageView) -> String? {
        condition.lock()
        defer { condition.unlock() }
        let waiting = (targets[target] ?? [:]).values.filter { e in
            e.ending == nil && (ceremony.map { e.id == $0 } ?? true) && view.sees(ceremonyOrigin: e.origin)
                && (e.offer?.contains { $0.credentialID == pick.credentialID && (pick.account == nil || $0.provider == nil || $0.provider == pick.account) } ?? false)
        }.sorted { $0.since < $1.since }
        guard let entry = waiting.first else { return nil }
        targets[target]?[entry.id]?.ending = .picked(pick)
        condition.broadcast()
        return entry.id
    }

    /// The dropdowns open now on a target, oldest first.
    func offers(target: CeremonyTarget, view: PageView) -> [JSONValue] {
        condition.lock()
        defer { condition.unlock() }
        return (targets[target] ?? [:]).values.filter { $0.ending == nil && $0.offer != nil && view.sees(ceremonyOrigin: $0.origin) }
            .sorted { $0.since < $1.since }.map { e in
            .object([("ceremony", .string(e.id)), ("origin", .string(e.origin)), ("rpId", e.rpID.map(JSONValue.string) ?? .null),
                     ("since", .string(Timestamp.format(e.since))), ("passkeys", .array((e.offer ?? []).map(view.listing)))])
        }
    }
}
