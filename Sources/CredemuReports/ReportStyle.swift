import Foundation

/// The CSS the HTML reports share (the divergence matrix, `credemu probe`): page, table, diverging rows.
public enum ReportStyle {
    public static let base = """
        body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1b1f24}
        h1{font-size:1.4rem;margin:0 0 .3rem} p.meta{color:#57606a;margin:.2rem 0 1rem}
        table{border-collapse:collapse;width:100%;table-layout:fixed}
        th,td{border:1px solid #d0d7de;padding:.45rem;vertical-align:top;text-align:left}
        thead th{background:#f6f8fa;position:sticky;top:0}
        tr.diverges{background:#fff8c5} tr.diverges th{border-left:4px solid #bf8700}
        """

    /// `text` with `&`, `<`, `>` and `"` escaped, for an HTML element or a quoted attribute.
    public static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
