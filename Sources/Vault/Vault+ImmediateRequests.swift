extension Vault {
    /// The sites whose immediate-request counts one browser keeps at most. Past it, a new site evicts the counts
    /// that expire first. Chrome keeps a count per top-frame site until it closes, but there the top frame is the
    /// page's own; here a caller names its `topOrigin`, so a page could otherwise grow the table without bound.
    /// Only a caller that names over this many sites in one window loses counts, and only the oldest.
    public static let immediateRequestSites = 1000

    /// Expired rows a count deletes at most: more than the one it may add, so they never pile up.
    static let immediateRequestPruneStep = 2

    /// Counts an immediate request from `site` in `browser`, in one write transaction of its own, so every process
    /// on the vault counts together. `count` gets the site's stored window times (nil: none kept) and returns the
    /// times to store, when the last of them leaves its window, and its answer. The caller's rule decides; the
    /// vault bounds the table: a browser's rows past their expiry at `now` are deleted as counts pass, and a new
    /// site beyond `immediateRequestSites` evicts the row that expires first. Every statement is on the primary key
    /// or `immediate_requests_by_expiry`.
    public func countImmediateRequest<T>(browser: String, site: String, now: Int64,
                                         _ count: (String?) -> (times: String, expiresAt: Int64, answer: T)) throws(VaultError) -> T {
        try locked { () throws(VaultError) in
            try db.transaction { () throws(VaultError) in
                var stored: String?
                try db.query(Vault.immediateRequestsSQL, [.text(browser), .text(site)]) { row in stored = row.text(0) }
                let (times, expiresAt, answer) = count(stored)
                if stored == nil {
                    try db.query(Vault.evictImmediateRequestsSQL, [.text(browser), .int(Int64(Vault.immediateRequestSites))])
                }
                try db.query(Vault.setImmediateRequestsSQL, [.text(browser), .text(site), .text(times), .int(expiresAt)])
                try db.query(Vault.pruneImmediateRequestsSQL, [.text(browser), .int(now), .int(Int64(Vault.immediateRequestPruneStep))])
                return answer
            }
        }
    }

    static let immediateRequestsSQL = "SELECT times FROM immediate_requests WHERE browser = ? AND site = ?"
    static let setImmediateRequestsSQL = """
        INSERT INTO immediate_requests (browser, site, times, expires_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (browser, site) DO UPDATE SET times = excluded.times, expires_at = excluded.expires_at
        """
    /// Makes room for one more site: deletes the browser's rows that expire first while it has `?2` or more (the
    /// count walks at most that many entries of the index).
    static let evictImmediateRequestsSQL = """
        DELETE FROM immediate_requests WHERE browser = ?1 AND site IN (
            SELECT site FROM immediate_requests WHERE browser = ?1 ORDER BY expires_at
            LIMIT max(0, (SELECT count(*) FROM immediate_requests WHERE browser = ?1) - ?2 + 1))
        """
    static let pruneImmediateRequestsSQL = """
        DELETE FROM immediate_requests WHERE browser = ?1 AND site IN (
            SELECT site FROM immediate_requests WHERE browser = ?1 AND expires_at <= ?2 LIMIT ?3)
        """
}
