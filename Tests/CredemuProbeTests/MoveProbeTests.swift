@testable import CredemuProbe
import CredemuEngine
import WebAuthn
import XCTest

/// The `signInAfterMove` variant's traits: what a move changed, read from the registration the server stored and the
/// importer's assertion, so a refusal is tied to the change (BE, BS, a counter stopped at 0) and not to the pack.
final class MoveProbeTests: XCTestCase {
    /// Authenticator data: an RP ID hash, flags, a counter, and (for a registration) an AAGUID.
    func authData(flags: UInt8, counter: UInt32, aaguid: [UInt8]? = nil) -> [UInt8] {
        [UInt8](repeating: 0, count: 32) + [flags] + withUnsafeBytes(of: counter.bigEndian, Array.init) + (aaguid ?? [])
    }

    func assertion(flags: UInt8, counter: UInt32) -> JSONValue {
        .object([("response", .object([("authenticatorData", .string(Base64URL.encode(authData(flags: flags, counter: counter))))]))])
    }

    func change(registeredFlags: UInt8, counts: Bool, aaguid: [UInt8] = Array(repeating: 1, count: 16)) -> Prober.MoveChange {
        Prober.MoveChange(registered: authData(flags: registeredFlags, counter: 0, aaguid: aaguid), exporter: "gpm@chrome-desktop",
                          exporterCounts: counts, importerAAGUID: AAGUID.format(Array(repeating: 0, count: 16)), flagsKnob: "import.backupFlags = asCreated")
    }

    func testTheVariantIsNoSingleRegistration() {
        XCTAssertFalse(ProbeVariant.signInAfterMove.isRegistration)
    }

    func testABackupEligibilityTheImporterChangedIsNamedAndNotTheBackupState() {
        let answer = assertion(flags: 0x05, counter: 0)
        let (base, sent) = Prober.assertionTraits(answer, again: false)
        let (traits, shown, note) = change(registeredFlags: 0x1D, counts: false).traits(of: answer, base, sent)
        XCTAssertEqual(traits, [.signCountZero, .backupEligibilityChangedByMove])
        XCTAssertTrue(shown.hasPrefix("registered with gpm@chrome-desktop: UP=1 UV=1 BE=1 BS=1; after the move: UP=1 UV=1 BE=0 BS=0"), shown)
        XCTAssertTrue(note.contains("the AAGUID changed from 01010101-0101-0101-0101-010101010101 to 00000000-0000-0000-0000-000000000000"), note)
    }

    func testABackupStateAloneThatChangedIsItsOwnTrait() {
        let answer = assertion(flags: 0x0D, counter: 0)
        let (base, sent) = Prober.assertionTraits(answer, again: false)
        XCTAssertEqual(change(registeredFlags: 0x1D, counts: false).traits(of: answer, base, sent).0, [.signCountZero, .backupStateChangedByMove])
    }

    func testAZeroCounterAfterACountingExporterIsTheMovesAndNotTheProvidersOwn() {
        let answer = assertion(flags: 0x05, counter: 0)
        let (base, sent) = Prober.assertionTraits(answer, again: false)
        XCTAssertEqual(change(registeredFlags: 0x05, counts: true).traits(of: answer, base, sent).0, [.counterStoppedByMove])
        XCTAssertEqual(change(registeredFlags: 0x05, counts: false).traits(of: answer, base, sent).0, [.signCountZero],
                       "a pack that never counted sends the 0 it always sent")
        let (_, _, note) = change(registeredFlags: 0x05, counts: true, aaguid: Array(repeating: 0, count: 16)).traits(of: answer, base, sent)
        XCTAssertTrue(note.contains("the AAGUID is the same"), note)
    }

    func testARefusedMovedSignInIsTheBugOfWhatTheMoveChanged() {
        var plain = ProbeCell(outcome: .accepted, message: "")
        plain.traits = [.signCountGrowing]
        var movedHere = ProbeCell(outcome: .rejected, message: "signCount 0 is not greater than 0")
        movedHere.traits = [.counterStoppedByMove]
        var report = ProbeReport(target: "t", adapter: "x", origin: "o",
                                 columns: [ProbeColumn(pack: "windows-hello", name: "Hello", version: "1", platform: .chromeWindows),
                                           ProbeColumn(pack: "security-key", name: "Key", version: "1", platform: .chromeDesktop)],
                                 variants: [.signIn, .signInAfterMove], cells: [[plain, ProbeCell(outcome: .notApplicable, message: "")], [plain, movedHere]], log: "l")
        report.diagnose()
        XCTAssertEqual(report.bugs.map(\.trait), [.counterStoppedByMove])
        XCTAssertEqual(report.bugs[0].cells, ["signInAfterMove @ security-key@chrome-desktop"])
        XCTAssertTrue(report.table.contains("CXF 1.0 §Passkey"), report.table)
    }
}
