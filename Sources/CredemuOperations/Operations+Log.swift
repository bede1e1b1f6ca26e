import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// The most events one read returns.
    public static let eventLimit = 10_000

    /// The event log after an event ID, oldest first.
    public func events(_ name: String, kind: String?, allProfiles: Bool = false, after: Int64 = 0,
                       limit: Int = Operations.eventLimit) throws(OperationError) -> [JSONValue] {
        _ = try profile(name)
        guard after >= 0 else { throw .invalidInput("'after' takes an event ID, 0 or more.") }
        guard (1...Operations.eventLimit).contains(limit) else { throw .invalidInput("'limit' takes 1 to \(Operations.eventLimit).") }
        return try stored { () throws(VaultError) in
            try vault.scoped(to: name).events(kind: kind, allProfiles: allProfiles, after: after, limit: limit)
        }.map(\.json)
    }

    /// Parses an event ID or count given as text (a query value or a flag): ASCII digits only.
    public static func count(_ text: String, _ what: String, in range: ClosedRange<Int64>) throws(OperationError) -> Int64 {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let n = Int64(text), range.contains(n) else {
            throw .invalidInput("'\(what)' takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'.")
        }
        return n
    }

    /// The RP integration findings recorded for the profile.
    public func findings(_ name: String) throws(OperationError) -> [JSONValue] {
        _ = try profile(name)
        do {
            return try Finding.list(vault.scoped(to: name)).map(\.json)
        } catch let error as VaultError {
            throw .vault(error)
        } catch {
            throw OperationError(.storage, .vaultError, "\(error)")
        }
    }

    /// The queue of the target's simulated user: a profile's own, or a device's (its browser's sheet; each account
    /// keeps its own queue for its own prompts).
    func decisionQueue(_ target: CeremonyTarget) throws(OperationError) -> Vault {
        try checkExists(target)
        switch target {
        case .profile(let name): return vault.scoped(to: name)
        case .device(let name): return deviceQueue(name)
        }
    }

    /// Queues the simulated user's next decisions (accept, cancel, timeout, pick:ID, use:NAME).
    public func queueDecisions(_ target: CeremonyTarget, _ texts: [String]) throws(OperationError) -> JSONValue {
        let queue = try decisionQueue(target)
        var decisions: [UserDecision] = []
        for text in texts {
            guard let decision = UserDecision(text) else {
                throw .invalidInput("'\(text)' is not a decision: accept, cancel, timeout, pick:CREDENTIAL_ID[@ACCOUNT] or use:NAME.")
            }
            decisions.append(decision)
        }
        try stored { () throws(VaultError) in try queue.transaction { () throws(VaultError) in for d in decisions { try queue.pushDecision(d.description) } } }
        return try pendingDecisions(target)
    }

    public func clearDecisions(_ target: CeremonyTarget) throws(OperationError) -> JSONValue {
        let queue = try decisionQueue(target)
        try stored { () throws(VaultError) in try queue.clearDecisions() }
        return try pendingDecisions(target)
    }

    public func pendingDecisions(_ target: CeremonyTarget) throws(OperationError) -> JSONValue {
        let queue = try decisionQueue(target)
        let pending = try stored { () throws(VaultError) in try queue.pendingDecisions() }
        return .object([("pending", .array(pending.map(JSONValue.string)))])
    }

    // MARK: Holds

    /// Arms a hold: the profile's next ceremony waits until released or `timeoutMillis` passes.
    public func armHold(_ name: String, timeoutMillis: Double?) throws(OperationError) -> JSONValue {
        _ = try profile(name)
        let timeout = timeoutMillis ?? 30_000
        guard timeout.isFinite, timeout.rounded() == timeout, (1...Double(HoldBoard.maxTimeoutMillis)).contains(timeout) else {
            throw .invalidInput("'timeoutMs' takes whole milliseconds from 1 to \(HoldBoard.maxTimeoutMillis).")
        }
        switch holds.arm(profile: name, timeoutMillis: Int(timeout)) {
        case .hold(let hold): return hold.json
        case .profileFull: throw .conflict("\(HoldBoard.maxArmedPerProfile) holds are armed on profile \(name) already; release one first.")
        case .boardFull: throw .conflict("\(HoldBoard.maxArmed) holds are armed on the server already; release one first.")
        }
    }

    public func releaseHold(_ id: String, outcome text: String?) throws(OperationError) -> JSONValue {
        guard let outcome = HoldBoard.Outcome(rawValue: text ?? "proceed") else { throw .invalidInput("'outcome' must be proceed or cancel.") }
        guard let hold = holds.release(id: id, outcome: outcome) else { throw .notFound("No hold '\(id)'.") }
        return hold.json
    }

    public func listHolds() -> JSONValue { .object([("holds", .array(holds.all.map(\.json)))]) }
}
