/// One `--name` a command accepts: what follows it, and its help.
struct Option: Sendable {
    /// What the option takes.
    enum Value: Sendable {
        /// Nothing: `--name` alone.
        case flag
        /// Any text, shown as `placeholder` (`FILE`, `true|false`); a value the command cannot use is refused by
        /// the operation it runs, with that operation's error.
        case text(_ placeholder: String)
        /// A JSON value, shown as `JSON`; text that does not parse is refused as a usage error.
        case json
        /// One of these words; anything else is refused as a usage error before the command runs. A long list is
        /// shown as `placeholder`, and the help then names the words.
        case oneOf(_ words: [String], placeholder: String? = nil)
    }

    /// The name without its dashes.
    var name: String
    var value: Value
    var help: String
    /// Refused as a usage error when absent.
    var required = false
    /// The heading the option is listed under in its command's help, when not the first list.
    var section: String?

    init(_ name: String, _ value: Value, _ help: String, required: Bool = false, section: String? = nil) {
        self.name = name
        self.value = value
        self.help = help
        self.required = required
        self.section = section
    }

    /// A flag: `--name` alone.
    static func flag(_ name: String, _ help: String) -> Option { Option(name, .flag, help) }

    /// `--name VALUE` as the usage shows it.
    var label: String {
        switch value {
        case .flag: return "--\(name)"
        case .text(let placeholder): return "--\(name) \(placeholder)"
        case .json: return "--\(name) JSON"
        case .oneOf(let words, let placeholder): return "--\(name) \(placeholder ?? words.joined(separator: "|"))"
        }
    }

    /// The words the option accepts, when it is a list.
    var allowed: [String]? {
        if case .oneOf(let words, _) = value { return words }
        return nil
    }

    /// The help as listed: the text, and the accepted words when the label does not show them.
    var listedHelp: String {
        guard case .oneOf(let words, .some) = value else { return help }
        return help + " One of: " + words.joined(separator: ", ") + "."
    }

    /// The same option, refused when absent.
    var asRequired: Option {
        var option = self
        option.required = true
        return option
    }
}
