import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import CredemuEngine
@testable import Vault

/// Issue 11, cost independent of size: what the engine runs against the vault is indexed, and the SQL paths that
/// replaced reading a whole RP into memory choose and change exactly what the old code did.
final class ScaleTests: XCTestCase {
    func userID(_ user: String = "alice@example.com") -> String { Base64URL.encode(Array(user.utf8)) }

    /// Statements a vault ran, from whichever thread (the event log's writer runs on another).
    final class StatementLog: @unchecked Sendable {
        private let lock = NSLock()
        private var seen = Set<String>()
        func add(_ sql: String) { lock.lock(); seen.insert(sql); lock.unlock() }
        var all: Set<String> { lock.lock(); defer { lock.unlock() }; return seen }
    }

    func observe(_ vault: Vault) -> StatementLog {
        let log = StatementLog()
        vault.connection.lock.lock()
        vault.db.observer = log.add
        vault.connection.lock.unlock()
        return log
    }

    func conditionalRequest(_ scenario: ProviderScenario, allow: [[UInt8]] = []) throws -> RequestOptions {
        let inner = try JSONValue.parse(requestOptionsJSON(rpID: scenario.rpID, allow: allow))
        return try RequestOptions(json: JSONValue.object([("publicKey", inner), ("mediation", "conditional")]).serialized())
    }

    /// Every ceremony, autofill, signal (each pack's action, scope and rate limit) and finding, with the statements
    /// they run recorded: each is one of `Vault.pathStatements`, and its plan reads no table whole.
    func testEveryStatementTheEngineRunsIsAListedIndexedOne() throws {
        var ran = Set<String>()
        for held in [false, true] {
            for (pack, platform) in Self.packs {
                let s = try ProviderScenario(pack: pack, platform: platform, held: held)
                let log = observe(s.vault)
                _ = try runEverything(s)
                try s.vault.flushEvents()
                ran.formUnion(log.all)
            }
        }
        let listed = Set(Vault.pathStatements.values).union(Vault.controlStatements)
        let (vault, _) = try makeTestVault()
        for sql in ran.sorted() {
            XCTAssertTrue(listed.contains(sql), "not in Vault.pathStatements: \(sql)")
            var lines: [String] = []
            try vault.locked { () throws(VaultError) in
                if !Vault.controlStatements.contains(sql) { try vault.db.query("EXPLAIN QUERY PLAN " + sql) { lines.append($0.text(3)) } }
            }
            let tables = ["passkeys", "events", "event_marks", "passwords", "user_decisions", "signal_quota", "staged_passkeys"]
            let scans = lines.filter { line in tables.contains { line == "SCAN \($0)" || line.hasPrefix("SCAN \($0) ") } || line.contains("TEMP B-TREE") }
            XCTAssertEqual(scans, [], sql)
        }
        // The paths this test is about did run.
        for name in ["offered", "hideUnlisted", "restoreListed", "deleteUnlisted", "firstUserPasskey", "renameUser", "renameUserNameOnly",
                     "countUsedUnlisted", "otherDisplayName", "mark", "markedKeys", "upsertMark", "countHandle", "countName", "countHandleAndName", "shadowPrior",
                     "nextDecision", "moveStaged", "stagedMark", "setStagedMark"] {
            XCTAssertTrue(ran.contains(Vault.pathStatements[name]!), "\(name) never ran")
        }
    }

