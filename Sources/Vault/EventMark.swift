import WebAuthn

/// The latest event of one kind a finding looks for, by what the finding looks it up by (an origin, an
/// account, a credential ID): table `event_marks`, one row per (profile, mark, key, key2), updated in the same
/// transaction as the event's own row.
///
/// Findings read marks instead of searching the log, so a review costs one indexed lookup however long the log
/// is, and rotating the log (`Vault.eventLogLimit`) loses nothing a finding needs. The rules are here, beside the
/// vault's writes, so that every writer of the log (engine, operations) keeps them; migration 2 derived the
/// marks of an older vault's log by the same rules.
public struct EventMark: Equatable, Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        /// An `autofill` event, whatever its outcome, by `detail.origin`; the value is `detail.username`.
        case autofill
        /// A `password` event with outcome `used`, by `detail.origin`.
        case passwordUsed
        /// A `create` event whose `detail.mediation` is "conditional", whatever its outcome, by `detail.origin`
        /// and `detail.userName`.
        case conditionalCreate
        /// A `signal` event whose `detail.signal` is "unknown", whatever its outcome, by `detail.credentialId`.
        case unknownSignal
    }

    /// The event's ID: marks compare by it (IDs grow with the log, rotated or not).
    public var eventID: Int64
    public var value: String?

    public init(eventID: Int64, value: String?) {
        self.eventID = eventID
        self.value = value
    }

    /// A mark an event sets; keys are the detail's string members (an event whose key member is missing or not
    /// a string sets none).
    struct Row: Equatable {
        var mark: Kind
        var key: String
        var key2: String
        var value: String?
    }

    static func marks(kind: String, outcome: String, detail: JSONValue) -> [Row] {
        switch kind {
        case "autofill":
            guard let origin = detail["origin"]?.stringValue else { return [] }
            return [Row(mark: .autofill, key: origin, key2: "", value: detail["username"]?.stringValue)]
        case "password":
            guard outcome == "used", let origin = detail["origin"]?.stringValue else { return [] }
            return [Row(mark: .passwordUsed, key: origin, key2: "", value: nil)]
        case "create":
            guard detail["mediation"]?.stringValue == "conditional", let origin = detail["origin"]?.stringValue,
                  let user = detail["userName"]?.stringValue else { return [] }
            return [Row(mark: .conditionalCreate, key: origin, key2: user, value: nil)]
        case "signal":
            guard detail["signal"]?.stringValue == "unknown", let id = detail["credentialId"]?.stringValue else { return [] }
            return [Row(mark: .unknownSignal, key: id, key2: "", value: nil)]
        default:
            return []
        }
    }
}

/// An event waiting in memory (see `Vault.appendEvent`), with the marks it sets.
struct PendingEvent {
    var profile: String
    var at: Int64
    var kind: String
    var outcome: String
    var reason: String
    var detail: JSONValue
    var marks: [EventMark.Row]
    /// Its place in the buffer's order.
    var sequence: Int

    var serialized: EventRow {
        EventRow(profile: profile, at: at, kind: kind, outcome: outcome, reason: reason, detail: detail.serialized(), marks: marks,
                 sequence: sequence)
    }
}

/// An event ready to insert: its detail as JSON text.
struct EventRow {
    var profile: String
    var at: Int64
    var kind: String
    var outcome: String
    var reason: String
    var detail: String
    var marks: [EventMark.Row]
    var sequence: Int
}
