import CredemuTestSupport
import Foundation
import XCTest
@testable import Vault

/// Immediate mediation's request counts in the vault (`Vault.countImmediateRequest`): bounded whatever sites a
/// caller names.
final class ImmediateRequestTests: XCTestCase {
    /// Counts one request from `site` at `now`, kept until `now + 60 s`.
    func count(_ vault: Vault, _ browser: String, _ site: String, at now: Int64) throws {
        try vault.countImmediateRequest(browser: browser, site: site, now: now) { stored in ((stored.map { $0 + "," } ?? "") + "\(now)", now + 60_000, ()) }
    }

    func sites(_ vault: Vault, _ browser: String) throws -> [String] {
        try vault.locked { () throws(VaultError) in
            var out: [String] = []
            try vault.db.query("SELECT site FROM immediate_requests WHERE browser = ? ORDER BY site", [.text(browser)]) { row in out.append(row.text(0)) }
            return out
        }
    }

    func testRowsPastTheirExpiryAreDeletedAsLaterCountsPass() throws {
        let (vault, _) = try makeTestVault()
        for i in 0..<10 { try count(vault, "b", "old\(i).example", at: 0) }
        try count(vault, "other", "old.example", at: 0)
        for i in 0..<5 { try count(vault, "b", "new\(i).example", at: 61_000) }
        XCTAssertEqual(try sites(vault, "b"), (0..<5).map { "new\($0).example" }, "two expired rows go with each count")
        XCTAssertEqual(try sites(vault, "other"), ["old.example"], "another browser's rows wait for its own counts")
    }

    func testANewSiteBeyondTheBoundEvictsTheRowThatExpiresFirst() throws {
        let (vault, _) = try makeTestVault()
        let bound = Vault.immediateRequestSites
        for i in 0..<bound { try count(vault, "b", "site\(i).example", at: Int64(i)) }
        try count(vault, "b", "site0.example", at: Int64(bound))
        XCTAssertEqual(try sites(vault, "b").count, bound, "a site already kept adds no row")
        try count(vault, "b", "new.example", at: Int64(bound))
        let kept = Set(try sites(vault, "b"))
        XCTAssertEqual(kept.count, bound)
        XCTAssertFalse(kept.contains("site1.example"), "the row that expires first went")
        XCTAssertTrue(kept.contains("site0.example") && kept.contains("new.example"))
    }
}