    /// A held vault stages its registrations (`Vault+Staging`): every ceremony, signal and finding comes out as on a
    /// shared vault, outcome by outcome, and leaves the same passkeys.
    func testAHeldVaultAnswersEveryCeremonyAsASharedOne() throws {
        for (pack, platform) in Self.packs {
            var runs: [[String]] = []
            for held in [false, true] {
                let s = try ProviderScenario(pack: pack, platform: platform, held: held)
                let outcomes = try runEverything(s)
                let vault = s.vault.scoped(to: "user")
                let events = try vault.events(limit: 10_000).map { "\($0.kind) \($0.outcome) \($0.reason) \($0.detail["signal"]?.stringValue ?? "")" }
                let passkeys = try vault.allPasskeys().map { "\($0.userName) \($0.displayName) hidden=\($0.hidden) count=\($0.signCount) used=\($0.lastUsedAt != nil)" }
                runs.append(outcomes + events + passkeys.sorted())
                if held {
                    XCTAssertTrue(s.vault.connection.staged.isEmpty, "listing the passkeys moved the staged ones")
                    XCTAssertNotNil(s.vault.connection.accounts, "no write of the engine's drops the account filter")
                }
            }
            XCTAssertEqual(runs[0], runs[1], "\(pack) \(platform?.rawValue ?? "")")
            XCTAssertGreaterThan(runs[0].count, 40)
        }
    }

    static let packs: [(String, Platform?)] = [("gpm", nil), ("gpm", .android), ("gpm-pre-m144", nil), ("apple", nil),
                                               ("generic-third-party", nil), ("bitwarden", nil)]

