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
            Command("import", summary: "Seed the vault from a fixture, or the profile from a Playwright or WebDriver credential file; all or nothing.",
                    discussion: """
                    --format fixture (the default) reads vault-fixtures/README.md's format into the vault. --format playwright
                    reads Playwright's credential list (context.credentials.get()) or a storage state whose credentials member
                    is one (storage_state(credentials=True), Playwright 1.62+); --format webdriver reads WebDriver's Get
                    Credentials list (Selenium's get_credentials; also {"value": [...]} and CDP's WebAuthn.getCredentials
                    {"credentials": [...]}). Those two go into the --profile's passkeys with its pack's settings (a pack whose
                    counter stays zero keeps it zero). --format cxf reads a FIDO Credential Exchange Format 1.0 document
                    (docs/cxf.md): its passkey credentials go into the --profile's passkeys with its pack's settings and no
                    counter, its basic-auth credentials into its passwords, other credential types are counted and left out.
                    Every credential is checked first, its key as a fixture's, and a refusal names the member's path
                    (cxf.accounts[0].items[2].credentials[0].key); then all are stored, or none.
                    """,
                    positionals: [Positional("FILE", "the file ('-' for standard input)")],
                    options: [format]) { context, args in
                let file = args.argument("FILE")
                let text = try context.readInput(file: file == "-" ? nil : file)
                let format = args.value("format").flatMap(CredentialFileFormat.init(rawValue:))
                context.printJSON(try context.perform { (ops) throws(OperationError) in
                    guard let format else { return try ops.importFixture(text) }
                    return try ops.importCredentials(context.profileName, format: format, text)
                })
                return .success
            },
            Command("export", summary: "Print the whole vault as a fixture, or the profile's passkeys as a Playwright or WebDriver credential file.",
                    discussion: """
                    --format fixture (the default) writes vault-fixtures/README.md's format, which `vault import` reads; without
                    --include-secrets the private keys and passwords are left out, and standard error says so. --format
                    playwright writes the --profile's passkeys as Playwright's credential list (what context.credentials.create()
                    and a storage state's credentials take; with --storage-state FILE, that storage state with its credentials
                    member replaced); --format webdriver as WebDriver's Get Credentials list (what Selenium's add_credential takes;
                    CDP's WebAuthn.addCredential takes the same members with the byte strings in standard base64). Both always
                    hold the private keys, in the clear: they are of no use without them. Playwright's file leaves out EdDSA
                    passkeys, which its authenticator cannot sign with, and standard error names them. --format cxf writes the
                    --profile's passkeys and passwords as one FIDO Credential Exchange Format 1.0 document (docs/cxf.md), with
                    the private keys and passwords only with --include-secrets; a passkey whose counter is not 0 is left out,
                    as CXF's exporter must, and standard error names it.
                    """,
                    options: [.flag("include-secrets", "Include the private keys and passwords, in the clear (--format fixture)."), format,
                              Option("storage-state", .text("FILE"), "With --format playwright: a Playwright storage state to write with these credentials.")]) { context, args in
                let secrets = args.flag("include-secrets")
                let format = args.value("format").flatMap(CredentialFileFormat.init(rawValue:))
                guard let format else {
                    if args.value("storage-state") != nil { throw UsageError("--storage-state goes with --format playwright.") }
                    context.terminal.write(try context.perform { (ops) throws(OperationError) in try ops.exportFixture(includeSecrets: secrets) })
                    if !secrets {
                        context.terminal.writeError("credemu: private keys and passwords are left out; 'vault export --include-secrets' writes them in the clear.\n")
                    }
                    return .success
                }
                if format == .cxf {
                    if args.value("storage-state") != nil { throw UsageError("--storage-state goes with --format playwright.") }
                    let (document, leftOut) = try context.perform { (ops) throws(OperationError) in
                        try ops.exportFile(context.profileName, format: .cxf, includeSecrets: secrets)
                    }
                    if !leftOut.isEmpty {
                        context.terminal.writeError("credemu: left out \(leftOut.count) passkey(s) whose signature counter is not 0, as CXF's exporter must: \(leftOut.joined(separator: ", ")).\n")
                    }
                    if !secrets {
                        context.terminal.writeError("credemu: private keys and passwords are left out; 'vault export --format cxf --include-secrets' writes them in the clear.\n")
                    }
                    context.printJSON(document)
                    return .success
                }
                var state: [(String, JSONValue)]?
                if let file = args.value("storage-state") {
                    guard format == .playwright else { throw UsageError("--storage-state goes with --format playwright.") }
                    guard let object = (try? JSONValue.parse(try context.readInput(file: file)))?.objectValue else {
                        throw UsageError("\(file) is not a Playwright storage state (a JSON object).")
                    }
                    state = object
                }
                // These files always hold the private keys (the discussion above says so): asking for the file asks for them.
                let (list, leftOut) = try context.perform { (ops) throws(OperationError) in
                    try ops.exportFile(context.profileName, format: format, includeSecrets: true)
                }
                if !leftOut.isEmpty {
                    context.terminal.writeError("credemu: left out \(leftOut.count) EdDSA passkey(s) Playwright's authenticator cannot sign with (it signs SHA-256: ES256, RS256): \(leftOut.joined(separator: ", ")).\n")
                }
                guard let state else {
                    context.printJSON(list)
                    return .success
                }
                let kept = state.filter { $0.0 != "credentials" }
                context.printJSON(.object(kept + [("credentials", list)]))
                return .success
            },
            Command("move", summary: "Move the --from profile's passkeys and passwords into the --to profile through a CXF document.",
                    discussion: """
                    What a user does when switching password managers: the --from profile's credentials (only --rp-id's with
                    it) are written as a Credential Exchange Format document and imported into --to as `vault import` reads
                    one, then removed from --from unless --keep-source; all in one transaction. The passkeys keep
                    their credential IDs and keys; --to's pack answers for them from then on (its backup flags and AAGUID, no
                    counter, its signal handling). A passkey whose counter is not 0 stays in --from, named under leftOut.
                    With --keep-source both profiles hold the passkeys afterwards, under the same credential IDs, each
                    answered by its own pack; a credential --to holds already is a conflict. See docs/cxf.md.
                    """,
                    options: [Option("from", .text("PROFILE"), "The profile the credentials leave.", required: true),
                              Option("to", .text("PROFILE"), "The profile they go to.", required: true),
                              Option("rp-id", .text("RP_ID"), "Only this RP's passkeys and its site's passwords."),
                              .flag("keep-source", "Leave the --from profile's copies in place (both managers then hold them).")]) { context, args in
                let from = args.value("from") ?? "", to = args.value("to") ?? ""
                context.printJSON(try context.perform { (ops) throws(OperationError) in
                    try ops.moveCredentials(from: from, to: to, keepSource: args.flag("keep-source"), rpID: args.value("rp-id"))
                })
                return .success
            },
        ])

    /// `--format` of `vault import` and `vault export`.
    private static let format = Option("format", .oneOf(["fixture"] + CredentialFileFormat.allCases.map(\.rawValue)),
                                       "The file's format: credemu's fixture (the default), Playwright's credentials, WebDriver's, or a CXF document.")

    /// The `ID` positional, checked as base64url.
    private static func credentialID(_ args: Arguments) throws(UsageError) -> String {
        let id = args.argument("ID") ?? ""
        guard Base64URL.decode(id) != nil else { throw UsageError("'\(id)' is not a base64url credential ID.") }
        return id
    }
}
