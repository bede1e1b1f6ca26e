import CredemuEngine
import CredemuReports

extension ProbeReport {
    /// A self-contained HTML page in the divergence report's style: rejected cells red with the server's
    /// message, each tied to its rule and fix below.
    public var html: String {
        let e = ReportStyle.escape
        var rows = ""
        for v in variants.indices {
            let bad = columns.indices.contains { cells[$0][v].outcome == .rejected || cells[$0][v].outcome == .invalidOptions }
            rows += "<tr class=\"\(bad ? "diverges" : "same")\"><th scope=\"row\">\(bad ? "<span class=\"mark\">✗</span> " : "")\(e(variants[v].title))</th>"
            for c in columns.indices {
                let cell = cells[c][v]
                rows += "<td class=\"\(cell.outcome.rawValue)\" title=\"\(e(cell.sent))\"><div class=\"summary\">\(e(ProbeReport.short(cell)))</div>"
                if cell.outcome == .rejected { rows += "<div class=\"message\">“\(e(cell.message))”\(cell.status.map { " <small>HTTP \($0)</small>" } ?? "")</div>" }
                if cell.outcome == .invalidOptions { rows += "<div class=\"message\">\(e(cell.message))</div>" }
                if cell.outcome == .ruledOut || cell.outcome == .notApplicable || cell.outcome == .notRun { rows += "<details><summary>why</summary>\(e(cell.message))</details>" }
                if !cell.sent.isEmpty { rows += "<div class=\"sent\"><code>\(e(cell.sent))</code></div>" }
                if !cell.note.isEmpty { rows += "<div class=\"note\">\(e(cell.note))</div>" }
                rows += "</td>"
            }
            rows += "</tr>\n"
        }
        var bugItems = ""
        for bug in bugs {
            bugItems += "<li><b>\(e(bug.trait.label))</b> — <i>Fix:</i> \(e(bug.trait.fix)).<br><small>\(e(bug.trait.rule))</small><br><small>seen in: \(e(bug.cells.joined(separator: ", ")))</small></li>\n"
        }
        for suspect in alsoSuspected {
            bugItems += "<li><b>Also suspected: \(e(suspect.trait.label))</b>, carried beside a bug and by no accepted response, so the server may refuse it too once the bug is fixed — <i>Fix:</i> \(e(suspect.trait.fix)).<br><small>seen in: \(e(suspect.cells.joined(separator: ", ")))</small></li>\n"
        }
        if invalidOptions {
            bugItems += "<li><b>Options no browser accepts</b> — <i>Fix:</i> \(e(ProbeReport.optionsFix)).<br><small>\(e(ProbeReport.optionsRule))</small></li>\n"
        }
        bugItems += staleContextHTMLItems
        for name in unexplained { bugItems += "<li><b>\(e(name))</b>: rejected with nothing unusual in the response (WebAuthn L3 §7.1/§7.2).</li>\n" }
        var forgedRows = ""
        for cell in forged {
            let bad = cell.outcome == .accepted
            forgedRows += "<tr class=\"\(bad ? "diverges" : "same")\"><th scope=\"row\">\(bad ? "<span class=\"mark\">✗</span> " : "")\(e(cell.title))</th>"
                + "<td class=\"\(bad ? "rejected" : cell.outcome == .refused ? "accepted" : "notRun")\"><div class=\"summary\">\(e(ProbeReport.short(cell)))</div>"
                + (cell.outcome == .refused ? "<div class=\"message\">“\(e(cell.message))”</div>" : "")
                + (bad ? "<div class=\"message\">\(e(cell.rule))<br><i>Fix:</i> \(e(cell.forgery.fix))</div>" : "") + "</td></tr>\n"
        }
        let forgedSection = forged.isEmpty ? "" : "<h2>Forged responses</h2>\n<p>Each is a real response with one thing wrong; a correct server refuses every one.</p>\n"
            + "<table><thead><tr><th scope=\"col\">Forgery</th><th scope=\"col\">Verdict</th></tr></thead><tbody>\n\(forgedRows)</tbody></table>"
        for cell in acceptedForgeries {
            bugItems += "<li><b>Accepted forgery: \(e(cell.title))</b> — <i>Fix:</i> \(e(cell.forgery.fix)).<br><small>\(e(cell.rule))</small></li>\n"
        }
        let headers = columns.map { "<th scope=\"col\">\(e($0.name))<br><small>\(e($0.platform.rawValue)) · \(e($0.version))</small></th>" }.joined()
        let verdict = failed ? "<p class=\"verdict bad\">The server rejected responses a correct server must accept, issued options no browser accepts, took a registration whose account context went stale, or accepted a forged response.</p>"
                             : "<p class=\"verdict good\">The server accepted every response a correct server must accept.</p>"
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>credemu probe — \(e(target))</title>
        <style>
        \(ReportStyle.base)
        .mark{color:#a40e26;font-weight:bold}
        td.accepted{color:#116329} td.rejected,td.invalidOptions{color:#a40e26;background:#ffebe9} td.ruledOut,td.notApplicable,td.notRun{color:#6e7781}
        .message{font-size:12px} .note{font-size:11px;color:#57606a;font-style:italic} .sent code{font-size:11px;color:#57606a}
        details{font-size:11px;color:#57606a} ul.bugs li{margin:.5rem 0}
        .verdict{font-weight:bold} .verdict.bad{color:#a40e26} .verdict.good{color:#116329}
        </style></head><body>
        <h1>credemu probe: \(e(target))</h1>
        <p class="meta">Interface: \(e(adapter)) · origin <code>\(e(origin))</code> · \(columns.count) providers. Every response is real WebAuthn made by credemu's engine for the options the server issued; hover a cell for the flags sent. Event log: <code>\(e(log))</code>.</p>
        \(verdict)
        <table><thead><tr><th scope="col">Variant</th>\(headers)</tr></thead><tbody>
        \(rows)</tbody></table>
        \(forgedSection)
        <h2>Integration bugs</h2>
        \(bugItems.isEmpty ? "<p>None: the server accepts what every provider sends.</p>" : "<ul class=\"bugs\">\n\(bugItems)</ul>")
        \(staleContextHTML)
        </body></html>

        """
    }
}
