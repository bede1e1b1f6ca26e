@testable import CredemuProbe
import CredemuEngine
import WebAuthn
import XCTest

/// The `reRegistration` variant's cells in the report: a server that asks only for an account's first passkey is
/// shown by the packs that no longer have it (GPM shadows it, a key overwrites it), and the note says what became of
/// the old ID whatever the verdict.
final class ReRegistrationTests: XCTestCase {
    func testTheVariantRunsOnItsOwnAfterTheOthers() {
        XCTAssertEqual(ProbeVariant.allCases.suffix(2), [.reRegistration, .signInAfterMove])
        XCTAssertFalse(ProbeVariant.reRegistration.isRegistration, "the loop of single registrations does not send it")
        XCTAssertTrue(ProbeVariant.modal.isRegistration)
    }

    func report(gpm: ProbeCell, apple: ProbeCell) -> ProbeReport {
        var signIn = ProbeCell(outcome: .accepted, message: "")
        signIn.traits = [.backedUp, .signCountZero]
        var report = ProbeReport(target: "t", adapter: "x", origin: "o",
                                 columns: [ProbeColumn(pack: "gpm", name: "GPM", version: "1", platform: .chromeDesktop),
                                           ProbeColumn(pack: "apple", name: "Apple", version: "1", platform: .safari)],
                                 variants: [.signIn, .reRegistration], cells: [[signIn, gpm], [signIn, apple]], log: "l")
        report.diagnose()
        return report
    }

    func testAServerAskingOnlyForTheFirstPasskeyIsNamedByThePacksThatShadowIt() throws {
        var gpm = ProbeCell(outcome: .rejected, message: "the server's allowCredentials names none of the passkeys this pack still has")
        gpm.traits = [.newestPasskeyOfAccount]
        gpm.note = "the first passkey's ID no longer signs in with this pack (passkeys.priorOfSameUser = shadowed)"
        var apple = ProbeCell(outcome: .accepted, message: "")
        apple.traits = [.backedUp, .signCountZero, .olderPasskeyOfAccount]
        apple.note = "the first passkey's ID still signs in with this pack (passkeys.priorOfSameUser = kept, unconfirmed)"
        let found = report(gpm: gpm, apple: apple)
        XCTAssertTrue(found.failed)
        XCTAssertEqual(found.bugs.map(\.trait), [.newestPasskeyOfAccount])
        XCTAssertEqual(found.bugs[0].cells, ["reRegistration @ gpm@chrome-desktop"])
        XCTAssertTrue(found.table.contains("note [gpm@chrome-desktop] re-registration, then the old ID signs in: the first passkey's ID no longer signs in"), found.table)
        XCTAssertTrue(found.table.contains("note [apple@safari]"))
        XCTAssertTrue(found.html.contains("<div class=\"note\">the first passkey's ID still signs in"), found.html)
        let cells = try XCTUnwrap(found.json["variants"]?.arrayValue?.last?["cells"])
        XCTAssertEqual(cells["gpm@chrome-desktop"]?["note"]?.stringValue, gpm.note)
        XCTAssertEqual(cells["gpm@chrome-desktop"]?["rules"]?.arrayValue?.first?["trait"]?.stringValue, "newestPasskeyOfAccount")
    }

    /// A refused second registration is the account's second passkey, not its flags (the first, alike, was taken).
    func testARefusedSecondRegistrationIsPutDownToTheSecondPasskey() {
        var gpm = ProbeCell(outcome: .rejected, message: "This account already has a passkey.")
        gpm.traits = [.backedUp, .secondPasskeyOfAccount]
        let apple = gpm
        let found = report(gpm: gpm, apple: apple)
        XCTAssertEqual(found.bugs.map(\.trait), [.secondPasskeyOfAccount])
        XCTAssertEqual(found.bugs[0].cells.count, 2)
        XCTAssertTrue(found.table.contains("excludeCredentials"), "the rule and fix name the server's way out")
    }

    /// Every new trait says where its rule comes from and what to do.
    func testTheReRegistrationTraitsNameTheirRuleAndFix() {
        for trait in [ProbeTrait.secondPasskeyOfAccount, .newestPasskeyOfAccount, .olderPasskeyOfAccount] {
            XCTAssertTrue(trait.rule.contains("WebAuthn L3") || trait.rule.contains("Chromium"), trait.rawValue)
            XCTAssertTrue(trait.rule.contains("passkeys.priorOfSameUser"), trait.rawValue)
            XCTAssertFalse(trait.fix.isEmpty)
        }
    }

    /// The server's user handle goes into a message: cut, and never a terminal escape.
    func testAUserHandleInAMessageIsCutAndEscaped() {
        XCTAssertEqual(Prober.clipID("YWxpY2U"), "YWxpY2U")
        XCTAssertEqual(Prober.clipID("\u{1B}[2Jabcdefghijklmnop"), "\\u{1B}[2Jabcdefgh…")
        XCTAssertEqual(Prober.clipID(nil), "none")
    }
}
