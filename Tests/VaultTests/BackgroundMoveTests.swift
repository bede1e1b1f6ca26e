import CSQLite
import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// A held vault moves a full batch of staged registrations on a thread of its own, off the lock (`Vault.startMove`),
/// and writes a batch of events off the lock too (`Connection.offLock`): registrations of new accounts and their
/// events go on beside that work, anything that runs a statement waits for it, and a crash or a failure in the middle
/// of it loses nothing.
final class BackgroundMoveTests: XCTestCase {
    let key = Array(repeating: UInt8(7), count: 32)
    let signing = try! SigningKeys.generate(.es256)

    func record(_ n: Int, user: Int? = nil) -> PasskeyRecord {
        let u = user ?? n
        return PasskeyRecord(credentialID: SecureRandom.bytes(16), rpID: "example.com", userHandle: Array("user-\(u)".utf8),
                             userName: "user\(u)@example.com", displayName: "User \(u)", algorithm: .es256,
                             publicKey: signing.publicKey, createdAt: Date(vaultMillis: 1_800_000_000_000 + Int64(n)))
    }

    /// A gate the next work off the lock (a move, a batch of events) waits at, on its own thread, before its first
    /// statement; `open` lets it through, or fails it with `failure`. Later work (the delayed move of what was staged
    /// beside it) passes.
    final class Gate: @unchecked Sendable {
        private let reached = DispatchSemaphore(value: 0)
        private let released = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var failure: VaultError?
        private var armed = true
        private var timedOut = false
        /// How long work waits at the gate before it fails on its own: a test that never opens it fails, not hangs.
        static let patience: TimeInterval = 300

        func install(on vault: Vault) throws {
            try vault.locked { () throws(VaultError) in
                vault.connection.offLockGate = { [self] () throws(VaultError) in
                    lock.lock()
                    let first = armed
                    armed = false
                    lock.unlock()
                    guard first else { return }
                    reached.signal()
                    let opened = released.wait(timeout: .now() + Gate.patience) == .success
                    lock.lock()
                    defer { lock.unlock() }
                    guard opened else {
                        timedOut = true
                        throw VaultError(.storage, "the gate was not opened within \(Gate.patience) s")
                    }
                    if let failure { throw failure }
                }
            }
        }

        /// Waits until a move is held at the gate.
        func awaitMove(file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(reached.wait(timeout: .now() + 30), .success, "no move started", file: file, line: line)
        }

        /// Lets the work through, or fails it with `failing`; fails the test if it had stopped waiting.
        func open(failing: VaultError? = nil, file: StaticString = #filePath, line: UInt = #line) {
            lock.lock()
            failure = failing
            let late = timedOut
            lock.unlock()
            XCTAssertFalse(late, "the work at the gate gave up waiting: something before `open` waited for it", file: file, line: line)
            released.signal()
        }
    }

    /// Registers `count` new accounts from `first` on: the last one of a full batch starts the move.
    func register(_ vault: Vault, _ first: Int, _ count: Int) throws -> [PasskeyRecord] {
        let records = (first..<first + count).map { record($0) }
        for r in records { _ = try vault.insertPasskey(r, privateKey: signing.pkcs8, prior: .shadowed) }
        return records
    }

    /// Registers `count` new accounts from `first` on beside work off the lock, each one the account filter calls
    /// new. A false "maybe" of the filter (a few in a million checks near a full layer: the 20,480 registrations of
    /// `testRegistrationsBesideAMoveStopAtFourBatchesAndTheNextWaitsForIt` met one in about 30 runs) rightly runs a
    /// statement, so it would wait for the held work and the test would wait for it: such a draw is replaced by
    /// another account.
    func registerBeside(_ vault: Vault, _ first: Int, _ count: Int) throws -> [PasskeyRecord] {
        var records: [PasskeyRecord] = []
        for n in first..<first + count {
            var next = record(n)
            var draw = 0
            while !filterCallsNew(vault, next) {
                draw += 1
                next = record(n, user: n + draw * 10_000_000)
            }
            _ = try vault.insertPasskey(next, privateKey: signing.pkcs8, prior: .shadowed)
            records.append(next)
        }
        return records
    }

