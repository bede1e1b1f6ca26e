import CredemuEngine
import CredemuOperations
import Foundation
import WebAuthn

extension Commands {
    static let providers: Command = Command(
        "providers", summary: "List, show and validate policy packs.",
        subcommands: [
            Command("list", summary: """
                The policy packs with their versions, sources and origin ("built-in", or the file of a --providers pack).
                """) { context, _ in
                context.printJSON(try context.registry().json)
                return .success
            },
            Command("show", summary: "One pack's knobs with value, source and whether the value is unconfirmed.",
                    positionals: [Positional("ID", "a pack ID")],
                    options: [Option("platform", .oneOf(Platform.allCases.map(\.rawValue), placeholder: "P"),
                                     "The platform whose knobs to show (default: the pack's default platform).")]) { context, args in
                let id = args.argument("ID") ?? ""
                guard let pack = try context.registry().packs.first(where: { $0.id == id }) else { throw UsageError("No pack '\(id)'.") }
                let platform = args.value("platform").flatMap(Platform.init(rawValue:)) ?? pack.defaultPlatform
                let knobs: [JSONValue] = pack.describe(platform).map { name, value, source, unconfirmed in
                    .object([("knob", .string(name)), ("value", value), ("source", .string(source)),
                             ("unconfirmed", unconfirmed.map(JSONValue.string) ?? .null)])
                }
                context.printJSON(.object([("id", .string(pack.id)), ("version", .string(pack.version)),
                                           ("platform", .string(platform.rawValue)), ("knobs", .array(knobs))]))
                return .success
            },
            Command("validate", summary: "Check a pack file.", positionals: [Positional("FILE", "a pack file")]) { context, args in
                let pack = try PolicyPack.load(path: args.argument("FILE") ?? "")
                context.printJSON(.object([("valid", true), ("id", .string(pack.id)), ("version", .string(pack.version))]))
                return .success
            },
        ],
        defaultSubcommand: "list")
}
