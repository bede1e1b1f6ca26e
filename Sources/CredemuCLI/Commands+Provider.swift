import CredemuEngine
import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Context {
    func profileCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: Set(Profile.settingNames))
        guard let sub = args.positionals.first else { throw UsageError("profile needs a subcommand: create, list, show, set or remove.") }
        switch sub {
        case "list":
            try args.noMorePositionals(after: 1)
            printJSON(.array(try perform { (ops) throws(OperationError) in try ops.listProfiles() }))
        case "show":
            try args.noMorePositionals(after: 2)
            let name = args.positionals.dropFirst().first ?? profileName
            printJSON(try perform { (ops) throws(OperationError) in try ops.profile(name).json })
        case "create", "set":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("profile \(sub) needs a profile name.") }
            let name = args.positionals[1]
            let settings = settingFlags(args, Profile.settingNames)
            printJSON(try perform { (ops) throws(OperationError) in
                sub == "create" ? try ops.createProfile(name, settings: settings, allowPackPath: true).json
                    : try ops.updateProfile(name, settings: settings, allowPackPath: true).json
            })
        case "remove":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("profile remove needs a profile name.") }
            let name = args.positionals[1]
            try perform { (ops) throws(OperationError) in try ops.removeProfile(name) }
            printJSON(.object([("removed", .string(name))]))
        default:
            throw UsageError("Unknown profile subcommand '\(sub)'.")
        }
        return .success
    }

    /// The settings given as `--NAME VALUE` flags, in `names`' order; the word `null` unsets one.
    private func settingFlags(_ args: Arguments, _ names: [String]) -> [(String, JSONValue)] {
        names.compactMap { key in args.value(key).map { (key, $0 == "null" ? .null : .string($0)) } }
    }

    /// `credemu device`: devices with their provider accounts.
    func deviceCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: Set(Device.settingNames))
        guard let sub = args.positionals.first else { throw UsageError("device needs a subcommand: create, list, show, set or remove.") }
        switch sub {
        case "list":
            try args.noMorePositionals(after: 1)
            printJSON(.array(try perform { (ops) throws(OperationError) in try ops.listDevices() }))
        case "show", "remove":
            try args.noMorePositionals(after: 2)
            guard let name = args.positionals.dropFirst().first ?? deviceName else { throw UsageError("device \(sub) needs a device name.") }
            if sub == "show" {
                printJSON(try perform { (ops) throws(OperationError) in try ops.device(name).json })
            } else {
                try perform { (ops) throws(OperationError) in try ops.removeDevice(name) }
                printJSON(.object([("removed", .string(name))]))
            }
        case "create", "set":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("device \(sub) needs a device name.") }
            let name = args.positionals[1]
            let settings = settingFlags(args, Device.settingNames)
            printJSON(try perform { (ops) throws(OperationError) in
                sub == "create" ? try ops.createDevice(name, settings: settings).json : try ops.updateDevice(name, settings: settings).json
            })
        default:
            throw UsageError("Unknown device subcommand '\(sub)'.")
        }
        return .success
    }

    func clockCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [])
        let sub = args.positionals.first ?? "show"
        let value = args.positionals.count == 2 ? args.positionals[1] : nil
        switch sub {
        case "show", "system": try args.noMorePositionals(after: 1)
        case "set", "advance":
            try args.noMorePositionals(after: 2)
            guard value != nil else { throw UsageError("clock \(sub) takes " + (sub == "set" ? "an RFC 3339 UTC time such as 2026-11-29T10:00:00Z." : "a duration such as 90s, 6m, 2h or 1d.")) }
        default:
            throw UsageError("Unknown clock subcommand '\(sub)': show, set, advance or system.")
        }
        printJSON(try perform { (ops) throws(OperationError) -> JSONValue in
            switch sub {
            case "set": return try ops.setClock(value!, profile: profileName)
            case "advance": return try ops.advanceClock(value!, profile: profileName)
            case "system": return try ops.systemClock(profile: profileName)
            default: return ops.clockState()
            }
        })
        return .success
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
        let list = try perform { (ops) throws(OperationError) -> [JSONValue] in
            let after = try args.value("after").map { (t) throws(OperationError) in try Operations.count(t, "--after", in: 0...Int64.max) } ?? 0
            let limit = try args.value("limit").map { (t) throws(OperationError) in
                try Operations.count(t, "--limit", in: 1...Int64(Operations.eventLimit))
            } ?? Int64(Operations.eventLimit)
            return try ops.events(profileName, kind: args.value("kind"), allProfiles: args.flag("all-profiles"), after: after, limit: Int(limit))
        }
        printJSON(.array(list))
        return .success
    }

    func userCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [])
        let sub = args.positionals.first ?? "pending"
        switch sub {
        case "next": guard args.positionals.count >= 2 else { throw UsageError("user next takes accept, cancel, timeout or pick:CREDENTIAL_ID.") }
        case "pending", "clear": try args.noMorePositionals(after: 1)
        default: throw UsageError("Unknown user subcommand: next, pending or clear.")
        }
        printJSON(try perform { (ops) throws(OperationError) -> JSONValue in
            switch sub {
            case "next": return try ops.queueDecisions(profileName, Array(args.positionals.dropFirst()))
            case "clear": return try ops.clearDecisions(profileName)
            default: return try ops.pendingDecisions(profileName)
            }
        })
        return .success
    }
}