    /// Whether the account filter says the vault holds neither the record's credential ID nor its account.
    func filterCallsNew(_ vault: Vault, _ record: PasskeyRecord) -> Bool {
        vault.connection.lock.lock()
        defer { vault.connection.lock.unlock() }
        return !vault.mayHoldCredential(record.credentialID) && !vault.mayHoldHandle(rpID: record.rpID, userHandle: record.userHandle)
    }

    /// A vault this process holds, and its directory (removed when the last reference goes: keep it).
    func held() throws -> (Vault, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        return (try Vault.open(path: directory.file("vault.db"), key: .raw(key), exclusive: true), directory)
    }

    /// A held vault whose first batch is being moved, the move held at a gate; the batch's records. The move takes
    /// the full batch, or on a slow run (TSan) what was staged when the first registration's delay passed, the rest
    /// staged beside it.
    func heldMove() throws -> (Vault, TemporaryDirectory, Gate, [PasskeyRecord]) {
        let (vault, directory) = try held()
        let gate = Gate()
        try gate.install(on: vault)
        let batch = try register(vault, 0, Vault.stagedLimit)
        gate.awaitMove()
        return (vault, directory, gate, batch)
    }

    /// The registrations staged and not yet taken by a move.
    func waiting(_ vault: Vault) -> Int {
        vault.connection.lock.lock()
        defer { vault.connection.lock.unlock() }
        return vault.connection.staged.waiting
    }

    func moving(_ vault: Vault) -> Bool {
        vault.connection.lock.lock()
        defer { vault.connection.lock.unlock() }
        return vault.connection.busyOffLock
    }

    /// Runs `body` on another thread; the expectation is fulfilled when it returns.
    func inBackground(_ name: String, _ body: @escaping @Sendable () -> Void) -> XCTestExpectation {
        let done = expectation(description: name)
        nonisolated(unsafe) let fulfil = done
        Thread.detachNewThread {
            body()
            fulfil.fulfill()
        }
        return done
    }

