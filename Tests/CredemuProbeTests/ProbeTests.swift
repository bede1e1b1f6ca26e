@testable import CredemuProbe
import CredemuEngine
import WebAuthn
import XCTest

final class ProbeTests: XCTestCase {
    func testHTTPURLSplitsHostPortAndPathAndRefusesHTTPS() throws {
        let url = try HTTPURL("http://localhost:8123/fido")
        XCTAssertEqual(url.host, "localhost")
        XCTAssertEqual(url.port, 8123)
        XCTAssertEqual(try url.resolving("/attestation/options").path, "/fido/attestation/options")
        XCTAssertEqual(url.origin, "http://localhost:8123")
        XCTAssertEqual(try HTTPURL("http://[::1]:9/").host, "::1")
        XCTAssertThrowsError(try HTTPURL("https://rp.example/"))
        XCTAssertThrowsError(try HTTPURL("http://rp.example:0/"))
        XCTAssertThrowsError(try HTTPURL("http://:80/"))
        XCTAssertThrowsError(try HTTPURL("http://user@rp.example/"))
    }

    func testResponseParsingReadsContentLengthAndChunkedBodies() throws {
        let url = try HTTPURL("http://localhost/")
        let plain = try HTTPClient.parse(Array("HTTP/1.1 422 Unprocessable\r\nContent-Length: 2\r\nSet-Cookie: s=1; Path=/\r\n\r\n{}extra".utf8), url)
        XCTAssertEqual(plain.status, 422)
        XCTAssertEqual(plain.text, "{}")
        let chunked = try HTTPClient.parse(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n".utf8), url)
        XCTAssertEqual(chunked.text, "abcde")
        XCTAssertThrowsError(try HTTPClient.parse(Array("garbage".utf8), url))
        XCTAssertThrowsError(try HTTPClient.parse(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8), url))
    }

    func testAdapterFileIsCheckedAndFillsTemplates() throws {
        let good = try JSONValue.parse("""
        {"signIn": {"path": "/login", "body": {"user": "{username}"}},
         "registration": {"begin": {"path": "/r/begin"}, "options": "publicKey", "finish": {"path": "/r/finish", "response": "credential"}},
         "authentication": {"begin": {"path": "/a/begin"}, "finish": {"path": "/a/finish"}}}
        """)
        let adapter = try ProbeAdapter(json: good, name: "test")
        XCTAssertEqual(adapter.registration.optionsPath, "publicKey")
        XCTAssertEqual(adapter.registration.responsePath, "credential")
        XCTAssertEqual(ProbeAdapter.fill(adapter.signIn!.body, ["username": "alice"])["user"]?.stringValue, "alice")
        let placed = ProbeAdapter.write(.object([("id", "x")]), into: .object([("keep", true)]), at: "credential")
        XCTAssertEqual(placed["credential"]?["id"]?.stringValue, "x")
        XCTAssertEqual(placed["keep"]?.boolValue, true)
        XCTAssertEqual(ProbeAdapter.read(.object([("a", .object([("b", 1)]))]), at: "a.b")?.numberValue, 1)
        for bad in ["[]", "{\"registration\": {}}", "{\"extra\": 1}",
                    "{\"registration\": {\"begin\": {\"path\": \"\"}, \"finish\": {\"path\": \"/f\"}}, \"authentication\": {\"begin\": {\"path\": \"/b\"}, \"finish\": {\"path\": \"/f\"}}}"] {
            XCTAssertThrowsError(try ProbeAdapter(json: try JSONValue.parse(bad), name: "bad"), bad)
        }
    }

