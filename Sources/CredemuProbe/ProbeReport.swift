import WebAuthn

/// The probe's result: variant by pack, each rejection tied to the rule it breaks, and the bugs found.
public struct ProbeReport: Sendable {
    /// One integration bug: a trait the server refuses, with the cells that show it.
    public struct Bug: Sendable {
        public var trait: ProbeTrait
        /// "variant @ pack@platform" for every rejection attributed to it.
        public var cells: [String]
    }

    public var target: String
    public var adapter: String
    public var origin: String
    public var columns: [ProbeColumn]
    public var variants: [ProbeVariant]
    /// cells[column][variant], in `variants` order.
    public var cells: [[ProbeCell]]
    /// The vault whose event log holds every exchange.
    public var log: String
    public var bugs: [Bug] = []
    /// Traits a rejection carried beside a bug already found that no accepted response carried: the server may
    /// refuse them too (an automatic upgrade is the one response with UP=0, so a server refusing UV=0 cannot be
    /// shown to accept UP=0); named so that fixing the bug does not surprise on the next run.
    public var alsoSuspected: [Bug] = []
    /// Rejections no unusual trait explains (the server refused a plain response).
    public var unexplained: [String] = []
    /// The stale-account-context checks, run once with the first provider (`Prober+StaleContext.swift`).
    public var staleContext: [StaleContextCheck] = []
    /// The forged responses (`--forgeries`), each of which a correct server refuses.
    public var forged: [ForgedCell] = []
    /// The forgeries the server accepted: each a finding.
    public var acceptedForgeries: [ForgedCell] { forged.filter { $0.outcome == .accepted } }

    /// True when the server rejected a response a correct server must accept, or issued options no browser takes:
    /// the CLI exits 1.
    public var failed: Bool {
        cells.contains { $0.contains { $0.outcome == .rejected || $0.outcome == .invalidOptions } } || !staleFindings.isEmpty
            || !acceptedForgeries.isEmpty
    }

    /// Ties each rejection to its likely cause: the traits it carried that no accepted response carried, every one
    /// of them named in the cell. A trait that is a rejection's only suspect is a bug; a rejection with several
    /// suspects is put down to those already found (the others are `alsoSuspected`), else to all of them.
    mutating func diagnose() {
        var accepted = Set<ProbeTrait>()
        for column in cells { for cell in column where cell.outcome == .accepted { accepted.formUnion(cell.traits) } }
        for c in cells.indices {
            for v in cells[c].indices where cells[c][v].outcome == .rejected {
                cells[c][v].suspects = cells[c][v].traits.filter { !accepted.contains($0) }.sorted()
            }
        }
        var named = Set<ProbeTrait>()
        for column in cells { for cell in column where cell.outcome == .rejected && cell.suspects.count == 1 { named.insert(cell.suspects[0]) } }
        var byTrait: [ProbeTrait: [String]] = [:]
        var besides: [ProbeTrait: [String]] = [:]
        // One bug however many of its traits showed it: both counter traits break the same rule.
        func rule(_ t: ProbeTrait) -> ProbeTrait { t == .signCountNotGrowing ? .signCountZero : t }
        for (c, column) in cells.enumerated() {
            for (v, cell) in column.enumerated() where cell.outcome == .rejected {
                let name = "\(variants[v].rawValue) @ \(columns[c].header)"
                let known = cell.suspects.filter(named.contains)
                let blamed = known.isEmpty ? cell.suspects : known
                if blamed.isEmpty { unexplained.append(name) }
                for trait in Set(blamed.map(rule)) { byTrait[trait, default: []].append(name) }
                for trait in Set(cell.suspects.map(rule)).subtracting(blamed.map(rule)) { besides[trait, default: []].append(name) }
            }
        }
        bugs = byTrait.keys.sorted().map { Bug(trait: $0, cells: byTrait[$0]!) }
        alsoSuspected = besides.keys.filter { byTrait[$0] == nil }.sorted().map { Bug(trait: $0, cells: besides[$0]!) }
    }

    // MARK: Renderings

    public var json: JSONValue {
        .object([
            ("target", .string(target)), ("interface", .string(adapter)), ("origin", .string(origin)),
            ("passed", .bool(!failed)),
            ("providers", .array(columns.map { .object([("pack", .string($0.pack)), ("version", .string($0.version)), ("platform", .string($0.platform.rawValue))]) })),
            ("variants", .array(variants.indices.map { v in
                .object([("variant", .string(variants[v].rawValue)), ("title", .string(variants[v].title)),
                         ("cells", .object(columns.indices.map { (columns[$0].header, cells[$0][v].json) }))])
            })),
            ("bugs", .array(bugs.map { .object([("trait", .string($0.trait.rawValue)), ("label", .string($0.trait.label)),
                                                ("rule", .string($0.trait.rule)), ("fix", .string($0.trait.fix)),
                                                ("cells", .array($0.cells.map(JSONValue.string)))]) })),
            ("alsoSuspected", .array(alsoSuspected.map { .object([("trait", .string($0.trait.rawValue)), ("label", .string($0.trait.label)),
                                                                  ("rule", .string($0.trait.rule)), ("fix", .string($0.trait.fix)),
                                                                  ("cells", .array($0.cells.map(JSONValue.string)))]) })),
            ("unexplained", .array(unexplained.map(JSONValue.string))),
            ("staleContext", staleContextJSON),
            ("forgeries", .array(forged.map(\.json))),
            ("acceptedForgeries", .array(acceptedForgeries.map { .string($0.forgery.rawValue + "/" + $0.ceremony.rawValue) })),
            ("eventLog", .string(log)),
        ])
    }