    func testRegistrationsOfNewAccountsGoOnBesideAMoveAndReadsWaitForItsCommit() throws {
        let (vault, directory, gate, batch) = try heldMove()
        defer { vault.close() }
        XCTAssertTrue(moving(vault))
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.file("vault.db-staged-moving")), "the batch's log, renamed")
        // The move is held: registrations of new accounts, their events and their findings' counts run no statement.
        let beside = try registerBeside(vault, Vault.stagedLimit, 50)
        try vault.appendEvent(kind: "create", outcome: "success", reason: "success", detail: .object([]), at: Date())
        XCTAssertEqual(try vault.countAccountPasskeys(rpID: "example.com", userHandle: [1, 2, 3], userName: "nobody", excluding: []), 0)
        XCTAssertTrue(moving(vault), "nothing waited for the move")
        // A read by ID runs a statement when the mirror lacks the ID: it waits for the move's commit, then finds both
        // the moved batch and the registrations staged beside it.
        let probe = batch[17], late = beside[3]
        let unknown = SecureRandom.bytes(16)
        let reads = LockedBox<[PasskeyRecord?]>([])
        let read = inBackground("a read") {
            reads.set([unknown, probe.credentialID, late.credentialID].map { id in (try? vault.passkey(id: id)) ?? nil })
        }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(reads.get().count, 0, "the read waits for the move")
        gate.open()
        wait(for: [read], timeout: 30)
        XCTAssertEqual(reads.get(), [nil, probe, late])
        // The batch moved; the 50 wait for the next move (the delayed one, 0.5 s after the first, may have run: the
        // count waits for any work off the lock, the event's batch too).
        let moved = rawRowCount(vault, "passkeys")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("vault.db-staged-moving")), "removed once committed")
        XCTAssertTrue([Vault.stagedLimit, Vault.stagedLimit + 50].contains(moved), "\(moved)")
        XCTAssertEqual(stagedInFile(vault), Vault.stagedLimit + 50 - moved)
        XCTAssertEqual(Set(try vault.allPasskeys().map(\.credentialID)), Set((batch + beside).map(\.credentialID)))
    }

    func testAStatementBesideAMoveIsRefusedAndAKnownAccountsRegistrationWaitsForIt() throws {
        let (vault, directory) = try held()
        defer { vault.close(); withExtendedLifetime(directory) {} }
        let first = record(0, user: 99_999)
        _ = try vault.insertPasskey(first, privateKey: signing.pkcs8, prior: .shadowed)
        XCTAssertEqual(try vault.allPasskeys().count, 1)  // moved
        let gate = Gate()
        try gate.install(on: vault)
        _ = try register(vault, 1, Vault.stagedLimit)
        gate.awaitMove()
        // Holding the lock is not enough to run a statement while the move owns the connection.
        vault.connection.lock.lock()
        XCTAssertThrowsError(try vault.db.query("SELECT 1")) { error in
            XCTAssertEqual((error as? VaultError)?.code, .storage)
        }
        vault.connection.lock.unlock()
        // The account of `first` is known: shadowing it runs a statement, so the registration waits for the move.
        let second = record(9999, user: 99_999)
        let shadowed = LockedBox<[ChangedPasskey]?>(nil)
        let pkcs8 = signing.pkcs8
        let registration = inBackground("a known account's registration") {
            shadowed.set(try? vault.insertPasskey(second, privateKey: pkcs8, prior: .shadowed))
        }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertNil(shadowed.get(), "it waits for the move")
        gate.open()
        wait(for: [registration], timeout: 30)
        XCTAssertEqual(shadowed.get()?.map(\.credentialID), [first.credentialID])
        XCTAssertEqual(try vault.passkey(id: first.credentialID, includeShadowed: true)?.shadowedBy, second.credentialID)
    }

    func testACrashDuringAMoveLeavesTwoLogsAndTheNextOpenMovesBothInOrder() throws {
        let (vault, directory, gate, batch) = try heldMove()
        // Beside the move: three new accounts, in the new log.
        let beside = try registerBeside(vault, Vault.stagedLimit, 3)
        // The files as a kill right now would leave them: the batch in the moving log, the rest in the new one.
        let copy = TemporaryDirectory()
        for name in ["vault.db", "vault.db-wal", "vault.db-staged", "vault.db-staged-moving"] {
            try FileManager.default.copyItem(atPath: directory.file(name), toPath: copy.file(name))
        }
        gate.open()
        vault.close()
        let shared = try Vault.open(path: copy.file("vault.db"), key: .raw(key))
        XCTAssertEqual(Set(try shared.allPasskeys().map(\.credentialID)), Set((batch + beside).map(\.credentialID)))
        XCTAssertEqual(try shared.privateKey(for: beside[2].credentialID), signing.pkcs8)
        shared.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy.file("vault.db-staged-moving")), "a shared open leaves the files")
        let holder = try Vault.open(path: copy.file("vault.db"), key: .raw(key), exclusive: true)
        XCTAssertEqual(try holder.allPasskeys().count, Vault.stagedLimit + 3, "nothing moved twice")
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy.file("vault.db-staged-moving")), "the holder removes it")
        holder.close()
    }

    func testAFailedMoveLeavesEveryRecordAndTheNextOperationMovesThemUnderTheLock() throws {
        let (vault, directory, gate, batch) = try heldMove()
        defer { vault.close() }
        let beside = try registerBeside(vault, Vault.stagedLimit, 2)
        gate.open(failing: VaultError(.storage, "disk I/O error (a test's)"))
        let deadline = Date().addingTimeInterval(30)
        while moving(vault) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        // Nothing of the failed move landed (the delayed move of the two, under the lock, may have moved all since).
        XCTAssertTrue([0, Vault.stagedLimit + 2].contains(rawRowCount(vault, "passkeys")), "\(rawRowCount(vault, "passkeys"))")
        // Still found by ID from the mirror, and moved, both logs, by the next statement on passkeys.
        XCTAssertEqual(try vault.passkey(id: batch[5].credentialID), batch[5])
        XCTAssertEqual(Set(try vault.allPasskeys().map(\.credentialID)), Set((batch + beside).map(\.credentialID)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("vault.db-staged-moving")))
        XCTAssertEqual(stagedInFile(vault), 0)
    }

    func testManyThreadsRegisteringReadingAndDeletingAcrossMovesLoseNothing() throws {
        let (vault, directory) = try held()
        defer { vault.close(); withExtendedLifetime(directory) {} }
        let threads = 4, each = Vault.stagedLimit / 2 + 100
        let failures = LockedBox<[String]>([])
        let kept = LockedBox<[[UInt8]]>([])
        let pkcs8 = signing.pkcs8
        let done = (0..<threads).map { t in
            let records = (0..<each).map { record(t * 100_000 + $0) }
            return inBackground("thread \(t)") {
                var mine: [[UInt8]] = []
                for (i, r) in records.enumerated() {
                    do {
                        _ = try vault.insertPasskey(r, privateKey: pkcs8, prior: .shadowed)
                        if i % 97 == 0 {
                            guard try vault.passkey(id: r.credentialID) == r else { throw VaultError(.storage, "read back differs") }
                        }
                        if i % 211 == 0 {
                            guard try vault.removePasskey(credentialID: r.credentialID) else { throw VaultError(.storage, "not removed") }
                        } else {
                            mine.append(r.credentialID)
                        }
                    } catch {
                        failures.update { $0.append("\(t)/\(i): \(error)") }
                        return
                    }
                }
                kept.update { $0 += mine }
            }
        }
        wait(for: done, timeout: 300)
        XCTAssertEqual(failures.get(), [])
        XCTAssertEqual(Set(try vault.allPasskeys().map(\.credentialID)), Set(kept.get()))
    }

    func testRegistrationsBesideAMoveStopAtFourBatchesAndTheNextWaitsForIt() throws {
        let (vault, directory, gate, batch) = try heldMove()
        defer { vault.close(); withExtendedLifetime(directory) {} }
        // On a slow run (TSan) the first batch's delay can pass before its last registration: the move then took
        // fewer, and the rest are staged beside it already.
        let early = waiting(vault)
        let beside = try registerBeside(vault, Vault.stagedLimit, Vault.stagedBesideLimit - early)
        XCTAssertEqual(waiting(vault), Vault.stagedBesideLimit)
        XCTAssertTrue(moving(vault), "four batches went on beside the move")
        let next = record(Vault.stagedLimit + Vault.stagedBesideLimit)
        let pkcs8 = signing.pkcs8
        let registered = LockedBox(false)
        let registration = inBackground("one past the limit") {
            registered.set((try? vault.insertPasskey(next, privateKey: pkcs8, prior: .shadowed)) != nil)
        }
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertFalse(registered.get(), "it waits for the move")
        gate.open()
        wait(for: [registration], timeout: 60)
        XCTAssertTrue(registered.get())
        XCTAssertEqual(try vault.allPasskeys().count, batch.count + beside.count + 1)
    }

    func testAnEventBatchIsWrittenOffTheLockWhileRegistrationsGoOnAndAFailedOneIsWrittenByTheNext() throws {
        let (vault, directory) = try held()
        defer { vault.close(); withExtendedLifetime(directory) {} }
        func append(_ n: Int) throws {
            try vault.appendEvent(kind: "test", outcome: "success", reason: "success", detail: .object([("n", .number(Double(n)))]), at: Date())
        }
        for (round, failing) in [(0, VaultError?.none), (1, VaultError(.storage, "disk I/O error (a test's)"))] {
            let gate = Gate()
            try gate.install(on: vault)
            try append(round * 10)  // the scheduled batch (20 ms later) takes it off the lock, to the gate
            gate.awaitMove()
            XCTAssertTrue(moving(vault))
            // Beside the batch: a registration and another event run no statement.
            _ = try registerBeside(vault, round * 10, 1)
            try append(round * 10 + 1)
            XCTAssertTrue(moving(vault), "nothing waited for the batch")
            // A read of the log runs statements: it waits for the batch, then sees every event once, in order.
            let seen = LockedBox<[Int]>([])
            let read = inBackground("a read of the log") {
                let numbers = ((try? vault.events(kind: "test")) ?? []).compactMap { event -> Int? in
                    if case .object(let fields) = event.detail, case .number(let n)? = fields.first(where: { $0.0 == "n" })?.1 { return Int(n) }
                    return nil
                }
                seen.set(numbers)
            }
            Thread.sleep(forTimeInterval: 0.2)
            XCTAssertEqual(seen.get(), [], "the read waits for the batch")
            gate.open(failing: failing)
            wait(for: [read], timeout: 30)
            // A failed batch stays in the buffer, and the read's own flush writes it.
            XCTAssertEqual(seen.get(), (0...round).flatMap { [$0 * 10, $0 * 10 + 1] }, "round \(round)")
        }
    }
    /// Two passkeys moved into `passkeys`, the first read by ID (so kept in memory), and a batch of events held at
    /// the gate off the lock.
    func heldEventBatch() throws -> (Vault, TemporaryDirectory, Gate, PasskeyRecord, PasskeyRecord) {
        let (vault, directory) = try held()
        let known = record(1), other = record(2)
        for r in [known, other] { _ = try vault.insertPasskey(r, privateKey: signing.pkcs8, prior: .shadowed) }
        XCTAssertEqual(try vault.allPasskeys().count, 2)  // a statement on passkeys: both moved
        XCTAssertEqual(try vault.passkey(id: known.credentialID), known)
        let gate = Gate()
        try gate.install(on: vault)
        try vault.appendEvent(kind: "test", outcome: "success", reason: "success", detail: .object([]), at: Date())
        gate.awaitMove()
        XCTAssertTrue(moving(vault))
        return (vault, directory, gate, known, other)
    }

    func testAnAssertionInMemoryGoesOnBesideAnEventBatchAndOneThatNeedsAStatementRunsAgainAfterIt() throws {
        let (vault, directory, gate, known, other) = try heldEventBatch()
        defer { vault.close(); withExtendedLifetime(directory) {} }
        // Its passkey kept in memory and its use deferred: no statement, so it runs once, beside the batch.
        var runs = 0
        let found = try vault.atomically(besideWork: true) { () throws -> PasskeyRecord? in
            runs += 1
            let found = try vault.passkey(id: known.credentialID)
            try vault.recordAssertion(credentialID: known.credentialID, signCount: 0, at: Date(vaultMillis: 1_900_000_000_000), deferred: true)
            return found
        }
        XCTAssertEqual(found, known)
        XCTAssertEqual(runs, 1)
        let seen = try vault.atomically(besideWork: true) { try vault.passkey(id: known.credentialID) }
        XCTAssertEqual(seen?.lastUsedAt, Date(vaultMillis: 1_900_000_000_000), "the use is seen at once")
        let nested = try vault.atomically(besideWork: true) { try vault.atomically(besideWork: true) { try vault.passkey(id: known.credentialID) } }
        XCTAssertEqual(nested?.credentialID, known.credentialID, "nested inside an operation beside the work")
        XCTAssertTrue(moving(vault), "nothing waited for the batch")
        // A passkey read in SQL: the read is refused beside the batch, before anything of the body was done, and the
        // body runs again once the batch is written.
        let attempts = LockedBox(0)
        let result = LockedBox<PasskeyRecord?>(nil)
        let read = inBackground("an assertion that reads in SQL") {
            result.set(try? vault.atomically(besideWork: true) { () throws -> PasskeyRecord? in
                attempts.update { $0 += 1 }
                return try vault.passkey(id: other.credentialID)
            })
        }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(attempts.get(), 1, "refused once, then waiting for the batch")
        XCTAssertNil(result.get())
        gate.open()
        wait(for: [read], timeout: 30)
        XCTAssertEqual(result.get(), other)
        XCTAssertEqual(attempts.get(), 2)
    }

    /// A passkey moved into `passkeys`, an assertion's deferred use (at 1_900_000_000_000) and event, and the batch
    /// that writes them held at the gate off the lock (it once stayed under it).
    func heldUseBatch() throws -> (Vault, TemporaryDirectory, Gate, PasskeyRecord) {
        let (vault, directory) = try held()
        let known = record(1)
        _ = try vault.insertPasskey(known, privateKey: signing.pkcs8, prior: .shadowed)
        XCTAssertEqual(try vault.allPasskeys().count, 1)
        let gate = Gate()
        try gate.install(on: vault)
        try vault.recordAssertion(credentialID: known.credentialID, signCount: 0, at: Date(vaultMillis: 1_900_000_000_000), deferred: true)
        try vault.appendEvent(kind: "test", outcome: "success", reason: "success", detail: .object([]), at: Date())
        gate.awaitMove()
        XCTAssertTrue(moving(vault))
        return (vault, directory, gate, known)
    }

    func testABatchOfEventsWithLastUsesIsWrittenOffTheLockAndTheUsesUnderTheLockAfterIt() throws {
        let (vault, directory, gate, known) = try heldUseBatch()
        defer { vault.close(); withExtendedLifetime(directory) {} }
        // A later use beside it waits for nothing, and is written with the first batch's uses.
        try vault.recordAssertion(credentialID: known.credentialID, signCount: 0, at: Date(vaultMillis: 1_900_000_000_500), deferred: true)
        XCTAssertTrue(moving(vault), "the use waited for nothing")
        XCTAssertEqual(rawLastUsed(vault, known.credentialID, waiting: false), .some(nil), "not yet written")
        gate.open()
        XCTAssertEqual(rawLastUsed(vault, known.credentialID), 1_900_000_000_500, "written under the lock after the batch, by the same flush")
        XCTAssertEqual(try vault.events(kind: "test").count, 1)
    }

    func testLastUsesAFlushLeavesBesideTheMoveItsBatchStartedAreWrittenByAFlushOfTheirOwn() throws {
        let (vault, directory, gate, known) = try heldUseBatch()
        defer { vault.close(); withExtendedLifetime(directory) {} }
        // A registration beside the batch, whose delay passes while the batch is held: its move waits for the batch's
        // end, which starts it; the flush then leaves its uses (it does not ask SQLite beside the move).
        _ = try registerBeside(vault, 100, 1)
        // Its delay (`stagedDelay`) passes: polled, since a slow run's timer may fire late.
        func wanted() -> Bool {
            vault.connection.lock.lock()
            defer { vault.connection.lock.unlock() }
            return vault.connection.moveWanted
        }
        let deadline = Date().addingTimeInterval(30)
        while !wanted() && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertTrue(wanted(), "the registration's move waits for the batch")
        gate.open()
        // No event, read or close follows: the uses are written all the same.
        XCTAssertEqual(rawLastUsed(vault, known.credentialID), 1_900_000_000_000, "written by a flush scheduled for them")
        XCTAssertEqual(try vault.allPasskeys().count, 2)
    }
}

/// A passkey's `last_used_at` in the file, read with SQLite's own API (the vault's `query` would write pending uses
/// first): nil when the passkey is missing, .some(nil) when it has none. `waiting`: once no work runs off the lock and
/// no use waits in memory; otherwise at once, holding the lock beside work held at a gate before its first statement.
func rawLastUsed(_ vault: Vault, _ id: [UInt8], waiting: Bool = true) -> Int64?? {
    func read(_ handle: OpaquePointer?) -> Int64?? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "SELECT last_used_at FROM passkeys WHERE credential_id = ?", -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        _ = id.withUnsafeBytes { sqlite3_bind_blob(statement, 1, $0.baseAddress, Int32(id.count), nil) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return .some(sqlite3_column_type(statement, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 0))
    }
    guard waiting else {
        vault.connection.lock.lock()
        defer { vault.connection.lock.unlock() }
        return read(vault.db.handle)
    }
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
        vault.connection.enter()
        let settled = vault.connection.events.pendingUses.isEmpty
        let value = settled ? read(vault.db.handle) : nil
        vault.connection.leave()
        if settled { return value }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return nil
}
