/// The help texts, made from the declarations: `credemu --help`, `credemu COMMAND --help` and each subcommand's.
extension Command {
    /// The column help lines wrap at.
    static let helpWidth = 112
    /// The widest label (`--name VALUE`) with its help on the same line.
    private static let labelColumn = 26

    /// The help `credemu PATH --help` prints; the root's (an empty path) is `credemu --help`.
    func help(_ path: [String]) -> String {
        var out = ""
        if path.isEmpty {
            out += "credemu: \(summary)\n\n"
        }
        out += usage(path, wrapped: true) + "\n"
        if !path.isEmpty, !summary.isEmpty {
            out += "\n" + wrap(summary, indent: 0) + "\n"
        }
        if !path.isEmpty, !discussion.isEmpty {
            out += "\n" + paragraphs(discussion) + "\n"
        }
        if !subcommands.isEmpty {
            out += "\n" + (path.isEmpty ? "Commands:" : "Subcommands:") + "\n"
            out += listing(subcommands.map { sub in
                (path.isEmpty ? sub.name : sub.usage(path + [sub.name], wrapped: false, brief: true), sub.summary)
            })
            if !path.isEmpty {
                out += "\n" + (defaultSubcommand.map { "Without a subcommand: \((path + [$0]).joined(separator: " ")). " } ?? "")
                out += "`credemu \((path + ["SUBCOMMAND"]).joined(separator: " ")) --help` describes one, with its options.\n"
            }
        }
        if !positionals.isEmpty {
            out += "\nArguments:\n" + listing(positionals.map { positional in
                let text = positional.help + (positional.allowed.map { ": " + $0.joined(separator: ", ") } ?? "") + "."
                return (positional.name, text.prefix(1).uppercased() + text.dropFirst())
            })
        }
        var heading: String?
        let width = Self.labelWidth(options.map(\.label))
        for option in options {
            let title = option.section ?? (path.isEmpty ? "Global options (before the command):" : "Options:")
            if title != heading {
                out += "\n" + title + "\n"
                heading = title
            }
            out += listing([(option.label, option.listedHelp)], width: width)
        }
        if path.isEmpty, !discussion.isEmpty {
            out += "\n" + paragraphs(discussion) + "\n"
        }
        return out
    }

    /// `Usage: credemu [GLOBAL OPTIONS] vault show ID`, with the positionals and options; `brief` is that line
    /// without the usage prefix and with `[OPTIONS]` for the optional options when they make it long.
    func usage(_ path: [String], wrapped: Bool, brief: Bool = false) -> String {
        let lead = brief ? path.joined(separator: " ") : (["Usage: credemu [GLOBAL OPTIONS]"] + path).joined(separator: " ")
        var words: [String]
        if path.isEmpty {
            words = ["COMMAND", "[ARGS]"]
        } else if !subcommands.isEmpty {
            words = [defaultSubcommand == nil ? "SUBCOMMAND" : "[SUBCOMMAND]"]
        } else {
            words = positionals.map(\.label) + options.map { $0.required ? $0.label : "[\($0.label)]" }
            if brief, 2 + (lead + " " + words.joined(separator: " ")).count > Self.helpWidth {
                words = positionals.map(\.label) + options.filter(\.required).map(\.label) + (options.contains { !$0.required } ? ["[OPTIONS]"] : [])
            }
        }
        guard wrapped else { return ([lead] + words).joined(separator: " ") }
        var lines = [lead]
        let indent = String(repeating: " ", count: lead.count + 1)
        for word in words {
            if lines[lines.count - 1].count + 1 + word.count > Self.helpWidth, lines[lines.count - 1] != lead {
                lines.append(indent + word)
            } else {
                lines[lines.count - 1] += " " + word
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The label column's width for `labels`: the widest that fits in `labelColumn`, and two spaces.
    private static func labelWidth(_ labels: [String]) -> Int {
        (labels.map(\.count).filter { $0 + 2 <= labelColumn }.max() ?? labelColumn - 2) + 2
    }

    /// Two columns: each label, then its text wrapped beside it (or under it when the label is wider than `width`).
    private func listing(_ rows: [(String, String)], width: Int? = nil) -> String {
        let width = width ?? Self.labelWidth(rows.map(\.0))
        var out = ""
        for (label, text) in rows {
            let body = wrap(text, indent: width + 2)
            if label.count + 2 > width {
                out += "  \(label)\n" + body + "\n"
            } else {
                out += "  " + label + String(repeating: " ", count: width - label.count) + body.dropFirst(width + 2) + "\n"
            }
        }
        return out
    }

    /// `text`'s paragraphs (blank lines apart), each rewrapped.
    private func paragraphs(_ text: String) -> String {
        text.components(separatedBy: "\n\n").map { wrap($0, indent: 0) }.joined(separator: "\n\n")
    }

    /// `text` rewrapped to `helpWidth`, every line indented by `indent`.
    private func wrap(_ text: String, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if !line.isEmpty, indent + line.count + 1 + word.count > Self.helpWidth {
                lines.append(pad + line)
                line = String(word)
            } else {
                line += (line.isEmpty ? "" : " ") + word
            }
        }
        lines.append(pad + line)
        return lines.joined(separator: "\n")
    }
}
