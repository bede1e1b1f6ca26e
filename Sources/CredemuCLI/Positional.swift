/// A word a command takes by position (`vault show ID`), not by name.
struct Positional: Sendable {
    /// The word as the usage shows it: `ID`, `FILE`.
    var name: String
    /// What it is, as a noun phrase ("a credential ID (base64url)"): the help lists it and a missing one is named by it.
    var help: String
    var optional = false
    /// Takes every remaining word (at least one unless `optional`).
    var repeating = false
    /// The only words accepted, when there is such a list.
    var allowed: [String]?

    init(_ name: String, _ help: String, optional: Bool = false, repeating: Bool = false, allowed: [String]? = nil) {
        self.name = name
        self.help = help
        self.optional = optional
        self.repeating = repeating
        self.allowed = allowed
    }

    /// `ID`, `[NAME]`, `DECISION...` or `unknown|accepted|details`, as the usage shows it.
    var label: String {
        let word = (allowed?.joined(separator: "|") ?? name) + (repeating ? "..." : "")
        return optional ? "[\(word)]" : word
    }
}
