import CredemuEngine
import CredemuTestSupport
import Foundation
@testable import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// Removing an authenticator or a profile while its ceremonies are in flight (issue 31): what waits ends with
/// NotAllowedError, as a key pulled out mid-ceremony; nothing is written for the name afterwards, so a profile made
/// later under it starts empty; and nothing of it stays in memory.
final class AuthenticatorRemovalTests: XCTestCase {
    let origin = "https://example.com"
    let key = #"{"protocol":"ctap2","transport":"usb","hasResidentKey":true,"hasUserVerification":true,"isUserVerified":true}"#

    func makeOperations(held: Bool) throws -> (Operations, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault(held: held)
        return (try Operations(vault: vault, registry: try PolicyRegistry()), directory)
    }

    /// Runs `body` on another thread; the box gives its error (nil: it succeeded) once it ends.
    final class Outcome: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var error: OperationError?
        var other: (any Error)?
    }

    func inBackground(_ body: @escaping @Sendable () throws -> Void) -> Outcome {
        let outcome = Outcome()
        Thread.detachNewThread {
            do { try body() } catch let error as OperationError { outcome.error = error } catch { outcome.other = error }
            outcome.done.signal()
        }
        return outcome
    }

    func waitForHolding(_ ops: Operations, _ profile: String) {
        let end = Date().addingTimeInterval(10)
        while !ops.holds.all.contains(where: { $0.profile == profile && $0.state == .holding }) && Date() < end {
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    func testRemovingAnAuthenticatorFailsItsHeldCreateAndANewOneOfThatNameInheritsNothing() throws {
        for held in [false, true] {
            let (ops, _d) = try makeOperations(held: held)
            _ = _d
            let id = try ops.addVirtualAuthenticator(try JSONValue.parse(Array(key.utf8)))
            _ = try ops.armHold(id, timeoutMillis: 60_000)
            let request = CeremonyRequest(options: .text(creationOptionsJSON()), origin: origin)
            let create = inBackground { _ = try ops.create(.profile(id), request) }
            waitForHolding(ops, id)
            let started = Date()
            try ops.removeVirtualAuthenticator(id)
            XCTAssertEqual(create.done.wait(timeout: .now() + 10), .success, "the held create ends when its key is removed")
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, "not at the hold's 60 s timeout")
            XCTAssertNil(create.other)
            XCTAssertEqual(create.error?.name, .web(.notAllowedError), "a key pulled out mid-ceremony (held: \(held))")
            XCTAssertEqual(create.error?.ceremony?.reason, .authenticatorRemoved)
            XCTAssertEqual(ops.holds.all.first { $0.profile == id }?.state, .removed)

            // The attacker's follow-up: a new authenticator under the same name.
            _ = try ops.createProfile(id, settings: [("pack", "security-key")], allowPackPath: false)
            XCTAssertEqual(try ops.virtualCredentials(id), [], "no credential (and no private key) is inherited (held: \(held))")
            XCTAssertTrue(try ops.vault.scoped(to: id).events(limit: 100).allSatisfy { $0.kind == "setting" },
                          "nor the removed key's log")
            XCTAssertFalse(ops.holds.isArmed(profile: id), "nor its holds")
            XCTAssertEqual(ops.leases.count, 0)
        }
    }

    func testRemovingAProfileEndsItsWaitingConditionalGetWithNotAllowedError() throws {
        let (ops, _d) = try makeOperations(held: true)
        _ = _d
        ops.conditionalGetsWait = true
        _ = try ops.createProfile("office", settings: [("pack", "gpm")], allowPackPath: false)
        _ = try ops.create(.profile("office"), CeremonyRequest(options: .text(creationOptionsJSON()), origin: origin))
        var conditional = CeremonyRequest(options: .text(requestOptionsJSON()), origin: origin)
        conditional.mediation = "conditional"
        let request = conditional
        let get = inBackground { _ = try ops.get(.profile("office"), request) }
        let end = Date().addingTimeInterval(10)
        while (try? ops.offers(.profile("office"))["offers"]?.arrayValue?.isEmpty) ?? true, Date() < end {
            Thread.sleep(forTimeInterval: 0.005)
        }
        try ops.removeProfile("office")
        XCTAssertEqual(get.done.wait(timeout: .now() + 5), .success, "the dropdown closes with its profile")
        XCTAssertEqual(get.error?.name, .web(.notAllowedError))
        XCTAssertEqual(get.error?.ceremony?.reason, .authenticatorRemoved)
        XCTAssertEqual(ops.leases.count, 0)
    }

    func testARemovalWaitsOutAWriteInFlightAndRefusesLaterOnesOfTheName() throws {
        let (ops, _d) = try makeOperations(held: true)
        _ = _d
        _ = try ops.createProfile("office", settings: [("pack", "gpm")], allowPackPath: false)
        let lease = try ops.lease(.profile("office"))
        XCTAssertTrue(ops.leases.involve(lease, profile: "office"))
        let writing = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let write = inBackground {
            _ = try ops.leases.act(lease) { () throws(OperationError) in
                writing.signal()
                finish.wait()
                _ = try ops.savePassword("office", origin: "https://example.com", username: "alice", password: "pw")
            }
        }
        writing.wait()
        let removal = inBackground { try ops.removeProfile("office") }
        XCTAssertEqual(removal.done.wait(timeout: .now() + 0.3), .timedOut, "the removal waits for the write in flight")
        finish.signal()
        XCTAssertEqual(write.done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(removal.done.wait(timeout: .now() + 5), .success)
        XCTAssertNil(removal.error)
        ops.leases.end(lease)
        _ = try ops.createProfile("office", settings: [("pack", "gpm")], allowPackPath: false)
        XCTAssertEqual(try ops.listPasswords("office"), [], "the write in flight was deleted with its profile")
        // A lease begun before a removal of its profile is refused at its next step.
        let stale = try ops.lease(.profile("office"))
        try ops.removeProfile("office")
        _ = try ops.createProfile("office", settings: [("pack", "gpm")], allowPackPath: false)
        XCTAssertFalse(ops.leases.involve(stale, profile: "office"), "the name was removed since the lease began")
        XCTAssertNil(ops.leases.act(stale) { 1 })
        ops.leases.end(stale)
    }

    func testAuthenticatorsMadeUsedAndRemovedLeaveNothingBehindInMemory() throws {
        let (ops, _d) = try makeOperations(held: true)
        _ = _d
        let config = try JSONValue.parse(Array(key.utf8))
        func remembered() -> Int { ops.vault.rememberedProfileCount }
        let before = remembered()
        for _ in 0..<200 {
            let id = try ops.addVirtualAuthenticator(config)
            _ = try ops.create(.profile(id), CeremonyRequest(options: .text(creationOptionsJSON()), origin: origin))
            _ = try ops.get(.profile(id), CeremonyRequest(options: .text(requestOptionsJSON()), origin: origin))
            try ops.removeVirtualAuthenticator(id)
        }
        XCTAssertEqual(remembered(), before, "a removed profile's name stays in no per-profile set of the vault handle")
        XCTAssertEqual(ops.cachedEngineCount, 0)
        XCTAssertEqual(ops.leases.count, 0)
        XCTAssertTrue(ops.holds.all.isEmpty)
    }
}
