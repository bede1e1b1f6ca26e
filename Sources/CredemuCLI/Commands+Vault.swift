import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Context {
    func vaultCommand(_ words: [String]) throws -> ExitStatus {
        let args = try Arguments(words, valued: [], flagNames: ["include-secrets"])
        guard let sub = args.positionals.first else { throw UsageError("vault needs a subcommand: list, show, remove, import or export.") }
        switch sub {
        case "list":
            try args.noMorePositionals(after: 1)
            printJSON(.array(try perform { (ops) throws(OperationError) in try ops.listPasskeys(profileName) }))
        case "show", "remove":
            try args.noMorePositionals(after: 2)
            guard args.positionals.count == 2 else { throw UsageError("vault \(sub) needs a credential ID.") }
            let id = args.positionals[1]
            guard Base64URL.decode(id) != nil else { throw UsageError("'\(id)' is not a base64url credential ID.") }
            printJSON(try perform { (ops) throws(OperationError) in
                sub == "show" ? try ops.passkey(profileName, id: id) : try ops.removePasskey(profileName, id: id)
            })
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
            terminal.write(try VaultFixture.export(vault, includeSecrets: args.flag("include-secrets")))
            if !args.flag("include-secrets") {
                terminal.writeError("credemu: private keys and passwords are left out; 'vault export --include-secrets' writes them in the clear.\n")
            }
        default:
            throw UsageError("Unknown vault subcommand '\(sub)'.")
        }
        return .success
    }
}
