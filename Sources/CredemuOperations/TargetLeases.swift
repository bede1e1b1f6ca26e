import CredemuEngine
import Foundation

/// The ceremonies in flight on each target, so removing a profile or a device ends them as a key pulled out
/// mid-ceremony ends Chrome's: whatever waits stops with NotAllowedError, and nothing acts for the removed name
/// afterwards, whatever is later made under the same name (issue 31: a held create finished after its
/// authenticator was removed, and a new authenticator of that name inherited the passkey and its private key).
///
/// A ceremony takes a `Lease` on its target before it looks the target up, names every profile whose engine will
/// act for it (`involve`: a security key or a phone's account answering a profile's page), and does its one write
/// inside `act`. Removal marks the name, revokes the leases that target or involve it (their waits end through
/// `Cancellation.removed`), waits out the few that are inside `act` (no waits there: microseconds), and only then
/// deletes. A lease is dropped when its ceremony ends, so nothing here outlives a ceremony or a removal.
///
/// A profile named by `involve` may have been removed (and made anew) between the engine's making and the call:
/// `involve` then finds it among the removals since the lease began (`recentRemovals`, the last
/// `removalsRemembered`; a lease older than those is refused rather than guessed about).
final class TargetLeases: @unchecked Sendable {
    /// One ceremony's hold on its target.
    final class Lease: @unchecked Sendable {
        let id: Int
        let target: CeremonyTarget
        /// Set when the target or an involved profile is removed; every wait of the ceremony ends on it.
        let removed = StopSignal()
        /// The removal count when the lease began.
        fileprivate let since: Int
        fileprivate var profiles: [String] = []
        fileprivate var acting = false

        fileprivate init(id: Int, target: CeremonyTarget, since: Int) {
            self.id = id
            self.target = target
            self.since = since
        }
    }

    static let removalsRemembered = 64
    private let condition = NSCondition()
    private var leases: [Int: Lease] = [:]
    private var counter = 0
    /// Targets being removed now: no lease begins on them and no profile among them is involved.
    private var removing: Set<CeremonyTarget> = []
    /// How many removals there were, and the names of the last `removalsRemembered` with their count.
    private var removals = 0
    private var recentRemovals: [(count: Int, target: CeremonyTarget)] = []

    /// Leases in flight (tests: nothing is left once ceremonies end).
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return leases.count
    }

    /// A lease on `target`, or nil while the target is being removed (the caller answers as for a missing target).
    func begin(_ target: CeremonyTarget) -> Lease? {
        condition.lock()
        defer { condition.unlock() }
        guard !removing.contains(target) else { return nil }
        counter += 1
        let lease = Lease(id: counter, target: target, since: removals)
        leases[lease.id] = lease
        return lease
    }

    /// Drops the lease (the ceremony answered or failed).
    func end(_ lease: Lease) {
        condition.lock()
        leases[lease.id] = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Names a profile whose engine acts for the ceremony; false (and the lease revoked) when that profile is being
    /// removed, or was removed after the lease began.
    func involve(_ lease: Lease, profile: String) -> Bool {
        let target = CeremonyTarget.profile(profile)
        condition.lock()
        defer { condition.unlock() }
        let removedSince = removals != lease.since
            && (removals - lease.since > recentRemovals.count
                || recentRemovals.contains { $0.count > lease.since && $0.target == target })
        if removing.contains(target) || removedSince { lease.removed.set() }
        if !lease.profiles.contains(profile) { lease.profiles.append(profile) }
        return !lease.removed.isSet
    }

    /// Runs the ceremony's write unless its lease was revoked; a removal waits until it is done.
    func act<T, E: Error>(_ lease: Lease, _ body: () throws(E) -> T) throws(E) -> T? {
        condition.lock()
        guard !lease.removed.isSet else {
            condition.unlock()
            return nil
        }
        lease.acting = true
        condition.unlock()
        defer {
            condition.lock()
            lease.acting = false
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// Removes `target` with `body` (the vault's delete): leases on it, or involving its profile, are revoked first,
    /// and those inside `act` are waited out, so no write for the name lands after `body`.
    func remove<T, E: Error>(_ target: CeremonyTarget, _ body: () throws(E) -> T) throws(E) -> T {
        condition.lock()
        removing.insert(target)
        removals += 1
        recentRemovals.append((removals, target))
        if recentRemovals.count > TargetLeases.removalsRemembered { recentRemovals.removeFirst() }
        let profileName: String? = if case .profile(let name) = target { name } else { nil }
        for lease in leases.values where lease.target == target || profileName.map(lease.profiles.contains) == true {
            lease.removed.set()
        }
        while leases.values.contains(where: { $0.acting && $0.removed.isSet }) { condition.wait() }
        condition.unlock()
        defer {
            condition.lock()
            removing.remove(target)
            condition.unlock()
        }
        return try body()
    }
}
