import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine
@testable import Vault

/// Immediate mediation (`mediation: "immediate"`, Chrome's kWebAuthnImmediateGet from M148; `immediateGet.*`):
/// NotAllowedError at once in a private tab, over the rate limit or with no credential; a TypeError where the
/// browser has no such value.
final class ImmediateGetTests: XCTestCase {
    func immediate(_ s: ProviderScenario, rpID: String? = nil) throws -> RequestOptions {
        var options = try RequestOptions(json: requestOptionsJSON(rpID: rpID ?? s.rpID))
        options.mediation = "immediate"
        return options
    }

    func register(_ s: ProviderScenario) throws -> RegistrationResponse {
        try s.engine().create(try s.creationOptions(conditional: false), caller: try Caller(origin: s.origin))
    }

    func testChromePacksAnswerAnImmediateGetWithAPasskey() throws {
        for pack in ["gpm", "bitwarden", "1password", "keepassxc"] {
            let s = try ProviderScenario(pack: pack)
            let created = try register(s)
            XCTAssertEqual(try s.engine().get(try immediate(s), caller: try Caller(origin: s.origin)).credentialID, created.credentialID, pack)
            XCTAssertEqual(try s.events("get").last?.detail["mediation"]?.stringValue, "immediate", pack)
        }
    }

    func testWithNoCredentialItIsNotAllowedAtOnceAndShowsNothing() throws {
        let s = try ProviderScenario(pack: "gpm")
        try s.engine().vault.pushDecision("cancel")
        let failure = s.failure { try s.engine().get(try self.immediate(s), caller: try Caller(origin: s.origin)) }
        XCTAssertEqual(failure?.error.name, .notAllowedError)
        XCTAssertEqual(failure?.reason, .noCredential)
        XCTAssertNil(failure?.settlesAfterMillis, "at once")
        XCTAssertEqual(try s.engine().vault.pendingDecisions(), ["cancel"], "no prompt was shown, so the user decided nothing")
    }

    func testAPrivateTabIsRefusedAtOnce() throws {
        let s = try ProviderScenario(pack: "gpm") { $0.privateBrowsing = true }
        _ = try register(s)
        let failure = s.failure { try s.engine().get(try self.immediate(s), caller: try Caller(origin: s.origin)) }
        XCTAssertEqual(failure?.error.name, .notAllowedError)
        XCTAssertEqual(failure?.reason, .privateBrowsing)
    }

    /// 2 per 5 s and 10 per 60 s per top-frame registrable domain; localhost exempt.
    func testTheRateLimitIsTwoPerFiveSecondsAndTenPerMinutePerSite() throws {
        let s = try ProviderScenario(pack: "gpm")
        _ = try register(s)
        let caller = try Caller(origin: s.origin)
        func outcome() -> Reason { s.failure { try s.engine().get(try self.immediate(s), caller: caller) }?.reason ?? .success }
        XCTAssertEqual([outcome(), outcome(), outcome()], [.success, .success, .rateLimited])
        let other = try Caller(origin: "https://login.example.com")
        XCTAssertEqual(s.failure { try s.engine().get(try self.immediate(s), caller: other) }?.reason, .rateLimited, "the same registrable domain")
        var outcomes: [Reason] = []
        for _ in 0..<8 {
            s.advance(5)
            outcomes.append(outcome())
            outcomes.append(outcome())
        }
        // The long window is counted first: the two refused at 0 s count there, so with 2 allowed at 0 s and 2 each at
        // 5, 10 and 15 s it is full (10 in 60 s) from 20 s on.
        XCTAssertEqual(outcomes.filter { $0 == .success }.count, 6, "\(outcomes)")
        XCTAssertEqual(Array(outcomes.prefix(6)), Array(repeating: .success, count: 6), "\(outcomes)")
        XCTAssertEqual(outcomes.suffix(6), [.rateLimited, .rateLimited, .rateLimited, .rateLimited, .rateLimited, .rateLimited], "\(outcomes)")
        s.advance(61)
        XCTAssertEqual(outcome(), .success, "the windows slide")
    }

    /// Two processes on one vault (two handles, each its own connection, as two CLI calls or a CLI call beside the
    /// server) count one browser's requests together: the third immediate get in a second is over GPM's 2 per 5 s,
    /// as the server would say. Kept in process memory, each process counted its own.
    func testTwoProcessesOnOneVaultCountTheSameRateLimit() throws {
        let s = try ProviderScenario(pack: "gpm")
        _ = try register(s)
        let other = try Vault.open(path: s.vault.path, key: .raw(Array(repeating: 7, count: 32)))
        defer { other.close() }
        let engines = [s.engine(), Engine(vault: other, profile: s.profile, policy: s.policy, clock: s.clock), s.engine()]
        let caller = try Caller(origin: s.origin)
        let outcomes = engines.map { engine in s.failure { try engine.get(try self.immediate(s), caller: caller) }?.reason ?? .success }
        XCTAssertEqual(outcomes, [.success, .success, .rateLimited])
    }

