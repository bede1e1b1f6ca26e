import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Positional {
    static let credentialID = Positional("ID", "a credential ID (base64url)")
}

extension Commands {
    static let vault: Command = Command(
        "vault", summary: "List, show, remove, import and export the profile's passkeys and passwords.",
        subcommands: [
            Command("list", summary: "The passkeys (without private keys), as JSON.") { context, _ in
                context.printJSON(.array(try context.perform { (ops) throws(OperationError) in try ops.listPasskeys(context.profileName) }))
                return .success
            },
            Command("show", summary: "One passkey by credential ID (base64url).", positionals: [.credentialID]) { context, args in
                let id = try credentialID(args)
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.passkey(context.profileName, id: id) })
                return .success
            },
            Command("remove", summary: "Delete one passkey for good.", positionals: [.credentialID]) { context, args in
                let id = try credentialID(args)
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.removePasskey(context.profileName, id: id) })
                return .success
            },
            Command("rename", summary: "Rename a passkey's user as the user would in the password manager: marks it edited by the user.",
                    discussion: """
                    Sets the user name and display name the provider shows (either option alone keeps the other) and marks
                    the passkey edited by the user: a pack whose signals.currentUserDetailsRespectsUserEdit is true (GPM)
                    then leaves its names alone at a signalCurrentUserDetails, and spends no quota token on it. A shadowed
                    passkey may be renamed too. Logged as a vault event, renamed.
                    """,
                    positionals: [.credentialID],
                    options: [Option("name", .text("NAME"), "The new user name (1 to 1024 bytes, no control characters)."),
                              Option("display-name", .text("NAME"), "The new display name (at most 1024 bytes, no control characters).")]) { context, args in
                let id = try credentialID(args)
                let name = args.value("name"), displayName = args.value("display-name")
                guard name != nil || displayName != nil else { throw UsageError("vault rename needs --name, --display-name or both.") }
                context.printJSON(try context.perform { (ops) throws(OperationError) in
                    try ops.renamePasskey(context.profileName, id: id, userName: name, displayName: displayName)
                })
                return .success
            },
            Command("attestation-root", summary: "The vault's test attestation root certificate (PEM), which security keys' attestation chains to.",
                    discussion: """
                    A security key's packed or fido-u2f attestation is signed by a batch key whose certificate this root
                    issued, one root per vault, made on first need. Give it to an RP that verifies attestation (py_webauthn's
                    pem_root_certs_bytes_by_fmt, python-fido2's attestation verifier) as a trusted root.
                    """) { context, _ in
                let root = try context.perform { (ops) throws(OperationError) in try ops.attestationRoot() }
                context.terminal.write(root["pem"]?.stringValue ?? "")
                return .success
            },
            Command("import", summary: "Seed the vault from a fixture (format: vault-fixtures/README.md); all or nothing.",
                    positionals: [Positional("FILE", "a fixture file ('-' for standard input)")]) { context, args in
                let file = args.argument("FILE")
                let text = try context.readInput(file: file == "-" ? nil : file)
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.importFixture(text) })
                return .success
            },
            Command("export", summary: "Print the whole vault as a fixture; private keys and passwords only with --include-secrets.",
                    discussion: """
                    The fixture's format is vault-fixtures/README.md's, which `vault import` reads. Without --include-secrets
                    the private keys and passwords are left out, and standard error says so.
                    """,
                    options: [.flag("include-secrets", "Include the private keys and passwords, in the clear.")]) { context, args in
                let secrets = args.flag("include-secrets")
                context.terminal.write(try context.perform { (ops) throws(OperationError) in try ops.exportFixture(includeSecrets: secrets) })
                if !args.flag("include-secrets") {
                    context.terminal.writeError("credemu: private keys and passwords are left out; 'vault export --include-secrets' writes them in the clear.\n")
                }
                return .success
            },
        ])

    /// The `ID` positional, checked as base64url.
    private static func credentialID(_ args: Arguments) throws(UsageError) -> String {
        let id = args.argument("ID") ?? ""
        guard Base64URL.decode(id) != nil else { throw UsageError("'\(id)' is not a base64url credential ID.") }
        return id
    }
}
