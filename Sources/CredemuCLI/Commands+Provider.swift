import CredemuEngine
import Foundation
import Vault
import WebAuthn

extension Context {
    func profileCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: Set(Profile.settingNames))
        guard let sub = args.positionals.first else { throw UsageError("profile needs a subcommand: create, list, show, set or remove.") }
        let vault = try openVault()
        defer { vault.close() }
        switch sub {
        case "list":
            try args.noMorePositionals(after: 1)
            _ = try loadProfile(vault, name: Vault.defaultProfile)
            printJSON(.array(try vault.allProfiles().map { $0.settings }))
        case "show":
            try args.noMorePositionals(after: 2)
            printJSON(try loadProfile(vault, name: args.positionals.dropFirst().first ?? profileName).json)
        case "create", "set":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("profile \(sub) needs a profile name.") }
            let name = args.positionals[1]
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
                throw UsageError("A profile name uses letters, digits, '-', '_' and '.'.")
            }
            let existing = try vault.profileSettings(name)
            if sub == "create" && existing != nil { throw VaultError(.duplicate, "The profile '\(name)' exists already.") }
            if sub == "set" && existing == nil && name != Vault.defaultProfile { throw VaultError(.notFound, "No profile '\(name)'.") }
            var profile = sub == "create" ? Profile(name: name) : try loadProfile(vault, name: name)
            var changed: [(String, JSONValue)] = []
            for key in Profile.settingNames {
                guard let value = args.value(key) else { continue }
                let json: JSONValue = value == "null" ? .null : .string(value)
                try profile.set(key, json)
                changed.append((key, json))
            }
            _ = try registry().policy(for: profile)  // refuses an unknown or malformed pack before saving
            try vault.saveProfile(name, settings: profile.json, at: try clock(vault).now())
            try vault.scoped(to: name).appendEvent(kind: "setting", outcome: sub == "create" ? "created" : "changed", reason: "success",
                                                   detail: .object(changed), at: try clock(vault).now())
            printJSON(profile.json)
        case "remove":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("profile remove needs a profile name.") }
            guard try vault.removeProfile(args.positionals[1]) else { throw VaultError(.notFound, "No profile '\(args.positionals[1])'.") }
            printJSON(.object([("removed", .string(args.positionals[1]))]))
        default:
            throw UsageError("Unknown profile subcommand '\(sub)'.")
        }
        return .success
    }

    func autofill(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "username", "android-package"], flagNames: ["submit"])
        try args.noMorePositionals(after: 0)
        let caller = try Caller(origin: try args.required("origin"), androidPackageName: args.value("android-package"))
        let vault = try openVault()
        defer { vault.close() }
        let engine = try engine(vault)
        let filled = try run(engine, .get) { () throws(CeremonyError) in
            try engine.autofill(origin: caller.signonRealm, username: args.value("username"), submit: args.flag("submit"))
        }
        printJSON(.object([("username", .string(filled.record.username)), ("password", .string(filled.password)),
                           ("origin", .string(filled.record.origin)),
                           ("filledAt", .string(Timestamp.format(filled.record.lastFilledAt ?? Date()))),
                           ("submitted", .bool(args.flag("submit")))]))
        return .success
    }

    func signalCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "options", "platform"])
        guard let kind = args.positionals.first else { throw UsageError("signal needs a kind: unknown, accepted or details.") }
        try args.noMorePositionals(after: 1)
        let caller = try Caller(origin: try args.required("origin"))
        let request = try SignalRequest(kind: kind, json: try readInput(file: args.value("options")))
        let vault = try openVault()
        defer { vault.close() }
        let engine = try engine(vault, platform: args.value("platform"))
        try run(engine, .signal) { () throws(CeremonyError) in try engine.signal(request, caller: caller) }
        printJSON(.object([("resolved", true)]))
        return .success
    }

    func capabilitiesCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["platform"])
        try args.noMorePositionals(after: 0)
        let vault = try openVault()
        defer { vault.close() }
        printJSON(try engine(vault, platform: args.value("platform")).capabilities())
        return .success
    }

    func clockCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [])
        let vault = try openVault()
        defer { vault.close() }
        let sub = args.positionals.first ?? "show"
        switch sub {
        case "show":
            try args.noMorePositionals(after: 1)
        case "set":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2, let date = Timestamp.parse(args.positionals[1]) else {
                throw UsageError("clock set takes an RFC 3339 UTC time such as 2026-11-29T10:00:00Z.")
            }
            try setClock(vault, date)
        case "advance":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2, let seconds = parseDuration(args.positionals[1]) else {
                throw UsageError("clock advance takes a duration such as 90s, 6m, 2h or 1d.")
            }
            try setClock(vault, try clock(vault).now().addingTimeInterval(seconds))
        case "system":
            try args.noMorePositionals(after: 1)
            try vault.storeClockTime(nil)
        default:
            throw UsageError("Unknown clock subcommand '\(sub)': show, set, advance or system.")
        }
        let virtual = try vault.storedClockTime() != nil
        printJSON(.object([("now", .string(Timestamp.format(try clock(vault).now()))), ("mode", .string(virtual ? "virtual" : "system"))]))
        return .success
    }

    private func setClock(_ vault: Vault, _ date: Date) throws {
        try vault.storeClockTime(date)
        try vault.appendEvent(kind: "clock", outcome: "set", reason: "success", detail: .object([("now", .string(Timestamp.format(date)))]), at: date)
    }


    func providersCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["platform"])
        let sub = args.positionals.first ?? "list"
        switch sub {
        case "list":
            try args.noMorePositionals(after: 1)
            printJSON(try registry().json)
        case "show":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("providers show needs a pack ID.") }
            guard let pack = try registry().packs.first(where: { $0.id == args.positionals[1] }) else {
                throw UsageError("No pack '\(args.positionals[1])'.")
            }
            let platform = try args.value("platform").map { (p) throws(UsageError) -> Platform in
                guard let platform = Platform(rawValue: p) else { throw UsageError("Unknown platform '\(p)'.") }
                return platform
            } ?? pack.defaultPlatform
            let knobs: [JSONValue] = pack.describe(platform).map { name, value, source, unconfirmed in
                .object([("knob", .string(name)), ("value", value), ("source", .string(source)),
                         ("unconfirmed", unconfirmed.map(JSONValue.string) ?? .null)])
            }
            printJSON(.object([("id", .string(pack.id)), ("version", .string(pack.version)), ("platform", .string(platform.rawValue)),
                               ("knobs", .array(knobs))]))
        case "validate":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("providers validate needs a pack file.") }
            let pack = try PolicyPack.load(path: args.positionals[1])
            printJSON(.object([("valid", true), ("id", .string(pack.id)), ("version", .string(pack.version))]))
        default:
            throw UsageError("Unknown providers subcommand '\(sub)': list, show or validate.")
        }
        return .success
    }

    func eventsCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["kind", "after", "limit"], flagNames: ["all-profiles"])
        try args.noMorePositionals(after: 0)
        let after = try args.value("after").map { (s) throws(UsageError) -> Int64 in
            guard let n = Int64(s) else { throw UsageError("--after takes an event ID.") }
            return n
        } ?? 0
        let vault = try openVault()
        defer { vault.close() }
        let events = try vault.events(kind: args.value("kind"), allProfiles: args.flag("all-profiles"), after: after,
                                      limit: args.value("limit").flatMap(Int.init) ?? 10_000)
        printJSON(.array(events.map(\.json)))
        return .success
    }

    func userCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [])
        let vault = try openVault()
        defer { vault.close() }
        switch args.positionals.first ?? "pending" {
        case "next":
            guard args.positionals.count >= 2 else { throw UsageError("user next takes accept, cancel, timeout or pick:CREDENTIAL_ID.") }
            for text in args.positionals.dropFirst() {
                guard let decision = UserDecision(text) else { throw UsageError("'\(text)' is not a decision: accept, cancel, timeout or pick:CREDENTIAL_ID.") }
                try vault.pushDecision(decision.description)
            }
        case "pending":
            try args.noMorePositionals(after: 1)
        case "clear":
            try args.noMorePositionals(after: 1)
            try vault.clearDecisions()
        default:
            throw UsageError("Unknown user subcommand: next, pending or clear.")
        }
        printJSON(.object([("pending", .array(try vault.pendingDecisions().map(JSONValue.string)))]))
        return .success
    }
}
