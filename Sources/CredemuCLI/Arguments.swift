import WebAuthn

/// A command's words read against its declaration: option values by name, flags, and positionals in order.
///
/// Options are `--name value`, `--name=value` or `--flag`; a value is the next word even when it starts with `--`.
/// Any other word is a positional. An option the command does not declare, a missing value, a word outside an
/// option's or positional's list, a missing required option or positional and an extra positional are usage errors.
struct Arguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    private(set) var positionals: [String] = []
    private let declared: [String: Option]
    private let positionalNames: [String]

    /// Reads every word of `words` for `command`; `path` names the command in messages (`vault show`).
    init(_ words: ArraySlice<String>, for command: Command, path: [String]) throws(UsageError) {
        let (arguments, _) = try Arguments.read(words, for: command, global: false)
        self = arguments
        try check(command, path: path.joined(separator: " "))
    }

    /// Reads the global options at the start of `words`, up to the first word that is not an option.
    static func leading(_ words: ArraySlice<String>, for root: Command) throws(UsageError) -> (Arguments, rest: ArraySlice<String>) {
        try read(words, for: root, global: true)
    }

    private init(_ command: Command) {
        declared = Dictionary(command.options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        positionalNames = command.positionals.map(\.name)
    }

    private static func read(_ words: ArraySlice<String>, for command: Command, global: Bool) throws(UsageError) -> (Arguments, rest: ArraySlice<String>) {
        var arguments = Arguments(command)
        var rest = words
        while let word = rest.first {
            guard word.hasPrefix("--"), word.count > 2 else {
                if global { break }
                arguments.positionals.append(word)
                rest.removeFirst()
                continue
            }
            rest.removeFirst()
            var name = String(word.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let option = arguments.declared[name] else {
                throw UsageError(global ? "Unknown global option --\(name)." : "Unknown option --\(name).")
            }
            if case .flag = option.value {
                guard value == nil else { throw UsageError("--\(name) takes no value.") }
                arguments.flags.insert(name)
                continue
            }
            if value == nil {
                guard let next = rest.first else { throw UsageError("--\(name) needs a value.") }
                value = next
                rest.removeFirst()
            }
            if let allowed = option.allowed, let value, !allowed.contains(value) {
                throw UsageError("--\(name) takes \(spokenList(allowed)), not '\(value)'.")
            }
            if case .json = option.value, let value, value != "null", (try? JSONValue.parse(value)) == nil {
                throw UsageError("--\(name) takes JSON.")
            }
            // Given twice, an option would silently keep its last value (`--allow-origin A --allow-origin B` allowed B
            // alone): refused, naming the list form where the option takes one.
            guard arguments.values[name] == nil else {
                let list = if case .text(let placeholder) = option.value { placeholder.contains(",") } else { false }
                throw UsageError("--\(name) is given twice" + (list ? "; give one comma-separated list." : "."))
            }
            arguments.values[name] = value
        }
        return (arguments, rest)
    }

    private func check(_ command: Command, path: String) throws(UsageError) {
        let declared = command.positionals
        let most = declared.last?.repeating == true ? Int.max : declared.count
        if positionals.count > most { throw UsageError("Unexpected argument '\(positionals[most])'.") }
        for (index, positional) in declared.enumerated() {
            guard index < positionals.count else {
                if positional.optional { break }
                throw UsageError("\(path) needs \(positional.help)" + (positional.allowed.map { ": " + spokenList($0) } ?? "") + ".")
            }
            let words = positional.repeating ? Array(positionals[index...]) : [positionals[index]]
            if let allowed = positional.allowed, let word = words.first(where: { !allowed.contains($0) }) {
                throw UsageError("\(path) takes \(spokenList(allowed)) as \(positional.name), not '\(word)'.")
            }
        }
        for option in command.options where option.required && values[option.name] == nil {
            throw UsageError("--\(option.name) is required.")
        }
    }

    /// The value of `--name`, if given.
    func value(_ name: String) -> String? {
        assert(declared[name] != nil, "--\(name) is read but not declared: declare it in its Command")
        return values[name]
    }

    func required(_ name: String) throws(UsageError) -> String {
        guard let v = value(name) else { throw UsageError("--\(name) is required.") }
        return v
    }

    func flag(_ name: String) -> Bool {
        assert(declared[name] != nil, "--\(name) is read but not declared: declare it in its Command")
        return flags.contains(name)
    }

    /// The positional declared as `name`, if given (every remaining word for a repeating one: see `words(_:)`).
    func argument(_ name: String) -> String? {
        guard let index = positionalNames.firstIndex(of: name) else {
            assertionFailure("\(name) is read but not declared: declare it in its Command")
            return nil
        }
        return index < positionals.count ? positionals[index] : nil
    }

    /// The words of the repeating positional `name`.
    func words(_ name: String) -> [String] {
        guard let index = positionalNames.firstIndex(of: name) else {
            assertionFailure("\(name) is read but not declared: declare it in its Command")
            return []
        }
        return index < positionals.count ? Array(positionals[index...]) : []
    }
}
