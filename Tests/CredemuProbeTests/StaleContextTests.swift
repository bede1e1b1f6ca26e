@testable import CredemuProbe
import CredemuEngine
import WebAuthn
import XCTest

/// The adapter's session steps for the stale-account-context checks (issue 35.2), refused by name when malformed,
/// and the checks in the reports and the exit status.
final class StaleContextTests: XCTestCase {
    static let ceremonies = """
    "registration": {"begin": {"path": "/r/begin"}, "options": "publicKey", "finish": {"path": "/r/finish", "response": "credential"}},
    "authentication": {"begin": {"path": "/a/begin"}, "finish": {"path": "/a/finish"}}
    """

    func adapter(_ session: String) throws(ProbeError) -> ProbeAdapter {
        try ProbeAdapter(json: try! JSONValue.parse("{\(session), \(StaleContextTests.ceremonies)}"), name: "a.json")
    }

    func refusal(_ session: String) -> String {
        do {
            _ = try adapter(session)
            return "accepted"
        } catch {
            XCTAssertEqual(error.kind, .badAdapter)
            return error.message
        }
    }

    func testASignOutStepIsReadWithItsMethodAndPostIsTheDefault() throws {
        let deleting = try adapter(#""signIn": {"path": "/session", "body": {"user": "{username}"}}, "signOut": {"path": "/session", "method": "DELETE"}"#)
        XCTAssertEqual(deleting.signOut?.path, "/session")
        XCTAssertEqual(deleting.signOut?.method, "DELETE")
        XCTAssertEqual(deleting.signIn?.method, "POST")
        let posting = try adapter(#""signIn": {"path": "/login"}, "signOut": {"path": "/logout", "body": {"csrf": "x"}}"#)
        XCTAssertEqual(posting.signOut?.method, "POST")
        XCTAssertEqual(posting.signOut?.body["csrf"]?.stringValue, "x")
        XCTAssertNil(try adapter(#""signIn": {"path": "/login"}"#).signOut)
        XCTAssertNil(ProbeAdapter.conformance.signOut)
    }

    func testASignOutWithoutASignInIsRefusedByName() {
        XCTAssertTrue(refusal(#""signOut": {"path": "/logout"}"#).contains("'signOut' needs a 'signIn' step"))
    }

    func testAMethodOtherThanPostGetOrDeleteIsRefused() {
        XCTAssertTrue(refusal(#""signIn": {"path": "/l"}, "signOut": {"path": "/logout", "method": "PATCH"}"#)
            .contains("'signOut.method' must be one of POST, GET, DELETE"))
        XCTAssertTrue(refusal(#""signIn": {"path": "/l"}, "signOut": {"path": "/logout", "method": "delete"}"#).contains("signOut.method"))
        XCTAssertTrue(refusal(#""signIn": {"path": "/l", "method": 1}"#).contains("'signIn.method'"))
    }

    func testAGetOrDeleteWithABodyIsRefused() {
        XCTAssertTrue(refusal(#""signIn": {"path": "/l"}, "signOut": {"path": "/logout", "method": "GET", "body": {}}"#)
            .contains("'signOut' is a GET: it carries no body"))
    }

    func testAMisspeltMemberIsRefusedInsteadOfIgnored() {
        XCTAssertTrue(refusal(#""signIn": {"path": "/l"}, "signOut": {"path": "/logout", "bdy": {}}"#)
            .contains("unknown member 'signOut.bdy' (path, body, method)"))
        XCTAssertTrue(refusal(#""signIn": {"path": "/l"}, "sign_out": {"path": "/logout"}"#).contains("unknown member 'sign_out'"))
        XCTAssertTrue(refusal(#""signIn": {"path": "/l"}, "signOut": "/logout""#).contains("'signOut' must be an object"))
        // A ceremony's steps post JSON: no method, and only the finish takes `response`.
        let methodOnFinish = try! JSONValue.parse("""
        {"registration": {"begin": {"path": "/r", "method": "GET"}, "finish": {"path": "/f"}}, "authentication": {"begin": {"path": "/a"}, "finish": {"path": "/f"}}}
        """)
        XCTAssertThrowsError(try ProbeAdapter(json: methodOnFinish, name: "m")) { XCTAssertTrue(($0 as! ProbeError).message.contains("unknown member 'registration.begin.method' (path, body)")) }
        let optionsTypo = try! JSONValue.parse("""
        {"registration": {"begin": {"path": "/r"}, "option": "publicKey", "finish": {"path": "/f"}}, "authentication": {"begin": {"path": "/a"}, "finish": {"path": "/f"}}}
        """)
        XCTAssertThrowsError(try ProbeAdapter(json: optionsTypo, name: "o")) { XCTAssertTrue(($0 as! ProbeError).message.contains("unknown member 'registration.option'")) }
    }

    func report(_ checks: [StaleContextCheck]) -> ProbeReport {
        var report = ProbeReport(target: "t", adapter: "a.json", origin: "o",
                                 columns: [ProbeColumn(pack: "gpm", name: "GPM", version: "1", platform: .chromeDesktop)],
                                 variants: [.modal], cells: [[ProbeCell(outcome: .accepted, message: "")]], log: "l")
        report.staleContext = checks
        report.diagnose()
        return report
    }

    func testAStaleRegistrationTakenIsAFindingUnderItsCriteriaInEveryReport() throws {
        let found = report([
            StaleContextCheck(kind: .signedOut, outcome: .passed, message: "the server refused it", provider: "gpm@chrome-desktop"),
            StaleContextCheck(kind: .switchedAccount, outcome: .finding, message: "the credential then signed in as account B", provider: "gpm@chrome-desktop"),
        ])
        XCTAssertTrue(found.failed, "a finding makes the run exit 1")
        XCTAssertEqual(found.staleFindings.map(\.kind), [.switchedAccount])
        XCTAssertTrue(found.table.contains("FINDING [N2.5-AC03, N2.6-AC06] registration answered after switching to another account: the credential then signed in as account B"), found.table)
        XCTAssertTrue(found.table.contains("fix: keep the pending registration in the session that began it"), found.table)
        XCTAssertTrue(found.table.contains("do not vary per pack"))
        XCTAssertTrue(found.table.contains("1 stale-account-context finding(s): switchedAccount"))
        let checks = try XCTUnwrap(found.json["staleContext"]?["checks"]?.arrayValue)
        XCTAssertEqual(checks.map { $0["outcome"]?.stringValue }, ["passed", "finding"])
        XCTAssertEqual(checks[1]["criteria"]?.arrayValue?.compactMap(\.stringValue), ["N2.5-AC03", "N2.6-AC06"])
        XCTAssertTrue(checks[1]["rule"]?.stringValue?.contains("N2.6-AC06") == true)
        XCTAssertEqual(found.json["passed"]?.boolValue, false)
        XCTAssertTrue(found.html.contains("<h2>Stale account context</h2>"))
        XCTAssertTrue(found.html.contains("<b>N2.5-AC03 / N2.6-AC06: registration answered after switching to another account</b>"), found.html)
    }

    func testOptionsForTheEarlierAccountAreAFindingUnderN26AC03() {
        let found = report([StaleContextCheck(kind: .optionsAfterSwitch, outcome: .finding, message: "the options name account A", provider: "gpm@chrome-desktop")])
        XCTAssertTrue(found.failed)
        XCTAssertTrue(found.table.contains("FINDING [N2.6-AC03] registration options after switching accounts"), found.table)
    }

    func testChecksThatNeedAnAdapterAreReportedAndFailNothing() {
        let needs = report(StaleContextCheck.Kind.allCases.map {
            StaleContextCheck(kind: $0, outcome: .needsAdapter, message: "the FIDO2 Conformance Test API has no session", provider: "gpm@chrome-desktop")
        })
        XCTAssertFalse(needs.failed)
        XCTAssertTrue(needs.table.contains("needs an adapter [N2.5-AC03, N2.6-AC06] registration answered after sign-out: the FIDO2 Conformance Test API has no session"), needs.table)
        XCTAssertTrue(needs.table.contains("accepted every response"))
        XCTAssertEqual(needs.json["staleContext"]?["checks"]?.arrayValue?.count, 4)
    }
}
