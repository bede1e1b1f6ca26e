import Foundation
import Vault
import WebAuthn

extension Context {
    func passwordCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: ["origin", "username", "password"], flagNames: ["reveal"])
        guard let sub = args.positionals.first else { throw UsageError("password needs a subcommand: save or list.") }
        try args.noMorePositionals(after: 1)
        switch sub {
        case "save":
            let origin = try args.required("origin")
            let username = try args.required("username")
            let secret = try args.value("password") ?? readInput(file: nil).trimmingCharacters(in: .newlines)
            let vault = try openVault()
            defer { vault.close() }
            let record = try vault.savePassword(origin: origin, username: username, password: secret, at: Date())
            printJSON(passwordJSON(record, secret: nil))
        case "list":
            let vault = try openVault()
            defer { vault.close() }
            let records = try args.value("origin").map { (o) throws(VaultError) in try vault.passwords(origin: o) } ?? vault.allPasswords()
            var items: [JSONValue] = []
            for record in records {
                items.append(passwordJSON(record, secret: args.flag("reveal") ? try vault.password(for: record) : nil))
            }
            printJSON(.array(items))
        default:
            throw UsageError("Unknown password subcommand '\(sub)'.")
        }
        return .success
    }

    func passwordJSON(_ p: PasswordRecord, secret: String?) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .number(Double(p.id))),
            ("origin", .string(p.origin)),
            ("username", .string(p.username)),
        ]
        if let secret { members.append(("password", .string(secret))) }
        members += [
            ("created", .string(Timestamp.format(p.createdAt))),
            ("lastFilled", p.lastFilledAt.map { .string(Timestamp.format($0)) } ?? .null),
            ("lastUsed", p.lastUsedAt.map { .string(Timestamp.format($0)) } ?? .null),
        ]
        return .object(members)
    }
}
