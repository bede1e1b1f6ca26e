import CredemuEngine
import Foundation
import Vault
import WebAuthn

extension Context {
    func passwordCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "username", "password"], flagNames: ["reveal"])
        guard let sub = args.positionals.first else { throw UsageError("password needs a subcommand: save, use or list.") }
        try args.noMorePositionals(after: 1)
        switch sub {
        case "save":
            let origin = try args.required("origin")
            let username = try args.required("username")
            let secret = try args.value("password") ?? readInput(file: nil).trimmingCharacters(in: .newlines)
            let vault = try openVault()
            defer { vault.close() }
            let engine = try engine(vault)
            let record = try run(engine, .create) { () throws(CeremonyError) in
                try engine.savePassword(origin: origin, username: username, password: secret)
            }
            printJSON(VaultFixture.passwordListing(record, password: nil))
        case "use":
            let origin = try args.required("origin")
            let username = try args.required("username")
            let vault = try openVault()
            defer { vault.close() }
            let engine = try engine(vault)
            try run(engine, .create) { () throws(CeremonyError) in try engine.markPasswordUsed(origin: origin, username: username) }
            printJSON(.object([("used", .object([("origin", .string(origin)), ("username", .string(username))]))]))
        case "list":
            let vault = try openVault()
            defer { vault.close() }
            let records = try args.value("origin").map { (o) throws(VaultError) in try vault.passwords(origin: o) } ?? vault.allPasswords()
            var items: [JSONValue] = []
            for record in records {
                items.append(VaultFixture.passwordListing(record, password: args.flag("reveal") ? try vault.password(for: record) : nil))
            }
            printJSON(.array(items))
        default:
            throw UsageError("Unknown password subcommand '\(sub)'.")
        }
        return .success
    }

}
