import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// The three signals, pack by pack (seed 003; providers.md §1.3, §2.3, §3.4, §3.5).
final class SignalTests: XCTestCase {
    func passkey(_ scenario: ProviderScenario, user: String = "alice@example.com") throws -> RegistrationResponse {
        try scenario.modalCreate(user: user, userID: Array(user.utf8))
    }

    func userID(_ user: String = "alice@example.com") -> String { Base64URL.encode(Array(user.utf8)) }

    func testRevokedCredentialSignalledUnknownDisappearsFromGet() throws {
        for (pack, offered) in [("gpm", false), ("gpm-pre-m144", false), ("apple", false), ("bitwarden", true), ("keepassxc", true)] {
            let scenario = try ProviderScenario(pack: pack)
            let revoked = try passkey(scenario)
            try scenario.signal(.unknownCredential(rpId: scenario.rpID, credentialId: revoked.credentialID.base64url))
            let failure = scenario.failure { try scenario.signIn() }
            XCTAssertEqual(failure == nil, offered, pack)
            if !offered { XCTAssertEqual(failure?.reason, .noCredential, pack) }
        }
    }

    func testUnknownCredentialHidesUnderGPMAndDeletesBeforeM144() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let id = try passkey(gpm).credentialID
        try gpm.signal(.unknownCredential(rpId: gpm.rpID, credentialId: id.base64url))
        XCTAssertEqual(try gpm.passkeys().first?.hidden, true)
        let legacy = try ProviderScenario(pack: "gpm-pre-m144")
        let legacyID = try passkey(legacy).credentialID
        try legacy.signal(.unknownCredential(rpId: legacy.rpID, credentialId: legacyID.base64url))
        XCTAssertEqual(try legacy.passkeys(), [])
    }

    func testEmptyAcceptedListHidesThenFullListRestoresUnderGPMButNotWhereThePackDeletes() throws {
        for (pack, restores) in [("gpm", true), ("apple", true), ("generic-third-party", true), ("gpm-pre-m144", false)] {
            let scenario = try ProviderScenario(pack: pack)
            let alice = try passkey(scenario)
            let bob = try passkey(scenario, user: "bob@example.com")
            try scenario.signal(.allAcceptedCredentials(rpId: scenario.rpID, userId: userID(), allAcceptedCredentialIds: []))
            XCTAssertEqual(scenario.failure { try scenario.signIn(allow: [alice.credentialID]) }?.reason, .noCredential, pack)
            XCTAssertNil(scenario.failure { try scenario.signIn(allow: [bob.credentialID]) }, "\(pack): another user's passkey is untouched")
            try scenario.signal(.allAcceptedCredentials(rpId: scenario.rpID, userId: userID(), allAcceptedCredentialIds: [alice.credentialID.base64url]))
            XCTAssertEqual(scenario.failure { try scenario.signIn(allow: [alice.credentialID]) } == nil, restores, pack)
            let changes = try scenario.events("signal").last?.detail["changes"]?.arrayValue ?? []
            XCTAssertEqual(changes.first?["action"]?.stringValue, restores ? "restored" : nil, pack)
        }
    }

    func testExtensionProvidersIgnoreSignals() throws {
        let scenario = try ProviderScenario(pack: "bitwarden")
        _ = try passkey(scenario)
        try scenario.signal(.allAcceptedCredentials(rpId: scenario.rpID, userId: userID(), allAcceptedCredentialIds: []))
        XCTAssertEqual(try scenario.passkeys().first?.hidden, false)
        XCTAssertEqual(try scenario.events("signal").last?.outcome, "ignored")
    }

    func testRenameCarriesDisplayNameUnderGPMAndNameOnlyUnderApple() throws {
        for (pack, display) in [("gpm", "Alice Liddell"), ("apple", "Alice"), ("generic-third-party", "Alice Liddell")] {
            let scenario = try ProviderScenario(pack: pack)
            _ = try passkey(scenario)
            try scenario.signal(.currentUserDetails(rpId: scenario.rpID, userId: userID(), name: "alice.liddell@example.com",
                                                    displayName: "Alice Liddell"))
            let record = try XCTUnwrap(scenario.passkeys().first)
            XCTAssertEqual(record.userName, "alice.liddell@example.com", pack)
            XCTAssertEqual(record.displayName, display, pack)
        }
        let ios = try ProviderScenario(pack: "generic-third-party", platform: .ios)
        _ = try passkey(ios)
        try ios.signal(.currentUserDetails(rpId: ios.rpID, userId: userID(), name: "a2", displayName: "Changed"))
        XCTAssertEqual(try ios.passkeys().first?.displayName, "Alice", "ASCredentialUpdater carries only newName")
    }

    func testEleventhSignalInABurstIsDroppedOnChrome() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        var ids: [[UInt8]] = []
        for i in 0..<12 { ids.append(try passkey(scenario, user: "user\(i)@example.com").credentialID) }
        for id in ids { try scenario.signal(.unknownCredential(rpId: scenario.rpID, credentialId: id.base64url)) }
        let hidden = try scenario.passkeys().filter(\.hidden).count
        XCTAssertEqual(hidden, 10, "10 tokens per registrable domain")
        XCTAssertEqual(try scenario.events("signal").suffix(2).map(\.outcome), ["dropped", "dropped"])
        scenario.advance(120)
        try scenario.signal(.unknownCredential(rpId: scenario.rpID, credentialId: ids[10].base64url))
        XCTAssertEqual(try scenario.passkeys().filter(\.hidden).count, 11, "one token back every 2 minutes")
    }

    func testRateLimitsSurviveAClockMovedFarIntoTheFuture() throws {
        for platform in [Platform.chromeDesktop, .android] {
            let scenario = try ProviderScenario(pack: "gpm", platform: platform)
            var ids: [[UInt8]] = []
            for i in 0..<12 { ids.append(try passkey(scenario, user: "user\(i)@example.com").credentialID) }
            for id in ids.prefix(11) { _ = scenario.failure { try scenario.signal(.unknownCredential(rpId: scenario.rpID, credentialId: id.base64url)) } }
            scenario.advance(1e300)
            XCTAssertNil(scenario.failure { try scenario.signal(.unknownCredential(rpId: scenario.rpID, credentialId: ids[11].base64url)) },
                         "\(platform): the bucket is full again and the window empty")
            XCTAssertEqual(try scenario.passkeys().first { $0.credentialID == ids[11] }?.hidden, true, "\(platform)")
        }
    }

    func testSignalsThatChangeNothingSpendNoChromeToken() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        let id = try passkey(scenario).credentialID
        for _ in 0..<15 {
            try scenario.signal(.allAcceptedCredentials(rpId: scenario.rpID, userId: userID(), allAcceptedCredentialIds: [id.base64url]))
        }
        try scenario.signal(.unknownCredential(rpId: scenario.rpID, credentialId: id.base64url))
        XCTAssertEqual(try scenario.passkeys().first?.hidden, true)
    }

    func testEleventhSignalOnAndroidIsRejectedWithRetryMillis() throws {
        let scenario = try ProviderScenario(pack: "gpm", platform: .android)
        _ = try passkey(scenario)
        for _ in 0..<10 {
            try scenario.signal(.currentUserDetails(rpId: scenario.rpID, userId: userID(), name: "alice@example.com", displayName: "Alice"))
            scenario.advance(1)
        }
        let failure = scenario.failure {
            try scenario.signal(.currentUserDetails(rpId: scenario.rpID, userId: self.userID(), name: "a", displayName: "A"))
        }
        XCTAssertEqual(failure?.reason, .rateLimited)
        XCTAssertEqual(failure?.retryMillis, 110_000, "the oldest call leaves the 120 s window 110 s from now")
        let android = Dialect.android(failure!, operation: .signal, knobs: scenario.engine().knobs)
        XCTAssertEqual(android["type"], .string("androidx.credentials.SignalCredentialStateException.RATE_LIMIT_EXCEEDED"))
        // Play services' message, whole minutes; androidx reads the minute count back into retryMillis unconverted
        // (SignalCredentialStateController.parseRefillMinutesRegex).
        XCTAssertEqual(android["message"], .string("SignalCredentialState has been called too frequently. Please retry later after 2 minutes."))
        XCTAssertEqual(android["retryMillis"], .number(2))
        XCTAssertEqual(try scenario.passkeys().first?.userName, "alice@example.com", "the rejected signal changed nothing")
        scenario.advance(111)
        XCTAssertNil(scenario.failure { try scenario.signal(.currentUserDetails(rpId: scenario.rpID, userId: self.userID(), name: "a", displayName: "A")) })
    }

    func testAndroidRetryMillisIsParsedFromPlayServicesMessageAsAndroidxParsesIt() {
        // androidx's regex over the message: the minutes as they stand, 600000 when the message does not match.
        XCTAssertEqual(Dialect.androidxRetryMillis("SignalCredentialState has been called too frequently. Please retry later after 7 minutes."), 7)
        XCTAssertEqual(Dialect.androidxRetryMillis("SignalCredentialState has been called too frequently. Please retry later after 7 minutes"), 600_000)
        XCTAssertEqual(Dialect.androidxRetryMillis("SignalCredentialState has been called too frequently. Please retry later after 99999999999 minutes."), 600_000,
                       "toIntOrNull overflows")
        XCTAssertEqual(Dialect.androidxRetryMillis(nil), 600_000)
        XCTAssertEqual(Dialect.playServicesRateLimitMessage(retryMillis: 1), "SignalCredentialState has been called too frequently. Please retry later after 1 minutes.")
        XCTAssertEqual(Dialect.playServicesRateLimitMessage(retryMillis: 120_000), "SignalCredentialState has been called too frequently. Please retry later after 2 minutes.")
        XCTAssertEqual(Dialect.playServicesRateLimitMessage(retryMillis: 120_001), "SignalCredentialState has been called too frequently. Please retry later after 3 minutes.")
    }

    func testLocalhostIsExemptFromChromesQuota() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        let engine = scenario.engine()
        let caller = try Caller(origin: "http://localhost:8000")
        for i in 0..<12 {
            let options = try CreationOptions(json: creationOptionsJSON(rpID: "localhost", userID: [UInt8(i + 1)], userName: "u\(i)"))
            let id = try engine.create(options, caller: caller).credentialID
            try engine.signal(.unknownCredential(rpId: "localhost", credentialId: id.base64url), caller: caller)
        }
        XCTAssertEqual(try scenario.vault.scoped(to: "user").passkeys(rpID: "localhost", includeHidden: true).filter(\.hidden).count, 12)
    }

    func testBadBase64IsTypeErrorOnChromeAndUnknownErrorOnSafariAndForeignRPIsSecurityError() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        XCTAssertEqual(gpm.failure { try gpm.signal(.unknownCredential(rpId: gpm.rpID, credentialId: "not+base64")) }?.error,
                       .typeError("Invalid base64url string for credentialId."))
        let ids = gpm.failure { try gpm.signal(.allAcceptedCredentials(rpId: gpm.rpID, userId: "??", allAcceptedCredentialIds: ["a=="])) }
        XCTAssertEqual(ids?.error.message, "Invalid base64url string for allAcceptedCredentialIds.", "Chrome checks the list before userId")
        let safari = try ProviderScenario(pack: "apple")
        XCTAssertEqual(safari.failure { try safari.signal(.unknownCredential(rpId: safari.rpID, credentialId: "not+base64")) }?.error.name,
                       .unknownError)
        XCTAssertEqual(gpm.failure { try gpm.signal(.unknownCredential(rpId: "example.org", credentialId: "AAAA")) }?.error.name,
                       .securityError)
    }

    /// WebKit decodes the user ID before the accepted list, and says "Unable to parse credential ID." of both.
    func testSafariDecodesTheUserIDFirstAndNamesEveryBadIDACredentialID() throws {
        let safari = try ProviderScenario(pack: "apple")
        for (userId, ids) in [("??", ["a=="]), ("??", ["AA"]), ("AQ", ["a=="])] {
            let failure = safari.failure { try safari.signal(.allAcceptedCredentials(rpId: safari.rpID, userId: userId, allAcceptedCredentialIds: ids)) }
            XCTAssertEqual(failure?.error, WebAuthnError(.unknownError, "Unable to parse credential ID."), "\(userId) \(ids)")
        }
        XCTAssertEqual(safari.failure { try safari.signal(.currentUserDetails(rpId: safari.rpID, userId: "??", name: "a", displayName: "A")) }?.error.message,
                       "Unable to parse credential ID.")
        let spec = try ProviderScenario(pack: "webauthn-spec")
        let both = spec.failure { try spec.signal(.allAcceptedCredentials(rpId: spec.rpID, userId: "??", allAcceptedCredentialIds: ["a=="])) }
        XCTAssertEqual(both?.error.message, "Invalid base64url string for userId.", "the spec decodes userId first")
    }

    /// Before M144 only signalCurrentUserDetails goes through Chrome's quota tracker (chrome_web_authentication_delegate.cc).
    func testPreM144RateLimitsTheDetailsSignalOnly() throws {
        let legacy = try ProviderScenario(pack: "gpm-pre-m144")
        for i in 0..<12 {
            let id = try passkey(legacy, user: "u\(i)@example.com").credentialID
            try legacy.signal(.unknownCredential(rpId: legacy.rpID, credentialId: id.base64url))
        }
        XCTAssertEqual(try legacy.passkeys(), [], "twelve unknown-credential signals, none dropped")
        for i in 0..<12 { _ = try passkey(legacy, user: "v\(i)@example.com") }
        for i in 0..<12 {
            try legacy.signal(.currentUserDetails(rpId: legacy.rpID, userId: userID("v\(i)@example.com"), name: "renamed\(i)", displayName: "R"))
        }
        let renamed = try legacy.passkeys().filter { $0.userName.hasPrefix("renamed") }.count
        XCTAssertEqual(renamed, 10, "the bucket of 10 holds for the details signal")
        XCTAssertEqual(try legacy.events("signal").last?.outcome, "dropped")
        XCTAssertTrue(try legacy.events("signal").last?.detail["knob"]?.stringValue?.hasPrefix("signals.rateLimit.currentUserDetails") == true)
    }

    /// Chrome's quota tracker keys its buckets by the caller origin's eTLD+1 (passkey_change_quota_tracker.cc).
    func testChromesBucketIsTheCallerOriginsRegistrableDomain() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let id = try passkey(gpm).credentialID
        let engine = gpm.engine()
        try engine.signal(.unknownCredential(rpId: "example.com", credentialId: id.base64url), caller: try Caller(origin: "https://login.shop.example.com"))
        XCTAssertEqual(try gpm.vault.scoped(to: "user").quotaState("bucket:example.com")?.split(separator: ",").first, "9")
    }

    /// Firefox has no signal methods: a page calling one gets a TypeError, and the provider sees nothing.
    func testFirefoxHasNoSignalMethods() throws {
        for pack in ["webauthn-spec", "bitwarden", "keepassxc", "1password", "generic-third-party"] {
            let scenario = try ProviderScenario(pack: pack, platform: .firefox)
            let id = try passkey(scenario).credentialID
            let failure = scenario.failure { try scenario.signal(.unknownCredential(rpId: scenario.rpID, credentialId: id.base64url)) }
            XCTAssertEqual(failure?.error, .typeError("PublicKeyCredential.signalUnknownCredential is not a function"), pack)
            XCTAssertEqual(failure?.reason, .signalMethodsMissing, pack)
            XCTAssertEqual(try scenario.passkeys().first?.hidden, false, pack)
            XCTAssertEqual(scenario.engine().clientCapabilities()["signalUnknownCredential"], .bool(false), pack)
            XCTAssertEqual(scenario.engine().clientCapabilities()["conditionalCreate"], .bool(false), pack)
        }
    }

    func testSignalOptionsParseTheWebAuthnDictionaries() throws {
        XCTAssertEqual(try SignalRequest(kind: "accepted", json: #"{"rpId": "example.com", "userId": "AQ", "allAcceptedCredentialIds": ["AA"]}"#),
                       .allAcceptedCredentials(rpId: "example.com", userId: "AQ", allAcceptedCredentialIds: ["AA"]))
        XCTAssertThrowsError(try SignalRequest(kind: "details", json: #"{"rpId": "example.com", "userId": "AQ", "name": "a"}"#)) {
            XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError)
        }
    }
}

extension Array where Element == UInt8 {
    var base64url: String { Base64URL.encode(self) }
}
