import CredemuEngine
import Foundation
import Vault
import WebAuthn

/// Ceremonies in flight on the server, by the ID the caller gave (the shim sends one with every request):
/// a page's abort reaches them, and a conditional get waits here for the simulated user's pick from its
/// autofill dropdown.
///
/// Bounded like the hold board: at most `maxWaiting` conditional gets wait at once; each waits at most
/// `maxWaitSeconds`.
public final class CeremonyBoard: @unchecked Sendable {
    /// How a waiting ceremony ended.
    public enum Ending: Equatable, Sendable {
        case picked([UInt8])
        case aborted
        case expired
    }

    struct Entry {
        var id: String
        var profile: String
        var origin: String
        var conditional: Bool
        var rpID: String?
        var offer: [OfferedPasskey]?
        var since: Date
        var ending: Ending?
    }

    public static let maxWaiting = 32
    public static let maxWaitSeconds: TimeInterval = 600
    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]
    private var counter = 0
    /// Set when the server stops: nothing waits any more.
    private var closed = false

    public init() {}

    private static func key(_ profile: String, _ id: String) -> String { profile + "\u{0}" + id }

    /// A ceremony ID a caller may give: 1 to 64 characters of the base64url alphabet.
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5a).contains(c) || (0x61...0x7a).contains(c) || c == 0x2d || c == 0x5f
        }
    }

    /// Registers a ceremony. Returns the ID (the given one, or a new one), or nil when the ID is in use or too
    /// many conditional gets wait already.
    ///
    /// A waiting conditional get is not replaced by a later request: Chromium 156 refuses the later one with
    /// "A request is already pending." (OperationError) and the page must abort the conditional get first; the
    /// shim does that refusing in the page, so API callers may run ceremonies side by side.
    func begin(profile: String, id given: String?, origin: String, conditional: Bool) -> String? {
        condition.lock()
        defer { condition.unlock() }
        if conditional && entries.values.filter({ $0.conditional && $0.ending == nil }).count >= CeremonyBoard.maxWaiting {
            return nil
        }
        counter += 1
        let id = given ?? "ceremony-\(counter)"
        let key = CeremonyBoard.key(profile, id)
        guard entries[key] == nil else { return nil }
        entries[key] = Entry(id: id, profile: profile, origin: origin, conditional: conditional, since: Date())
        return id
    }

    /// Publishes a conditional get's dropdown.
    func offer(profile: String, id: String, rpID: String, passkeys: [OfferedPasskey]) {
        condition.lock()
        entries[CeremonyBoard.key(profile, id)]?.rpID = rpID
        entries[CeremonyBoard.key(profile, id)]?.offer = passkeys
        condition.unlock()
    }

    /// Waits until the ceremony ends (picked, aborted, replaced) or `maxWaitSeconds` pass.
    func wait(profile: String, id: String) -> Ending {
        condition.lock()
        defer { condition.unlock() }
        let key = CeremonyBoard.key(profile, id)
        let deadline = Date().addingTimeInterval(CeremonyBoard.maxWaitSeconds)
        if closed { entries[key]?.ending = .aborted }
        while entries[key] != nil, entries[key]?.ending == nil {
            if !condition.wait(until: deadline) {
                entries[key]?.ending = .expired
            }
        }
        return entries[key]?.ending ?? .aborted
    }

    /// Whether the caller aborted the ceremony (or a modal request replaced it) since it began.
    func ending(profile: String, id: String) -> Ending? {
        condition.lock()
        defer { condition.unlock() }
        return entries[CeremonyBoard.key(profile, id)]?.ending
    }

    /// Forgets a ceremony that has answered.
    func finish(profile: String, id: String) {
        condition.lock()
        entries[CeremonyBoard.key(profile, id)] = nil
        condition.unlock()
    }

    /// Aborts a ceremony in flight; false when none has that ID (it answered already, or never began), or
    /// when a page asks for a ceremony of another origin.
    func abort(profile: String, id: String, view: PageView) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let key = CeremonyBoard.key(profile, id)
        guard let entry = entries[key], entry.ending == nil, view.sees(ceremonyOrigin: entry.origin) else { return false }
        entries[key]?.ending = .aborted
        condition.broadcast()
        return true
    }

    /// Ends every waiting ceremony with an abort, and every later one as it begins to wait (the server is
    /// stopping).
    func abortAll() {
        condition.lock()
        closed = true
        for key in entries.keys where entries[key]?.ending == nil { entries[key]?.ending = .aborted }
        condition.broadcast()
        condition.unlock()
    }

    /// The simulated user picks a passkey in a waiting dropdown (the named one, or the only one offering it).
    func pick(profile: String, credentialID: [UInt8], ceremony: String?, view: PageView) -> String? {
        condition.lock()
        defer { condition.unlock() }
        let waiting = entries.filter { _, e in
            e.profile == profile && e.ending == nil && (ceremony.map { e.id == $0 } ?? true) && view.sees(ceremonyOrigin: e.origin)
                && (e.offer?.contains { $0.credentialID == credentialID } ?? false)
        }.sorted { $0.value.since < $1.value.since }
        guard let (key, entry) = waiting.first else { return nil }
        entries[key]?.ending = .picked(credentialID)
        condition.broadcast()
        return entry.id
    }

    /// The dropdowns open now for a profile, oldest first.
    func offers(profile: String, view: PageView) -> [JSONValue] {
        condition.lock()
        defer { condition.unlock() }
        return entries.values.filter { $0.profile == profile && $0.ending == nil && $0.offer != nil && view.sees(ceremonyOrigin: $0.origin) }.sorted { $0.since < $1.since }.map { e in
            .object([("ceremony", .string(e.id)), ("origin", .string(e.origin)), ("rpId", e.rpID.map(JSONValue.string) ?? .null),
                     ("since", .string(Timestamp.format(e.since))), ("passkeys", .array((e.offer ?? []).map(view.listing)))])
        }
    }
}
