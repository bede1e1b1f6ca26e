import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import Vault

/// The event log's buffer: a scheduled flush takes the batch and serializes it outside the vault's lock, while
/// ceremonies append to a new array; a reader's flush meanwhile writes every event once.
final class EventBufferTests: XCTestCase {
    func append(_ vault: Vault, _ n: Int) throws {
        try vault.appendEvent(kind: "test", outcome: "success", reason: "success", detail: .object([("n", .number(Double(n)))]), at: Date())
    }

    func taken(_ vault: Vault) -> [Int] {
        vault.connection.enter()
        defer { vault.connection.leave() }
        return vault.events.take().map(\.sequence)
    }

    func logged(_ vault: Vault) throws -> [Int] {
        try vault.events(kind: "test").map { Int($0.detail["n"]?.numberValue ?? -1) }
    }

    func testAReaderSeesTakenEventsOnceAndAFailedTakeIsTakenAgain() throws {
        let (vault, _) = try makeTestVault()
        defer { vault.close() }
        for n in 0..<3 { try append(vault, n) }
        // A scheduled flush has taken them and is serializing them; ceremonies append meanwhile.
        XCTAssertEqual(taken(vault).count, 3)
        for n in 3..<5 { try append(vault, n) }
        // A reader flushes: the taken events and the new ones, in order, once each.
        XCTAssertEqual(try logged(vault), [0, 1, 2, 3, 4])
        try vault.flushEvents()
        XCTAssertEqual(try logged(vault), [0, 1, 2, 3, 4])
        XCTAssertTrue(vault.events.isEmpty)
        // A flush that took events and never wrote them (its insert failed): the next take has them again.
        try append(vault, 5)
        XCTAssertEqual(taken(vault).count, 1)
        try append(vault, 6)
        XCTAssertEqual(taken(vault).count, 2)
        XCTAssertEqual(try logged(vault), [0, 1, 2, 3, 4, 5, 6])
    }
}