    /// The rule options that a browser refuses break, and the fix.
    static let optionsRule = "WebAuthn L3 §5.1.3 and §5.1.4 (and the JSON forms of §5.1.9/§5.1.10): the client refuses options with a missing or malformed member with a TypeError, before any authenticator is asked"
    static let optionsFix = "issue options as the WebAuthn JSON forms define them (an RP library's options_to_json or generateRegistrationOptions gives them)"

    /// True when some cell's options were not valid WebAuthn options.
    var invalidOptions: Bool { cells.contains { $0.contains { $0.outcome == .invalidOptions } } }

    static func short(_ cell: ForgedCell) -> String {
        switch cell.outcome {
        case .refused: return "refused"
        case .accepted: return "ACCEPTED"
        case .ruledOut: return "ruled out: " + cell.message
        case .notRun: return "not run: " + cell.message
        }
    }

    static func short(_ cell: ProbeCell) -> String {
        switch cell.outcome {
        case .accepted: return "accepted"
        case .rejected: return "REJECTED" + (cell.suspects.isEmpty ? "" : " (" + cell.suspects.map(\.label).joined(separator: ", ") + ")")
        case .ruledOut: return "ruled out by the server's options"
        case .invalidOptions: return "INVALID OPTIONS"
        case .notApplicable: return "n/a (pack)"
        case .notRun: return "not run"
        }
    }

    /// A fixed-width table, then each rejection with the server's message, rule and fix.
    public var table: String {
        let first = max(30, variants.map(\.title.count).max() ?? 0)
        let width = 22
        func fit(_ s: String, _ w: Int) -> String { s.count > w ? String(s.prefix(w - 1)) + "…" : s + String(repeating: " ", count: w - s.count) }
        var out = "credemu probe \(target) (\(adapter)), origin \(origin)\n\n"
        out += fit("variant", first) + " " + columns.map { fit($0.header, width) }.joined(separator: " ") + "\n"
        for v in variants.indices {
            out += fit(variants[v].title, first) + " " + columns.indices.map { fit(ProbeReport.short(cells[$0][v]), width) }.joined(separator: " ") + "\n"
        }
        out += "\n"
        for (c, column) in cells.enumerated() {
            for (v, cell) in column.enumerated() where cell.outcome == .rejected {
                out += "rejected [\(columns[c].header)] \(variants[v].title): \"\(cell.message)\"\n"
                for trait in cell.suspects {
                    let found = bugs.contains { $0.trait == trait || ($0.trait == .signCountZero && trait == .signCountNotGrowing) }
                    out += "  \(found ? "breaks" : "may break too"): \(trait.rule)\n  fix: \(trait.fix)\n"
                }
                if cell.suspects.isEmpty { out += "  nothing unusual in this response: a valid response the server should accept (WebAuthn L3 §7.1/§7.2)\n" }
            }
        }
        for (c, column) in cells.enumerated() {
            for (v, cell) in column.enumerated() where cell.outcome == .invalidOptions {
                out += "invalid options [\(columns[c].header)] \(variants[v].title): \(cell.message)\n"
                out += "  breaks: \(ProbeReport.optionsRule)\n  fix: \(ProbeReport.optionsFix)\n"
            }
        }
        for (c, column) in cells.enumerated() {
            for (v, cell) in column.enumerated() where cell.outcome == .ruledOut {
                out += "ruled out [\(columns[c].header)] \(variants[v].title): \(cell.message)\n"
            }
        }
        for (c, column) in cells.enumerated() {
            for (v, cell) in column.enumerated() where !cell.note.isEmpty {
                out += "note [\(columns[c].header)] \(variants[v].title): \(cell.note)\n"
            }
        }
        out += staleContextTable
        if !forged.isEmpty {
            out += "\n" + fit("forged response", first + 10) + " verdict\n"
            for cell in forged { out += fit(cell.title, first + 10) + " " + ProbeReport.short(cell) + "\n" }
            for cell in acceptedForgeries {
                out += "accepted forgery: \(cell.title)\n  breaks: \(cell.rule)\n  fix: \(cell.forgery.fix)\n"
            }
        }
        let rejectionsFailed = cells.contains { $0.contains { $0.outcome == .rejected || $0.outcome == .invalidOptions } }
        out += bugs.isEmpty && !rejectionsFailed ? "\nThe server accepted every response a correct server must accept.\n"
            : bugs.isEmpty ? "\n" : "\n\(bugs.count) integration bug(s): " + bugs.map(\.trait.label).joined(separator: "; ") + ".\n"
        if !staleFindings.isEmpty { out += "\(staleFindings.count) stale-account-context finding(s): " + staleFindings.map { "\($0.kind.rawValue) (\($0.kind.criteria.joined(separator: ", ")))" }.joined(separator: "; ") + ".\n" }
        if !forged.isEmpty {
            out += acceptedForgeries.isEmpty ? "The server refused every forged response.\n"
                : "\(acceptedForgeries.count) forged response(s) accepted: " + acceptedForgeries.map(\.title).joined(separator: "; ") + ".\n"
        }
        if invalidOptions { out += "The server issued options no browser accepts: no provider was asked.\n" }
        for suspect in alsoSuspected {
            out += "also suspected: \(suspect.trait.label), carried beside a bug by \(suspect.cells.joined(separator: ", ")) and by no accepted "
                + "response, so the server may refuse it too once the bug is fixed\n  fix: \(suspect.trait.fix)\n"
        }
        out += "Every exchange is in the event log: credemu --vault \(log) events --all-profiles --kind probe\n"
        return out
    }
}
