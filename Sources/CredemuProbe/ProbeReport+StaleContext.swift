import CredemuReports
import WebAuthn

/// The stale-account-context checks in the terminal, JSON and HTML reports: each with its seed criteria, what
/// happened, and for a finding the rule and the fix.
extension ProbeReport {
    /// The checks whose stale response the server took (they make the run fail, exit 1).
    public var staleFindings: [StaleContextCheck] { staleContext.filter { $0.outcome == .finding } }

    var staleContextJSON: JSONValue {
        .object([("provider", .string(staleContext.first?.provider ?? "")),
                 ("note", .string(ProbeReport.staleContextNote)),
                 ("checks", .array(staleContext.map(\.json)))])
    }

    static let staleContextNote = "run once, with the first provider: the checks are about the server's sessions and do not vary per pack"

    static func mark(_ outcome: StaleContextCheck.Outcome) -> String {
        switch outcome {
        case .passed: return "passed"
        case .finding: return "FINDING"
        case .notRun: return "not run"
        case .needsAdapter: return "needs an adapter"
        }
    }

    var staleContextTable: String {
        guard let provider = staleContext.first?.provider else { return "" }
        var out = "\nStale account context (\(provider); \(ProbeReport.staleContextNote)):\n"
        for check in staleContext {
            out += "  \(ProbeReport.mark(check.outcome)) [\(check.kind.criteria.joined(separator: ", "))] \(check.kind.title): \(check.message)\n"
            if check.outcome == .finding { out += "    breaks: \(check.kind.rule)\n    fix: \(check.kind.fix)\n" }
        }
        return out
    }

    var staleContextHTMLItems: String {
        let e = ReportStyle.escape
        return staleFindings.map {
            "<li><b>\(e($0.kind.criteria.joined(separator: " / "))): \(e($0.kind.title))</b> — \(e($0.message)). <i>Fix:</i> \(e($0.kind.fix)).<br><small>\(e($0.kind.rule))</small></li>\n"
        }.joined()
    }

    var staleContextHTML: String {
        guard let provider = staleContext.first?.provider else { return "" }
        let e = ReportStyle.escape
        var rows = ""
        for check in staleContext {
            let css = check.outcome == .finding ? "rejected" : check.outcome == .passed ? "accepted" : "notRun"
            rows += "<tr class=\"\(check.outcome == .finding ? "diverges" : "same")\"><th scope=\"row\">\(e(check.kind.title))<br><small>\(e(check.kind.criteria.joined(separator: ", ")))</small></th>"
                + "<td class=\"\(css)\"><div class=\"summary\">\(e(ProbeReport.mark(check.outcome)))</div><div class=\"message\">\(e(check.message))</div></td></tr>\n"
        }
        return """
        <h2>Stale account context</h2>
        <p class="meta">A registration begun for account A, answered after the session signed out, switched to account B, or signed in as A again: the server must refuse it and store the credential for no one. With \(e(provider)); \(e(ProbeReport.staleContextNote)).</p>
        <table><thead><tr><th scope="col">Check</th><th scope="col">Result</th></tr></thead><tbody>
        \(rows)</tbody></table>
        """
    }
}
