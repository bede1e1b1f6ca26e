import Foundation
import Vault
import WebAuthn

extension Context {
    func vaultCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [])
        guard let sub = args.positionals.first else { throw UsageError("vault needs a subcommand: list, show, remove, import or export.") }
        switch sub {
        case "list":
            try args.noMorePositionals(after: 1)
            let vault = try openVault()
            defer { vault.close() }
            printJSON(.array(try vault.allPasskeys().map(passkeyJSON)))
        case "show", "remove":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("vault \(sub) needs a credential ID.") }
            guard let id = Base64URL.decode(args.positionals[1]) else { throw UsageError("'\(args.positionals[1])' is not a base64url credential ID.") }
            let vault = try openVault()
            defer { vault.close() }
            guard let record = try vault.passkey(id: id) else {
                throw VaultError(.notFound, "No passkey with credential ID \(args.positionals[1]) in \(vaultPath).")
            }
            if sub == "remove" { try vault.removePasskey(credentialID: id) }
            printJSON(sub == "show" ? passkeyJSON(record) : .object([("removed", passkeyJSON(record))]))
        case "import":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("vault import needs a fixture file.") }
            let text = try readInput(file: args.positionals[1] == "-" ? nil : args.positionals[1])
            let vault = try openVault()
            defer { vault.close() }
            let (passwords, passkeys) = try VaultFixture.importFixture(text, into: vault)
            printJSON(.object([("imported", .object([("passwords", .number(Double(passwords))), ("passkeys", .number(Double(passkeys)))]))]))
        case "export":
            try args.noMorePositionals(after: 1)
            let vault = try openVault()
            defer { vault.close() }
            terminal.write(try VaultFixture.export(vault))
        default:
            throw UsageError("Unknown vault subcommand '\(sub)'.")
        }
        return .success
    }

    /// A passkey as the CLI shows it: the fixture form without the private key.
    func passkeyJSON(_ k: PasskeyRecord) -> JSONValue { VaultFixture.passkeyJSON(k, privateKey: nil) }
}