    /// The attacker's input: one page naming 100,000 top-frame sites. The counts live in the vault, at most
    /// `Vault.immediateRequestSites` sites a browser, and nothing in the process grows with them (kept in memory,
    /// each site's entry stayed for ever, about 470 bytes).
    func testAPageNamingAHundredThousandTopFrameSitesKeepsTheCountsBounded() throws {
        let s = try ProviderScenario(pack: "gpm")
        let engine = s.engine()
        let options = try immediate(s)
        func run(_ range: Range<Int>) throws {
            for i in range {
                let caller = try Caller(origin: s.origin, topOrigin: "https://site\(i).example")
                XCTAssertEqual(s.failure { try engine.get(options, caller: caller) }?.reason, .noCredential)
            }
        }
        try run(0..<10_000)
        let before = residentBytes()
        try run(10_000..<100_000)
        let grown = residentBytes() - before
        // A sanitizer's build holds freed memory (AddressSanitizer's quarantine) or shadows it: its resident set says
        // nothing about what the program keeps, so only the plain build measures it.
        let environment = ProcessInfo.processInfo.environment
        if environment["ASAN_OPTIONS"] == nil && environment["TSAN_OPTIONS"] == nil {
            XCTAssertLessThan(grown, 16 << 20, "the process grew \(grown >> 20) MiB over 90,000 more sites")
        }
        let rows = try s.vault.locked { () throws(VaultError) in
            var count: Int64 = 0
            try s.vault.db.query("SELECT count(*) FROM immediate_requests") { row in count = row.int(0) }
            return count
        }
        XCTAssertLessThanOrEqual(rows, Int64(Vault.immediateRequestSites))
    }

    /// The process's resident set, from /proc/self/statm.
    func residentBytes() -> Int {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    func testLocalhostIsExempt() throws {
        let s = try ProviderScenario(pack: "gpm")
        let caller = try Caller(origin: "http://localhost:8000")
        var options = try s.creationOptions(conditional: false)
        options.rp.id = "localhost"
        _ = try s.engine().create(options, caller: caller)
        for _ in 0..<12 { XCTAssertNoThrow(try s.engine().get(try immediate(s, rpID: "localhost"), caller: caller)) }
    }

    func testAnImmediatePromptTimesOutAfterFiveHundredMilliseconds() throws {
        let s = try ProviderScenario(pack: "gpm")
        _ = try register(s)
        try s.engine().vault.pushDecision("timeout")
        let failure = s.failure { try s.engine().get(try self.immediate(s), caller: try Caller(origin: s.origin)) }
        XCTAssertEqual(failure?.reason, .timedOut)
        XCTAssertEqual(failure?.settlesAfterMillis, 500)
    }

    func testWithoutImmediateMediationTheValueIsATypeError() throws {
        let cases: [(String, Platform?, String?)] = [("gpm", .chromeDesktop, "147.0.1"), ("apple", .safari, nil), ("keepassxc", .firefox, nil),
                                                     ("gpm", .chromeAndroid, nil), ("gpm-pre-m144", .chromeDesktop, nil)]
        for (pack, platform, version) in cases {
            let s = try ProviderScenario(pack: pack, platform: platform) { $0.browserVersion = version }
            _ = try register(s)
            let failure = s.failure { try s.engine().get(try self.immediate(s), caller: try Caller(origin: s.origin)) }
            XCTAssertEqual(failure?.error.name, .typeError, "\(pack) \(String(describing: platform))")
            XCTAssertTrue(failure?.error.message.contains("The provided value 'immediate' is not a valid enum value of type CredentialMediationRequirement.") == true,
                          failure?.error.message ?? "")
        }
        let old = try ProviderScenario(pack: "gpm") { $0.browserVersion = "147" }
        XCTAssertNil(old.engine().clientCapabilities()["immediateGet"], "Blink leaves the key out where the feature is off")
        XCTAssertEqual(try ProviderScenario(pack: "gpm").engine().clientCapabilities()["immediateGet"]?.boolValue, true)
        // Chrome before M144 predates M148's immediate mediation, whatever browserVersion the profile leaves unset.
        XCTAssertNil(try ProviderScenario(pack: "gpm-pre-m144").engine().clientCapabilities()["immediateGet"])
    }

    func testAnImmediateGetSkipsTheSheetsKeysAndPhones() throws {
        let s = try ProviderScenario(pack: "gpm")
        XCTAssertEqual(s.engine().knobs.immediateGetTransports, ["internal"])
        let created = try register(s)
        let answering = SingleAccount(s.engine())
        XCTAssertEqual(try answering.getAnswerer(try immediate(s), caller: try Caller(origin: s.origin), pick: nil).profile.name, "user")
        _ = created
    }
}
