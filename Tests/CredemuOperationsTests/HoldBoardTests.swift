import CredemuEngine
import Foundation
import XCTest
@testable import CredemuOperations

/// The hold board: a ceremony's wait survives anything done to other holds meanwhile, holds are bounded per profile
/// and in all, and a wait ends when its client goes or the server stops.
final class HoldBoardTests: XCTestCase {
    /// A wait on another thread; `result` once it returned.
    final class Waiter: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private(set) var result: HoldBoard.Ending??

        init(_ board: HoldBoard, profile: String, cancellation: Cancellation = .never) {
            Thread.detachNewThread {
                self.result = .some(board.waitIfHeld(profile: profile, operation: "create", cancellation: cancellation))
                self.done.signal()
            }
        }

        func answered(within seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }
    }

    struct Refused: Error { var profile: String }

    func state(_ board: HoldBoard, _ id: String) -> HoldBoard.State? { board.all.first { $0.id == id }?.state }

    func waitUntilHolding(_ board: HoldBoard, _ id: String) {
        let end = Date().addingTimeInterval(10)
        while state(board, id) != .holding && Date() < end { Thread.sleep(forTimeInterval: 0.005) }
        XCTAssertEqual(state(board, id), .holding)
    }

    func arm(_ board: HoldBoard, _ profile: String, timeoutMillis: Int = 60_000) throws -> HoldBoard.Hold {
        guard case .hold(let hold) = board.arm(profile: profile, timeoutMillis: timeoutMillis) else { throw Refused(profile: profile) }
        return hold
    }

    /// The reproduction of issue 21: 64 finished holds before the waiting one, 10 more finished while it waits, a
    /// listing that prunes the oldest, then the wait times out. Kept by position, the hold was out of range.
    func testAWaitThatTimesOutAfterOthersWerePrunedEndsItsOwnHold() throws {
        let board = HoldBoard()
        for _ in 0..<64 { _ = board.release(id: try arm(board, "default").id, outcome: .proceed) }
        let others = try (0..<10).map { _ in try arm(board, "office") }
        let held = try arm(board, "default", timeoutMillis: 1500)
        let waiter = Waiter(board, profile: "default")
        waitUntilHolding(board, held.id)
        for other in others { _ = board.release(id: other.id, outcome: .cancel) }
        let listed = board.all
        XCTAssertEqual(listed.count(where: { $0.finishedAt != nil }), HoldBoard.maxFinished, "the listing pruned the oldest finished holds")
        XCTAssertEqual(listed.first { $0.id == held.id }?.state, .holding)
        XCTAssertTrue(waiter.answered(within: 10))
        XCTAssertEqual(waiter.result, .some(.timedOut))
        XCTAssertEqual(state(board, held.id), .expired)
        XCTAssertTrue(others.allSatisfy { other in [nil, .released].contains(state(board, other.id)) }, "no other hold was touched by the expiry")
    }

    func testAReleaseReachesTheWaitWhateverWasPrunedMeanwhile() throws {
        let board = HoldBoard()
        let held = try arm(board, "default")
        let waiter = Waiter(board, profile: "default")
        waitUntilHolding(board, held.id)
        for _ in 0..<(HoldBoard.maxFinished + 5) { _ = board.release(id: try arm(board, "office").id, outcome: .proceed) }
        _ = board.all
        _ = board.release(id: held.id, outcome: .proceed)
        XCTAssertTrue(waiter.answered(within: 10))
        XCTAssertEqual(waiter.result, .some(.proceed))
    }

    func testHoldsAreBoundedPerProfileAndOnTheServer() throws {
        let board = HoldBoard()
        for _ in 0..<HoldBoard.maxArmedPerProfile { _ = try arm(board, "default") }
        guard case .profileFull = board.arm(profile: "default", timeoutMillis: 1000) else { return XCTFail("a profile's holds are bounded") }
        _ = try arm(board, "office")
        for n in 1..<(HoldBoard.maxArmed / HoldBoard.maxArmedPerProfile) {
            for _ in 0..<HoldBoard.maxArmedPerProfile - (n == 1 ? 1 : 0) { _ = try arm(board, "p\(n)") }
        }
        guard case .boardFull = board.arm(profile: "fresh", timeoutMillis: 1000) else { return XCTFail("the server's holds are bounded") }
        _ = board.release(id: board.all.first { $0.profile == "default" }!.id, outcome: .cancel)
        XCTAssertNotNil(try arm(board, "fresh"), "a released hold frees its place")
    }

    func testAWaitWhoseClientGoesAbandonsItsHoldAndTheNextCeremonyDoesNotWait() throws {
        let board = HoldBoard()
        let gone = Flag()
        let held = try arm(board, "default")
        let waiter = Waiter(board, profile: "default", cancellation: Cancellation(clientGone: { gone.isSet }))
        waitUntilHolding(board, held.id)
        XCTAssertFalse(waiter.answered(within: 0.3), "the client is still there")
        gone.set()
        XCTAssertTrue(waiter.answered(within: 10))
        XCTAssertEqual(waiter.result, .some(.clientGone))
        XCTAssertEqual(state(board, held.id), .abandoned)
        XCTAssertNil(board.waitIfHeld(profile: "default", operation: "get", cancellation: .never))
    }

    func testStoppingEndsEveryWaitAndNoneBeginsAfter() throws {
        let board = HoldBoard()
        let stopping = StopSignal()
        let held = try arm(board, "default")
        _ = try arm(board, "default")
        let waiter = Waiter(board, profile: "default", cancellation: Cancellation(stopping: stopping))
        waitUntilHolding(board, held.id)
        stopping.set()
        board.releaseAll()
        XCTAssertTrue(waiter.answered(within: 10))
        XCTAssertEqual(waiter.result, .some(.cancel))
        XCTAssertFalse(board.isArmed(profile: "default"))
        XCTAssertNil(board.waitIfHeld(profile: "default", operation: "get", cancellation: .never))
    }
}
