/// Every `credemu` command, each declared once in its `Commands+*.swift` file beside its action.
enum Commands {
    /// `credemu` itself: the global options, and the commands in the order `credemu --help` lists them.
    static let root: Command = Command(
        "credemu", summary: "a credential-provider emulator (a fake password manager that answers real WebAuthn).",
        discussion: """
        Exit status: 0 success; 1 the ceremony ended in a WebAuthn error, printed as
        {"error": {"name": "<DOMException name>", "message": "..."}}; 2 usage error (message on standard error);
        3 vault error (wrong key, damaged or newer vault, unknown record), printed as
        {"error": {"name": "VaultError", "code": "...", "message": "..."}}.
        """,
        options: globals,
        subcommands: [create, get, autofill, offer, password, signal, capabilities, profile, device, providers, clock, user,
                      events, vault, scenario, findings, probe, serve, demo, help])

    /// The options before the command; `Context.dispatch` applies them.
    static let globals: [Option] = [
        Option("vault", .text("PATH"), "The vault file (default: $CREDEMU_VAULT, else .credemu/vault.db)."),
        Option("profile", .text("NAME"), """
            The provider profile (default: $CREDEMU_PROFILE, else "default": GPM on Chrome desktop, created on first use).
            """),
        Option("device", .text("NAME"), """
            Run create, get, offer, signal and capabilities on a device: the platform's rule picks the provider account \
            (named on standard error).
            """),
        Option("providers", .text("DIR"), """
            Packs over the built-in ones: one with a built-in pack's ID replaces it, others are added (default: \
            $CREDEMU_PROVIDERS, else only the built-in packs).
            """),
        Option("key-file", .text("PATH"), """
            The vault key file (default: $CREDEMU_KEY_FILE, else VAULT.key). Created with mode 0600 together with a new vault.
            """),
        Option("passphrase-file", .text("F"), """
            Derive the vault key from the passphrase in F (Argon2id) instead of a key file. $CREDEMU_PASSPHRASE does the \
            same with the passphrase itself.
            """),
        .flag("help", "This text. `credemu COMMAND --help` describes one command."),
        .flag("version", "The version of credemu."),
    ]

    /// `credemu help [COMMAND [SUBCOMMAND]]`: the help of the command those words name (`credemu --help` for none).
    static let help: Command = Command(
        "help", summary: "This text, or one command's: credemu help COMMAND [SUBCOMMAND].",
        positionals: [Positional("COMMAND", "the command (and subcommand) to describe", optional: true, repeating: true)]
    ) { context, args in
        var command = root
        var path: [String] = []
        for word in args.words("COMMAND") {
            guard let sub = command.subcommand(word) else { break }
            command = sub
            path.append(word)
        }
        return context.help(command.help(path))
    }
}
