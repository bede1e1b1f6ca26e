/// A usage mistake: the message goes to standard error and the exit status is 2.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Command-line words: options (`--name value`, `--name=value`, `--flag`) and positionals, read by name.
struct Arguments {
    private var options: [String: String] = [:]
    private var flags: Set<String> = []
    private(set) var positionals: [String] = []
    private var consumed: Set<String> = []

    /// Parses `words`; `valued` lists the options that take a value, `flagNames` those that do not.
    init(_ words: [String], valued: Set<String>, flagNames: Set<String> = []) throws(UsageError) {
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("--"), word.count > 2 else {
                positionals.append(word)
                continue
            }
            var name = String(word.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if flagNames.contains(name) {
                guard value == nil else { throw UsageError("--\(name) takes no value.") }
                flags.insert(name)
            } else if valued.contains(name) {
                if value == nil {
                    guard index < words.count else { throw UsageError("--\(name) needs a value.") }
                    value = words[index]
                    index += 1
                }
                options[name] = value
            } else {
                throw UsageError("Unknown option --\(name).")
            }
        }
    }

    func value(_ name: String) -> String? { options[name] }

    func required(_ name: String) throws(UsageError) -> String {
        guard let v = options[name] else { throw UsageError("--\(name) is required.") }
        return v
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func noMorePositionals(after count: Int) throws(UsageError) {
        if positionals.count > count { throw UsageError("Unexpected argument '\(positionals[count])'.") }
    }
}