    func testDiagnosisBlamesOnlyTraitsNoAcceptedResponseCarried() {
        func cell(_ outcome: ProbeCell.Outcome, _ traits: [ProbeTrait]) -> ProbeCell {
            var c = ProbeCell(outcome: outcome, message: outcome == .rejected ? "no" : "")
            c.traits = traits
            return c
        }
        let columns = [ProbeColumn(pack: "a", name: "A", version: "1", platform: .chromeDesktop),
                       ProbeColumn(pack: "b", name: "B", version: "1", platform: .ios)]
        // A server refusing UV=0: the UV-discouraged registration isolates it, the upgrade is put down to it.
        var report = ProbeReport(target: "t", adapter: "x", origin: "o", columns: columns,
                                 variants: [.modal, .upgrade, .userVerificationDiscouraged], cells: [
                                    [cell(.accepted, [.backedUp]), cell(.rejected, [.registrationUserNotPresent, .registrationUserNotVerified, .backedUp]),
                                     cell(.rejected, [.registrationUserNotVerified, .backedUp])],
                                    [cell(.accepted, [.zeroAAGUID, .backedUp]), cell(.rejected, [.zeroAAGUID, .registrationUserNotPresent, .registrationUserNotVerified]),
                                     cell(.notApplicable, [])],
                                 ], log: "l")
        report.diagnose()
        XCTAssertEqual(report.bugs.map(\.trait), [.registrationUserNotVerified])
        XCTAssertEqual(report.bugs[0].cells.count, 3)
        XCTAssertTrue(report.failed)
        XCTAssertTrue(report.unexplained.isEmpty)
        XCTAssertTrue(report.html.contains("UV=0 registration"))
        XCTAssertTrue(report.table.contains("seed 000"))
        // UP=0 was never accepted either: the upgrade's cells name it beside UV=0, and the report says it may be refused too.
        XCTAssertEqual(report.cells[0][1].suspects, [.registrationUserNotPresent, .registrationUserNotVerified])
        XCTAssertEqual(report.alsoSuspected.map(\.trait), [.registrationUserNotPresent])
        XCTAssertEqual(report.alsoSuspected[0].cells, ["upgrade @ a@chrome-desktop", "upgrade @ b@ios"])
        XCTAssertEqual(ProbeReport.short(report.cells[0][1]), "REJECTED (UP=0 registration, UV=0 registration)")
        XCTAssertTrue(report.table.contains("  may break too: seed 000 'What your server must tolerate': \"The registration response carries UP"))
        XCTAssertTrue(report.table.contains("also suspected: UP=0 registration"), report.table)
        XCTAssertTrue(report.html.contains("Also suspected: UP=0 registration"))
    }

    func testAnAcceptedForgeryFailsTheRunAndNamesItsSpecStepAndFixInEveryReport() {
        let columns = [ProbeColumn(pack: "a", name: "A", version: "1", platform: .chromeDesktop)]
        var report = ProbeReport(target: "t", adapter: "x", origin: "o", columns: columns, variants: [.modal],
                                 cells: [[ProbeCell(outcome: .accepted, message: "")]], log: "l")
        report.forged = [ForgedCell(forgery: .otherOrigin, ceremony: .registration, outcome: .refused, message: "Invalid origin"),
                         ForgedCell(forgery: .badSignature, ceremony: .assertion, outcome: .refused, message: "bad signature")]
        XCTAssertFalse(report.failed, "every forgery refused: a clean run")
        XCTAssertTrue(report.table.contains("The server refused every forged response."))
        report.forged[1].outcome = .accepted
        XCTAssertTrue(report.failed)
        XCTAssertTrue(report.table.contains("breaks: WebAuthn L3 §7.2 step 21"), report.table)
        XCTAssertTrue(report.table.contains("fix: verify the assertion signature with the stored public key"))
        XCTAssertEqual(report.json["acceptedForgeries"], .array(["badSignature/assertion"]))
        XCTAssertEqual(report.json["passed"], .bool(false))
        XCTAssertTrue(report.html.contains("Accepted forgery: a signature over other bytes (sign-in)"))
    }

    func testProviderSelectionNamesPacksAndPlatforms() throws {
        let registry = try PolicyRegistry(directory: nil)
        XCTAssertEqual(try Prober.select("all", from: registry).count, registry.all.count)
        XCTAssertGreaterThan(try Prober.select("every", from: registry).count, registry.all.count)
        XCTAssertEqual(try Prober.select("apple@ios", from: registry).first?.1, .ios)
        XCTAssertThrowsError(try Prober.select("apple@android", from: registry))
        XCTAssertThrowsError(try Prober.select("nope", from: registry))
    }
}