    /// Every ceremony, autofill, signal and finding once; what each returned or the reason it failed.
    func runEverything(_ s: ProviderScenario) throws -> [String] {
        var outcomes: [String] = []
        func note(_ failure: CeremonyError?) { outcomes.append(failure.map { "\($0.reason)" } ?? "ok") }
        let engine = s.engine()
        let caller = try Caller(origin: s.origin)
        try s.savePassword()
        try s.savePassword("bob@example.com")
        try s.autofillAndSignIn()
        note(s.failure { try engine.autofill(origin: s.origin, username: "nobody") })
        try engine.markPasswordUsed(origin: s.origin, username: "alice@example.com")
        note(s.failure { try s.conditionalCreate() })
        s.advance(1)  // creation times apart: ties in the offer's order would fall to the random IDs
        note(s.failure { try s.conditionalCreate(user: "bob@example.com") })
        s.advance(1)
        note(s.failure { try s.conditionalCreate() })
        s.advance(1)
        let alice = try s.modalCreate(userID: Array("alice@example.com".utf8))
        s.advance(1)
        note(s.failure { try s.modalCreate(userID: Array("alice@example.com".utf8)) })
        s.advance(1)
        note(s.failure { try s.modalCreate(userID: Array("alice@example.com".utf8), exclude: [alice.credentialID, [1, 2, 3]]) })
        s.advance(1)
        let bob = try s.modalCreate(user: "bob@example.com", userID: Array("bob@example.com".utf8))
        s.advance(1)
        _ = try s.signIn()
        _ = try s.signIn(allow: [alice.credentialID, bob.credentialID])
        try engine.queue(.pick(Pick(bob.credentialID)))
        _ = try s.signIn()
        try engine.queue(.cancel)
        note(s.failure { try s.signIn() })
        // Bob's: alice's first modal passkey is shadowed by her second where the pack shadows (GPM), and a pick of it fails.
        _ = try engine.get(try RequestOptions(json: requestOptionsJSON(rpID: s.rpID)), caller: caller, pick: Pick(bob.credentialID))
        note(s.failure { try engine.get(try RequestOptions(json: requestOptionsJSON(rpID: s.rpID)), caller: caller, pick: Pick(alice.credentialID)) })
        note(s.failure { try engine.get(try RequestOptions(json: requestOptionsJSON(rpID: s.rpID)), caller: caller, pick: Pick([9, 9, 9])) })
        _ = try engine.autofillOffer(try conditionalRequest(s), caller: caller)
        _ = try engine.autofillOffer(try conditionalRequest(s, allow: [bob.credentialID]), caller: caller)
        for _ in 0..<12 {
            note(s.failure { try s.signal(.currentUserDetails(rpId: s.rpID, userId: self.userID(), name: "alice2", displayName: "Alice Two")) })
        }
        s.advance(3600)
        note(s.failure { try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: self.userID(), allAcceptedCredentialIds: [])) })
        note(s.failure { try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: self.userID(), allAcceptedCredentialIds: [alice.credentialID.base64url])) })
        note(s.failure { try s.signal(.unknownCredential(rpId: s.rpID, credentialId: bob.credentialID.base64url)) })
        note(s.failure { try s.signal(.unknownCredential(rpId: s.rpID, credentialId: [7, 7, 7].base64url)) })
        note(s.failure { try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: self.userID("bob@example.com"),
                                                              allAcceptedCredentialIds: [bob.credentialID.base64url])) })
        outcomes += try Finding.list(s.vault.scoped(to: "user")).map(\.code)
        _ = try s.vault.scoped(to: "user").lastEventID(kind: "signal")
        return outcomes
    }

    // MARK: The same choices as reading the whole RP

    /// What the engine offered before issue 11: every passkey of the RP, in the vault's order (creation, then
    /// credential ID), the usable ones sorted most recently used first, ties in that order.
    static func oldOffer(_ all: [PasskeyRecord]) -> [PasskeyRecord] {
        all.filter { !$0.hidden && $0.settings.discoverable }.enumerated().sorted { x, y in
            let a = x.element, b = y.element
            let ka = (a.lastUsedAt ?? a.createdAt, a.createdAt), kb = (b.lastUsedAt ?? b.createdAt, b.createdAt)
            return ka != kb ? ka > kb : x.offset < y.offset
        }.map(\.element)
    }

    /// A random RP: a few users, coarse times (many ties), some hidden, some not discoverable, some used.
    func fill(_ vault: Vault, rpID: String, count: Int, users: Int, rng: inout SplitMix) throws -> [PasskeyRecord] {
        let key = try SigningKeys.generate(.es256)
        var records: [PasskeyRecord] = []
        for _ in 0..<count {
            let user = Int(rng.next() % UInt64(users))
            let created = Date(vaultMillis: 1_800_000_000_000 + Int64(rng.next() % 5) * 1000)
            var settings = PasskeySettings.syncedPasskey
            settings.discoverable = rng.next() % 6 != 0
            let record = PasskeyRecord(
                credentialID: (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, rpID: rpID,
                userHandle: Array("user\(user)@example.com".utf8), userName: "user\(user)@example.com", displayName: "User \(user)",
                algorithm: .es256, publicKey: key.publicKey, settings: settings, hidden: rng.next() % 4 == 0,
                hiddenAt: nil, createdAt: created,
                lastUsedAt: rng.next() % 2 == 0 ? created.addingTimeInterval(Double(rng.next() % 4)) : nil)
            try vault.insertPasskey(record, privateKey: key.pkcs8)
            records.append(record)
        }
        return records
    }

    func testADiscoverableGetAndItsDropdownChooseWhatReadingTheWholeRPChose() throws {
        var rng = SplitMix(seed: 11)
        for round in 0..<20 {
            let s = try ProviderScenario(pack: "generic-third-party")
            let vault = s.vault.scoped(to: "user")
            _ = try fill(vault, rpID: s.rpID, count: round == 0 ? 250 : Int(rng.next() % 40), users: 5, rng: &rng)
            _ = try fill(vault, rpID: "other.example.com", count: 5, users: 2, rng: &rng)
            let expected = Self.oldOffer(try vault.passkeys(rpID: s.rpID, includeHidden: true))
            let engine = s.engine()
            let caller = try Caller(origin: s.origin)
            let offer = try engine.autofillOffer(try conditionalRequest(s), caller: caller).passkeys
            XCTAssertEqual(offer.map(\.credentialID), expected.prefix(Engine.offerLimit).map(\.credentialID), "round \(round)")
            if round == 0 { XCTAssertEqual(offer.count, Engine.offerLimit) }
            if let first = expected.first {
                let response = try engine.get(try RequestOptions(json: requestOptionsJSON(rpID: s.rpID)), caller: caller)
                XCTAssertEqual(response.credentialID, first.credentialID, "round \(round)")
            } else {
                XCTAssertEqual(s.failure { try s.signIn() }?.reason, .noCredential)
            }
            // A pick is looked up by its ID, beyond the dropdown's first hundred too; never a hidden or other RP's one.
            if let last = expected.last {
                let picked = try engine.get(try RequestOptions(json: requestOptionsJSON(rpID: s.rpID)), caller: caller, pick: Pick(last.credentialID))
                XCTAssertEqual(picked.credentialID, last.credentialID)
            }
            for record in try vault.passkeys(rpID: s.rpID, includeHidden: true) where record.hidden || !record.settings.discoverable {
                XCTAssertEqual(s.failure { try engine.get(try RequestOptions(json: requestOptionsJSON(rpID: s.rpID)), caller: caller, pick: Pick(record.credentialID)) }?.reason,
                               .noCredential)
            }
        }
    }

    /// The accepted-list and details signals as the code before issue 11 applied them to the RP's passkeys read
    /// in full: (credential ID, action) in the vault's order, and the findings' counts.
    static func oldSignal(_ all: [PasskeyRecord], _ request: SignalRequest, knobs: PolicyKnobs) -> (changes: [(String, String)], used: Int) {
        var changes: [(String, String)] = []
        switch request {
        case let .allAcceptedCredentials(_, userId, ids):
            let user = Base64URL.decode(userId)!
            let accepted = Set(ids.map { Base64URL.decode($0)! })
            let used = all.filter { $0.userHandle == user && !$0.hidden && $0.lastUsedAt != nil && !accepted.contains($0.credentialID) }.count
            var users = all.filter { $0.userHandle == user }
            if knobs.allAcceptedScope == .firstPasskey { users = Array(users.prefix(1)) }
            for passkey in users {
                let listed = accepted.contains(passkey.credentialID)
                switch knobs.allAcceptedCredentials {
                case .hideAndRestore:
                    if !listed && !passkey.hidden { changes.append((passkey.id, "hidden")) }
                    else if listed && passkey.hidden { changes.append((passkey.id, "restored")) }
                case .deleteMissing:
                    if !listed { changes.append((passkey.id, "deleted")) }
                case .ignore: break
                }
            }
            return (changes, used)
        case let .currentUserDetails(_, userId, name, displayName):
            let user = Base64URL.decode(userId)!
            for passkey in all where passkey.userHandle == user {
                let newDisplay = knobs.currentUserDetails == .nameOnly ? passkey.displayName : displayName
                guard passkey.userName != name || passkey.displayName != newDisplay else { continue }
                changes.append((passkey.id, knobs.currentUserDetails == .nameOnly ? "renamed (name only)" : "renamed"))
            }
            return (changes, 0)
        case .unknownCredential:
            return ([], 0)
        }
    }

    func testSignalsChangeWhatTheyChangedWhenTheWholeRPWasRead() throws {
        var rng = SplitMix(seed: 3)
        for pack in ["gpm", "gpm-pre-m144", "apple", "generic-third-party"] {
            let s = try ProviderScenario(pack: pack)
            let vault = s.vault.scoped(to: "user")
            let knobs = s.engine().knobs
            _ = try fill(vault, rpID: s.rpID, count: 60, users: 4, rng: &rng)
            _ = try fill(vault, rpID: "other.example.com", count: 10, users: 4, rng: &rng)
            for round in 0..<40 {
                s.advance(3600)  // past any rate limit
                let before = try vault.passkeys(rpID: s.rpID, includeHidden: true)
                let user = Int(rng.next() % 5)  // user4 holds nothing
                let userID = self.userID("user\(user)@example.com")
                let mine = before.filter { $0.userHandle == Array("user\(user)@example.com".utf8) }
                let request: SignalRequest
                if round % 3 == 2 {
                    request = .currentUserDetails(rpId: s.rpID, userId: userID, name: rng.next() % 2 == 0 ? "user\(user)@example.com" : "renamed\(round)",
                                                  displayName: rng.next() % 2 == 0 ? "User \(user)" : "Display \(round)")
                } else {
                    var ids = mine.filter { _ in rng.next() % 3 != 0 }.map(\.id)
                    if rng.next() % 2 == 0 { ids.append(Base64URL.encode((0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) })) }
                    if let other = before.first(where: { $0.userHandle != mine.first?.userHandle }), rng.next() % 2 == 0 { ids.append(other.id) }
                    request = .allAcceptedCredentials(rpId: s.rpID, userId: userID, allAcceptedCredentialIds: ids.shuffled(using: &rng))
                }
                let expected = Self.oldSignal(before, request, knobs: knobs)
                let findingsBefore = try Finding.list(vault).count
                try s.signal(request)
                let event = try XCTUnwrap(vault.events(kind: "signal").last)
                let changes = (event.detail["changes"]?.arrayValue ?? []).map { ($0["credentialId"]?.stringValue ?? "", $0["action"]?.stringValue ?? "") }
                XCTAssertEqual(changes.map(\.0), expected.changes.map(\.0), "\(pack) round \(round)")
                XCTAssertEqual(changes.map(\.1), expected.changes.map(\.1), "\(pack) round \(round)")
                // The vault afterwards: what changed, changed; nothing else did.
                let after = try vault.passkeys(rpID: s.rpID, includeHidden: true)
                let actions = Dictionary(expected.changes, uniquingKeysWith: { a, _ in a })
                var want: [PasskeyRecord] = []
                for var p in before {
                    switch actions[p.id] {
                    case "hidden": p.hidden = true; p.hiddenAt = s.clock.now()
                    case "restored": p.hidden = false; p.hiddenAt = nil
                    case "deleted": continue
                    case "renamed", "renamed (name only)":
                        if case let .currentUserDetails(_, _, name, display) = request {
                            p.userName = name
                            if knobs.currentUserDetails != .nameOnly { p.displayName = display }
                        }
                    default: break
                    }
                    want.append(p)
                }
                XCTAssertEqual(after, want, "\(pack) round \(round)")
                let findings = try Finding.list(vault).dropFirst(findingsBefore)
                if expected.used > 0 {
                    XCTAssertTrue(findings.contains { $0.message.contains("omits \(expected.used) passkey(s)") }, "\(pack) round \(round): \(findings)")
                } else {
                    XCTAssertFalse(findings.contains { $0.code == "partialAcceptedList" || $0.code == "emptyAcceptedList" }, "\(pack) round \(round)")
                }
            }
        }
    }

    // MARK: Findings after the log is rotated

    func testFindingsStillSeeWhatTheRotatedLogHeld() throws {
        let s = try ProviderScenario(pack: "gpm") { $0.automaticPasskeyUpgrades = false }
        let vault = s.vault.scoped(to: "user")
        vault.limitEventLog(to: 20)
        let a = try s.modalCreate(userID: Array("alice@example.com".utf8))
        try s.signal(.unknownCredential(rpId: s.rpID, credentialId: a.credentialID.base64url))
        try s.savePassword()
        try s.autofillAndSignIn()
        _ = s.failure { try s.conditionalCreate() }
        // Many other events push those out of the log.
        for i in 0..<200 { try vault.appendEvent(kind: "get", outcome: "success", reason: "success", detail: .object([("n", .number(Double(i)))]), at: Date()) }
        try vault.flushEvents()
        XCTAssertEqual(try vault.events(kind: "signal"), [], "the unknown signal's row is gone")
        XCTAssertEqual(try vault.events(kind: "autofill"), [])
        s.advance(3600)
        try s.signal(.allAcceptedCredentials(rpId: s.rpID, userId: userID(), allAcceptedCredentialIds: [a.credentialID.base64url]))
        _ = s.failure { try s.conditionalCreate() }
        // (The accepted list restored alice's passkey, which the second create does not exclude.)
        XCTAssertEqual(try Finding.list(vault).map(\.code), ["unknownThenAccepted", "missingExclusionIds", "repeatedAutomaticAttempt"])
    }
}

/// A small deterministic generator for the randomized comparisons.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
