import CredemuEngine
import CredemuReports
import Foundation
import Vault
import WebAuthn

/// One scenario run across providers: rows are steps, columns providers, cells outcomes; a row whose cells
/// differ diverges.
public struct DivergenceMatrix: Sendable {
    public struct Column: Sendable {
        public var pack: String
        public var name: String
        public var version: String
        public var platform: Platform
        public var header: String { "\(pack)@\(platform.rawValue)" }
    }

    public var scenario: Scenario
    public var columns: [Column]
    /// cells[step][column]
    public var cells: [[Cell]]
    /// Findings per column: what the RP's requests in the scenario did against the seeds' guidance.
    public var findings: [[Finding]]

    /// Whether what the RP and the user observe differs between the row's providers (`Cell.key`). The platform's
    /// rendering of an error (an androidx exception, an ASAuthorizationError) is compared only among columns whose
    /// platforms render alike: a web page and an Android app never see the same class.
    public func diverges(_ row: Int) -> Bool {
        if Set(cells[row].map(\.key)).count > 1 { return true }
        let byKind = Dictionary(grouping: zip(columns, cells[row]), by: { $0.0.platform.dialect })
        return byKind.values.contains { Set($0.map { $0.1.dialect ?? "" }).count > 1 }
    }

    /// Runs `scenario` once per (policy, platform), each in a fresh vault under `directory`; an account that names its
    /// pack plays it from `packs`; `mover` makes the `move` steps. Refuses a run over `limits` before it starts; throws `Cancellation.Stopped` when
    /// `cancellation` (given the limits' deadline) ends it between step runs.
    public static func run(_ scenario: Scenario, providers: [(any ProviderPolicy, Platform)], directory: String,
                           packs: [any ProviderPolicy] = [], limits: ScenarioLimits,
                           cancellation: Cancellation = .never, mover: ScenarioRunner.Mover? = nil) throws -> DivergenceMatrix {
        try limits.check(scenario, columns: providers.count)
        let cancellation = cancellation.within(seconds: limits.seconds)
        let perColumn = scenario.steps.reduce(0) { $0 + $1.times }
        var columns: [Column] = []
        var byColumn: [[Cell]] = []
        var findings: [[Finding]] = []
        for (index, (policy, platform)) in providers.enumerated() {
            let vault = try Vault.open(path: "\(directory)/\(index)-\(policy.id).db", key: .raw([UInt8](repeating: 1, count: 32)))
            defer { vault.close() }
            let runner = ScenarioRunner(scenario: scenario, policy: policy, platform: platform, vault: vault, packs: packs, mover: mover)
            do {
                byColumn.append(try runner.run(cancellation: cancellation))
            } catch {
                throw Cancellation.Stopped(reason: error.reason, completed: index * perColumn + error.completed, total: providers.count * perColumn)
            }
            findings.append(try runner.profileNames.flatMap { (name) throws in try Finding.list(vault.scoped(to: name)) })
            columns.append(Column(pack: policy.id, name: policy.name, version: policy.version, platform: platform))
        }
        let rows = scenario.steps.indices.map { step in byColumn.map { $0[step] } }
        return DivergenceMatrix(scenario: scenario, columns: columns, cells: rows, findings: findings)
    }

    // MARK: Renderings

    public var json: JSONValue {
        .object([
            ("scenario", .string(scenario.name)),
            ("title", .string(scenario.title)),
            ("criteria", .array(scenario.criteria.map(JSONValue.string))),
            ("providers", .array(columns.map { .object([("pack", .string($0.pack)), ("version", .string($0.version)), ("platform", .string($0.platform.rawValue))]) })),
            ("steps", .array(scenario.steps.indices.map { row in
                .object([("step", .string(scenario.steps[row].label)), ("diverges", .bool(diverges(row))),
                         ("cells", .object(zip(columns, cells[row]).map { ($0.header, $1.json) }))])
            })),
            ("findings", .object(zip(columns, findings).map { ($0.header, .array($1.map(\.json))) })),
        ])
    }

    /// A fixed-width table for the terminal; diverging rows are marked with "≠".
    public var table: String {
        let width = 30
        func fit(_ s: String) -> String { s.count > width ? String(s.prefix(width - 1)) + "…" : s + String(repeating: " ", count: width - s.count) }
        var out = "\(scenario.title) (\(scenario.name))\n"
        out += "  " + fit("step") + columns.map { fit($0.header) }.joined() + "\n"
        for row in scenario.steps.indices {
            out += (diverges(row) ? "≠ " : "  ") + fit(scenario.steps[row].label) + cells[row].map { fit($0.summary) }.joined() + "\n"
            if cells[row].contains(where: { $0.vault != "no change" }) {
                out += "  " + fit("") + cells[row].map { fit($0.vault == "no change" ? "" : "vault: " + $0.vault) }.joined() + "\n"
            }
        }
        out += findingsText
        return out
    }

