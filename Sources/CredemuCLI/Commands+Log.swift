import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Commands {
    static let clock: Command = Command(
        "clock", summary: "Show, set or advance the vault's virtual clock.",
        discussion: """
        The vault's clock, shared by every profile. `set` and `advance` make it virtual: it stands still until moved.
        `system` returns to wall-clock time.
        """,
        subcommands: [
            Command("show", summary: "The clock's time and mode.") { context, _ in
                context.printJSON(try context.perform { (ops) throws(OperationError) -> JSONValue in ops.clockState() })
                return .success
            },
            Command("set", summary: "Make the clock virtual, at TIME.",
                    positionals: [Positional("TIME", "an RFC 3339 UTC time such as 2026-11-29T10:00:00Z")]) { context, args in
                let time = args.argument("TIME") ?? ""
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.setClock(time, profile: context.profileName) })
                return .success
            },
            Command("advance", summary: "Move the virtual clock on by DURATION.",
                    positionals: [Positional("DURATION", "a duration such as 90s, 6m, 2h or 1d")]) { context, args in
                let duration = args.argument("DURATION") ?? ""
                context.printJSON(try context.perform { (ops) throws(OperationError) in
                    try ops.advanceClock(duration, profile: context.profileName)
                })
                return .success
            },
            Command("system", summary: "Return to wall-clock time.") { context, _ in
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.systemClock(profile: context.profileName) })
                return .success
            },
        ],
        defaultSubcommand: "show")

    static let user: Command = Command(
        "user", summary: "Script the simulated user's next decisions (accept, cancel, timeout, pick, use).",
        discussion: """
        The simulated user's next decisions, taken first in, first out by prompts. Without a queued decision the user
        accepts. use:NAME chooses an authenticator in the browser's sheet: a security key plugged in (its profile), a
        phone device (over hybrid) or one of the manager accounts. With --device, the device's own queue: its sheet's
        decisions (use:NAME, or a cancel of a sheet that offers only keys and phones).
        """,
        subcommands: [
            Command("next", summary: "Queue decisions: accept, cancel, timeout, pick:CREDENTIAL_ID[@ACCOUNT] or use:NAME.",
                    positionals: [Positional("DECISION", "a decision: accept, cancel, timeout, pick:CREDENTIAL_ID[@ACCOUNT] or use:NAME", repeating: true)]
            ) { context, args in
                let decisions = args.words("DECISION")
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.queueDecisions(context.target, decisions) })
                return .success
            },
            Command("pending", summary: "The queued decisions.") { context, _ in
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.pendingDecisions(context.target) })
                return .success
            },
            Command("clear", summary: "Drop the queued decisions.") { context, _ in
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.clearDecisions(context.target) })
                return .success
            },
        ],
        defaultSubcommand: "pending")

    static let events: Command = Command(
        "events", summary: "The event log: every ceremony, autofill, signal and setting change with its reason.",
        discussion: """
        The event log of --profile (or of every profile): kinds create, get, autofill, password, signal, setting, clock;
        each with outcome (success, noop, error, applied, ignored, dropped, ...), reason and detail.
        """,
        options: [Option("kind", .text("K"), "Only events of this kind."), .flag("all-profiles", "Every profile's events."),
                  Option("after", .text("ID"), "Only events after this event ID."),
                  Option("limit", .text("N"), "At most N events (1 to \(Operations.eventLimit), the default).")]
    ) { context, args in
        let list = try context.perform { (ops) throws(OperationError) -> [JSONValue] in
            let after = try args.value("after").map { (t) throws(OperationError) in try Operations.count(t, "--after", in: 0...Int64.max) } ?? 0
            let limit = try args.value("limit").map { (t) throws(OperationError) in
                try Operations.count(t, "--limit", in: 1...Int64(Operations.eventLimit))
            } ?? Int64(Operations.eventLimit)
            return try ops.events(context.profileName, kind: args.value("kind"), allProfiles: args.flag("all-profiles"), after: after,
                                  limit: Int(limit))
        }
        context.printJSON(.array(list))
        return .success
    }

    static let findings: Command = Command(
        "findings", summary: "What the RP's own requests did against the seeds' guidance, with fixes.",
        discussion: """
        The profile's RP integration findings: requests that went against the seeds' guidance (an upgrade for another
        account than the one just autofilled, missing exclusion IDs, a repeated automatic attempt, UV required on a
        conditional create, an empty or partial accepted list, an unknown credential later listed as accepted, signals
        past the rate limit, a display name where the platform keeps only the name), each with its criterion and a fix.
        """
    ) { context, _ in
        context.printJSON(.array(try context.perform { (ops) throws(OperationError) in try ops.findings(context.profileName) }))
        return .success
    }
}
