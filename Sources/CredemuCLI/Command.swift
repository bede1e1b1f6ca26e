/// One `credemu` command, declared once: its help, options and positionals and its action, or the subcommands it
/// groups. The parser (`Arguments`), `credemu COMMAND --help` and `credemu --help` all read this declaration.
struct Command: Sendable {
    typealias Action = @Sendable (Context, Arguments) throws -> ExitStatus

    var name: String
    /// One line: the parent's help lists it beside the name.
    var summary: String
    /// The paragraphs after the usage in the command's own help (blank lines between them; lines are rewrapped).
    var discussion: String
    var positionals: [Positional]
    var options: [Option]
    var subcommands: [Command]
    /// The subcommand that runs when none is named (`clock` is `clock show`).
    var defaultSubcommand: String?
    /// Nil for a command that only groups subcommands.
    var action: Action?

    /// A command that runs.
    init(_ name: String, summary: String, discussion: String = "", positionals: [Positional] = [], options: [Option] = [],
         action: @escaping Action) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.positionals = positionals
        self.options = options
        subcommands = []
        self.action = action
    }

    /// A command that groups subcommands (`vault list`, `vault show ID`, ...).
    init(_ name: String, summary: String, discussion: String = "", options: [Option] = [], subcommands: [Command],
         defaultSubcommand: String? = nil) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        positionals = []
        self.options = options
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        action = nil
    }

    func subcommand(_ name: String) -> Command? { subcommands.first { $0.name == name } }

    func option(_ name: String) -> Option? { options.first { $0.name == name } }
}

/// "a, b or c".
func spokenList(_ words: [String]) -> String {
    guard words.count > 1 else { return words.first ?? "" }
    return words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1]
}