    public var markdown: String {
        func esc(_ s: String) -> String { s.replacingOccurrences(of: "|", with: "\\|") }
        var out = "## \(scenario.title)\n\n\(scenario.description)\n\n"
        if !scenario.criteria.isEmpty { out += "Criteria: \(scenario.criteria.joined(separator: ", "))\n\n" }
        out += "| step | " + columns.map { "\($0.pack) (\($0.platform.rawValue))" }.joined(separator: " | ") + " |\n"
        out += "|---|" + columns.map { _ in "---" }.joined(separator: "|") + "|\n"
        for row in scenario.steps.indices {
            let label = diverges(row) ? "**≠ \(esc(scenario.steps[row].label))**" : esc(scenario.steps[row].label)
            let texts = cells[row].map { cell -> String in
                var text = esc(cell.summary)
                if cell.vault != "no change" { text += "<br>vault: \(esc(cell.vault))" }
                if let d = cell.dialect, d != cell.error { text += "<br>`\(esc(d))`" }
                if let observed = cell.observed { text += "<br>\(esc(observed))" }
                return diverges(row) ? "**\(text)**" : text
            }
            out += "| \(label) | " + texts.joined(separator: " | ") + " |\n"
        }
        out += "\n" + findingsText.split(separator: "\n").map { "- " + $0 }.joined(separator: "\n") + "\n"
        return out
    }

    private var findingsText: String {
        var lines: [String] = []
        for (column, list) in zip(columns, findings) where !list.isEmpty {
            for f in list { lines.append("finding [\(column.header)] \(f.criterion) \(f.code): \(f.message) Fix: \(f.fix)") }
        }
        return lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
    }

    /// A self-contained HTML page: diverging rows highlighted, every cell's knob and source on hover and in
    /// a details line.
    public var html: String {
        let e = ReportStyle.escape
        var rows = ""
        for row in scenario.steps.indices {
            rows += "<tr class=\"\(diverges(row) ? "diverges" : "same")\"><th scope=\"row\">\(diverges(row) ? "<span class=\"mark\">≠</span> " : "")\(e(scenario.steps[row].label))</th>"
            for cell in cells[row] {
                rows += "<td class=\"\(e(cell.outcome.split(separator: ",").first.map(String.init) ?? ""))\" title=\"\(e(cell.knob ?? ""))\">"
                rows += "<div class=\"summary\">\(e(cell.summary))</div>"
                if cell.vault != "no change" { rows += "<div class=\"vault\">vault: \(e(cell.vault))</div>" }
                if let d = cell.dialect { rows += "<div class=\"dialect\"><code>\(e(d))</code></div>" }
                if let observed = cell.observed { rows += "<div class=\"observed\">\(e(observed))</div>" }
                if let k = cell.knob { rows += "<details><summary>knob</summary>\(e(k))</details>" }
                if let u = cell.unexpected { rows += "<div class=\"unexpected\">\(e(u))</div>" }
                rows += "</td>"
            }
            rows += "</tr>\n"
        }
        var findingItems = ""
        for (column, list) in zip(columns, findings) {
            for f in list {
                findingItems += "<li><b>\(e(column.header))</b> <code>\(e(f.criterion))</code> \(e(f.code)): \(e(f.message)) <i>Fix:</i> \(e(f.fix))</li>\n"
            }
        }
        let headers = columns.map { "<th scope=\"col\">\(e($0.name))<br><small>\(e($0.platform.rawValue)) · \(e($0.version))</small></th>" }.joined()
        let divergent = scenario.steps.indices.filter(diverges).count
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(e(scenario.title)) — credemu divergence matrix</title>
        <style>
        \(ReportStyle.base)
        .mark{color:#bf8700;font-weight:bold}
        td.created{color:#116329} td.noop{color:#6e7781} td.error{color:#a40e26} td.signedIn{color:#0550ae}
        .vault{font-size:12px;color:#6639ba} .dialect code{font-size:11px;color:#57606a} .observed{font-size:11px;color:#57606a}
        details{font-size:11px;color:#57606a} .unexpected{color:#a40e26;font-weight:bold}
        ul.findings li{margin:.3rem 0}
        </style></head><body>
        <h1>\(e(scenario.title))</h1>
        <p class="meta">\(e(scenario.description))<br>Scenario <code>\(e(scenario.name))</code>\(scenario.criteria.isEmpty ? "" : " · criteria " + e(scenario.criteria.joined(separator: ", "))) · \(divergent) of \(scenario.steps.count) steps diverge across \(columns.count) providers. Hover a cell for the pack knob and its source.</p>
        <table><thead><tr><th scope="col">Step</th>\(headers)</tr></thead><tbody>
        \(rows)</tbody></table>
        <h2>RP integration findings</h2>
        \(findingItems.isEmpty ? "<p>None: the RP's requests in this scenario follow the seeds' guidance.</p>" : "<ul class=\"findings\">\n\(findingItems)</ul>")
        </body></html>

        """
    }
}
