import CredemuEngine
import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuOperations

/// The ceremony board: each target (profile or device) has its own slots, a page its own across targets, and a
/// waiting conditional get whose client goes frees its slot.
final class CeremonyBoardTests: XCTestCase {
    let page = "https://a.example"

    /// Begins `count` conditional gets on `target`; how many were registered.
    func begin(_ board: CeremonyBoard, _ target: CeremonyTarget, page: String?, count: Int) -> Int {
        (0..<count).count { _ in board.begin(target: target, id: nil, origin: page ?? "https://rp.example", page: page, conditional: true) != nil }
    }

    func testEachTargetHasItsOwnSlots() {
        let board = CeremonyBoard()
        XCTAssertEqual(begin(board, .profile("default"), page: nil, count: CeremonyBoard.maxWaitingPerTarget + 1), CeremonyBoard.maxWaitingPerTarget)
        XCTAssertEqual(begin(board, .profile("office"), page: nil, count: 1), 1, "another profile's conditional get is not pending on this one's")
        XCTAssertEqual(begin(board, .device("desk"), page: nil, count: 1), 1, "nor a device's")
        XCTAssertNotNil(board.begin(target: .profile("default"), id: "modal", origin: "https://rp.example", conditional: false), "a modal ceremony takes no slot")
    }

    func testAPageTakesAtMostItsSlotsAcrossTargetsAndLeavesTheRestToOthers() {
        let board = CeremonyBoard()
        let half = CeremonyBoard.maxWaitingPerPage / 2
        XCTAssertEqual(begin(board, .profile("default"), page: page, count: half), half)
        XCTAssertEqual(begin(board, .profile("office"), page: page, count: CeremonyBoard.maxWaitingPerPage), CeremonyBoard.maxWaitingPerPage - half)
        XCTAssertEqual(begin(board, .profile("default"), page: "https://b.example", count: 1), 1, "another page keeps its slots")
        XCTAssertEqual(begin(board, .profile("default"), page: nil, count: 1), 1, "and so do callers without an origin")
    }

    func testTheServersSlotsAreBoundedInAll() {
        let board = CeremonyBoard()
        let targets = CeremonyBoard.maxWaiting / CeremonyBoard.maxWaitingPerTarget
        for n in 0..<targets { XCTAssertEqual(begin(board, .profile("p\(n)"), page: nil, count: CeremonyBoard.maxWaitingPerTarget), CeremonyBoard.maxWaitingPerTarget) }
        XCTAssertEqual(begin(board, .profile("fresh"), page: nil, count: 1), 0)
    }

    func testAWaitWhoseClientGoesEndsAbandonedAndItsSlotIsFreedWhenItAnswers() throws {
        let board = CeremonyBoard()
        XCTAssertEqual(begin(board, .profile("default"), page: page, count: CeremonyBoard.maxWaitingPerPage - 1), CeremonyBoard.maxWaitingPerPage - 1)
        let id = try XCTUnwrap(board.begin(target: .profile("default"), id: "left", origin: page, page: page, conditional: true))
        XCTAssertEqual(begin(board, .profile("office"), page: page, count: 1), 0, "the page's slots are taken")
        let gone = Flag()
        let ended = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var ending: CeremonyBoard.Ending?
        Thread.detachNewThread {
            ending = board.wait(target: .profile("default"), id: id, cancellation: Cancellation(clientGone: { gone.isSet }))
            board.finish(target: .profile("default"), id: id)
            ended.signal()
        }
        XCTAssertEqual(ended.wait(timeout: .now() + 0.3), .timedOut, "it waits while its client is there")
        gone.set()
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(ending, .abandoned)
        XCTAssertEqual(begin(board, .profile("office"), page: page, count: 1), 1, "the slot is the page's again")
    }

    /// Through the operations layer: a conditional get whose client goes ends with an AbortError, logged, and the
    /// page's next conditional get waits again.
    func testAConditionalGetWhoseClientGoesIsAbortedAndFreesItsSlot() throws {
        let (vault, directory) = try makeTestVault()
        _ = directory
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        ops.conditionalGetsWait = true
        let origin = "https://www.example.com"
        _ = try ops.create(.profile("default"), CeremonyRequest(options: .text(creationOptionsJSON()), origin: origin))
        for n in 0..<CeremonyBoard.maxWaitingPerPage - 1 {
            XCTAssertNotNil(ops.ceremonies.begin(target: .profile("default"), id: "other-\(n)", origin: origin, page: origin, conditional: true))
        }
        let gone = Flag()
        let ended = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: OperationError?
        Thread.detachNewThread {
            do {
                _ = try ops.get(.profile("default"), CeremonyRequest(options: .text(requestOptionsJSON()), mediation: "conditional", ceremony: "page",
                                                           restrictedTo: origin, clientGone: { gone.isSet }))
            } catch {
                failure = error as? OperationError
            }
            ended.signal()
        }
        let end = Date().addingTimeInterval(10)
        while ops.ceremonies.offers(target: .profile("default"), view: PageView(nil)).isEmpty && Date() < end { Thread.sleep(forTimeInterval: 0.005) }
        XCTAssertEqual(ops.ceremonies.offers(target: .profile("default"), view: PageView(nil)).count, 1, "its dropdown is open")
        XCTAssertNil(ops.ceremonies.begin(target: .profile("office"), id: nil, origin: origin, page: origin, conditional: true), "the page's slots are taken")
        gone.set()
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(failure?.name, .web(.abortError))
        XCTAssertEqual(failure?.ceremony?.reason, .aborted)
        XCTAssertNotNil(ops.ceremonies.begin(target: .profile("office"), id: nil, origin: origin, page: origin, conditional: true), "its slot is free")
        let logged = try vault.scoped(to: "default").events(kind: "get", allProfiles: false, after: 0, limit: 100).last
        XCTAssertEqual(logged?.outcome, "aborted")
        vault.close()
    }
}
