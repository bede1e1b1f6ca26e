import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

final class PolicyPackTests: XCTestCase {
    func testEveryShippedPackLoadsWithSourcesAndVersions() throws {
        let registry = try PolicyRegistry()
        XCTAssertEqual(Set(registry.packs.map(\.id)), ["gpm", "gpm-pre-m144", "apple", "bitwarden", "keepassxc", "1password", "generic-third-party", "security-key",
                                                           "edge", "proton-pass", "windows-hello"])
        for pack in registry.packs {
            XCTAssertFalse(pack.sources.isEmpty, pack.id)
            for platform in pack.platforms {
                let knobs = pack.knobs(for: platform)
                XCTAssertEqual(knobs.provenance.count, KnobSpec.all.count, "\(pack.id) cites every knob on \(platform)")
                XCTAssertFalse(knobs.algorithms.isEmpty)
            }
        }
    }

    func testUnconfirmedValuesAreMarkedInThePack() throws {
        let gpm = try PolicyPack.load(path: providersDirectory + "/gpm.json")
        let upBit = gpm.describe(.chromeDesktop).first { $0.0 == "conditionalCreate.userPresent" }
        XCTAssertNil(upBit?.3, "the GPM UP bit is settled: UserPresentAndVerifiedBits::kNeither (sources-2026-12.md)")
        XCTAssertTrue(upBit?.2.contains("enclave_protocol_utils.cc") == true, "\(String(describing: upBit?.2))")
        let incognito = gpm.describe(.chromeDesktop).first { $0.0 == "conditionalCreate.privateBrowsing" }
        XCTAssertNotNil(incognito?.3, "what the upgrade does in Incognito is not in the reference")
        let window = gpm.describe(.chromeDesktop).first { $0.0 == "conditionalCreate.windowSeconds" }
        XCTAssertNil(window?.3, "the 5-minute window is confirmed in Chromium")
        XCTAssertEqual(window?.1, .number(300))
    }

    func testVariantsOverrideTheBaseKnobsPerPlatform() throws {
        let gpm = try PolicyPack.load(path: providersDirectory + "/gpm.json")
        XCTAssertEqual(gpm.knobs(for: .chromeDesktop).rateLimit(for: "unknown"), .tokenBucket(capacity: 10, refillSeconds: 120, exemptLocalhost: true, overQuota: .drop))
        XCTAssertEqual(gpm.knobs(for: .android).rateLimit(for: "details"), .window(max: 10, windowSeconds: 120, overQuota: .reject))
        XCTAssertEqual(gpm.knobs(for: .android).minimumPlayServices, "25.13")
        XCTAssertNil(gpm.knobs(for: .chromeDesktop).minimumPlayServices)
    }

    func testMalformedPacksAreRejectedWithAMessageNamingTheFault() throws {
        let text = try String(contentsOfFile: providersDirectory + "/gpm.json", encoding: .utf8)
        let cases: [(String, String)] = [
            (text.replacingOccurrences(of: "\"conditionalCreate.windowSeconds\"", with: "\"conditionalCreate.windowSecs\""),
             "conditionalCreate.windowSecs is not a known knob"),
            (text.replacingOccurrences(of: "\"value\": 300", with: "\"value\": \"five minutes\""), "must be an integer"),
            (text.replacingOccurrences(of: "\"source\": \"chromium-quota\"", with: "\"source\": \"hearsay\""), "must name its source"),
            (text.replacingOccurrences(of: "\"schema\": \"credemu-policy-pack/1\"", with: "\"schema\": \"v2\""), "schema must be"),
            ("{", "not valid JSON"),
            (text.replacingOccurrences(of: "\"exclusion.outcome\": {\n      \"value\": \"InvalidStateError\"",
                                       with: "\"exclusion.outcome\": {\n      \"value\": \"Nope\""), "must be one of"),
        ]
        for (json, fragment) in cases {
            XCTAssertNotEqual(json, text == json ? "" : text)
            XCTAssertThrowsError(try PolicyPack(json: json, origin: "test.json")) { error in
                XCTAssertTrue("\(error)".contains(fragment), "\(error) lacks \(fragment)")
                XCTAssertTrue("\(error)".hasPrefix("test.json"), "\(error)")
            }
        }
        // A pack missing a knob names the knob.
        var members = try JSONValue.parse(text).objectValue!
        let index = members.firstIndex { $0.0 == "knobs" }!
        members[index].1 = .object(members[index].1.objectValue!.filter { $0.0 != "signals.rateLimit.currentUserDetails" })
        XCTAssertThrowsError(try PolicyPack(json: JSONValue.object(members).serialized(), origin: "x")) {
            XCTAssertTrue("\($0)".contains("knobs.signals.rateLimit.currentUserDetails is missing"), "\($0)")
        }
    }

    func testASwiftPolicyDrivesTheEngineThroughTheSameProtocol() throws {
        struct StrictRP: ProviderPolicy {
            var id: String { "custom" }
            var name: String { "Custom" }
            var version: String { "1" }
            var platforms: [Platform] { [.chromeDesktop] }
            func knobs(for platform: Platform) -> PolicyKnobs {
                var k = SpecPolicy().knobs(for: platform)
                k.windowSeconds = 30
                k.exclusionOutcome = .notAllowedError
                return k
            }
        }
        let (vault, _dir) = try makeTestVault()
        _ = _dir
        let clock = VirtualClock()
        let engine = Engine(vault: vault, profile: Profile(name: "p", pack: "custom"), policy: StrictRP(), clock: clock)
        try engine.savePassword(origin: "https://example.com", username: "alice", password: "pw")
        _ = try engine.autofill(origin: "https://example.com", username: "alice")
        clock.advance(by: 45)
        let options = try CreationOptions(json: creationOptionsJSON(userName: "alice", mediation: "conditional"))
        XCTAssertThrowsError(try engine.create(options, caller: try Caller(origin: "https://example.com"))) {
            XCTAssertEqual(($0 as? CeremonyError)?.reason, .noRecentlyUsedPassword)
        }
    }

    func testCapabilitiesMatchThePackWithKeysSorted() throws {
        let bitwarden = try ProviderScenario(pack: "bitwarden")
        let caps = bitwarden.engine().clientCapabilities()
        let keys = caps.objectValue!.map(\.0)
        XCTAssertEqual(keys, keys.sorted())
        XCTAssertEqual(caps["conditionalCreate"], .bool(true), "Chrome answers for Bitwarden, which still ignores mediation")
        let keepass = try ProviderScenario(pack: "keepassxc").engine()
        XCTAssertFalse(keepass.isConditionalMediationAvailable)
        XCTAssertEqual(keepass.clientCapabilities()["conditionalGet"], .bool(true))
        XCTAssertEqual(try ProviderScenario(pack: "apple", platform: .ios).engine().clientCapabilities(), .object([]),
                       "native apps have no getClientCapabilities")
    }
}

/// `credemu providers validate` refuses a pack that claims an extension the engine cannot answer.
final class ExtensionClaimTests: XCTestCase {
    func gpmText() throws -> String { try String(contentsOfFile: providersDirectory + "/gpm.json", encoding: .utf8) }

    func testAClaimOfAnExtensionTheEngineCannotAnswerIsUnansweredExtension() throws {
        let text = try gpmText()
        let cases: [(String, String)] = [
            (text.replacingOccurrences(of: "\"extension:credProps\": true,", with: "\"extension:credProps\": true,\n        \"extension:madeUp\": true,"),
             "pack.knobs.capabilities.client claims \"extension:madeUp\": true"),
            (text.replacingOccurrences(of: "\"extensions.largeBlob\": {", with: "\"extensions.madeUp\": {\"value\": true, \"source\": \"spec\"},\n    \"extensions.largeBlob\": {"),
             "pack.knobs.extensions.madeUp sets an extension credemu cannot answer"),
            (text.replacingOccurrences(of: "\"variants\": {\n    \"chrome-android\": {", with: "\"variants\": {\n    \"chrome-android\": {\n      \"capabilities.client\": {\"value\": {\"extension:uvm\": true}, \"source\": \"spec\"},"),
             "pack.variants.chrome-android.capabilities.client claims \"extension:uvm\": true"),
        ]
        for (json, fragment) in cases {
            XCTAssertNotEqual(json, text, fragment)
            XCTAssertThrowsError(try PolicyPack(json: json, origin: "claims.json")) { error in
                let configuration = error as? InvalidConfiguration
                XCTAssertEqual(configuration?.kind, .unansweredExtension, "\(error)")
                XCTAssertEqual(configuration?.json["error"]?["name"], "UnansweredExtension")
                XCTAssertTrue("\(error)".contains(fragment), "\(error) lacks \(fragment)")
                XCTAssertTrue("\(error)".contains("appid, appidExclude, credBlob, credProps"), "\(error) names what credemu answers")
            }
        }
        // A false key claims nothing: Chromium's false extension keys stay.
        XCTAssertNoThrow(try PolicyPack(json: text.replacingOccurrences(of: "\"extension:credProps\": true,", with: "\"extension:credProps\": true,\n        \"extension:madeUp\": false,"), origin: "x"))
    }

    func testEveryShippedPackClaimsOnlyWhatTheEngineAnswers() throws {
        let registry = try PolicyRegistry(directory: providersDirectory)
        for policy in registry.all {
            for platform in policy.platforms {
                for (key, value) in policy.knobs(for: platform).clientCapabilities where key.hasPrefix("extension:") && value {
                    XCTAssertTrue(Engine.answeredExtensions.contains(String(key.dropFirst(10))), "\(policy.id)@\(platform.rawValue): \(key)")
                }
            }
        }
    }

    /// Chrome desktop's `getClientCapabilities()`: Blink's full key set (public_key_credential.cc, measured in Chromium 156).
    func testChromeDesktopReportsEveryExtensionBlinkDoes() throws {
        for pack in ["gpm", "bitwarden", "keepassxc", "1password", "security-key"] {
            let caps = try ProviderScenario(pack: pack).engine().clientCapabilities()
            for key in ["appid", "appidExclude", "credBlob", "credProps", "credentialProtectionPolicy", "enforceCredentialProtectionPolicy",
                        "getCredBlob", "hmacCreateSecret", "largeBlob", "minPinLength", "prf"] {
                XCTAssertEqual(caps["extension:" + key], .bool(true), "\(pack) \(key)")
            }
            XCTAssertEqual(caps["extension:payment"], .bool(false), pack)
        }
    }
}

final class DialectTests: XCTestCase {
    func testIneligibleConditionalCreateRendersPerPlatformAndPack() throws {
        let failure = CeremonyError(.notAllowed("x"), reason: .noRecentlyUsedPassword, silent: true)
        let gpmAndroid = try ProviderScenario(pack: "gpm", platform: .android).engine().knobs
        XCTAssertEqual(Dialect.android(failure, operation: .create, knobs: gpmAndroid)["exception"],
                       .string("androidx.credentials.exceptions.CreateCredentialNoCreateOptionException"))
        let chromeAndroid = try ProviderScenario(pack: "gpm", platform: .chromeAndroid).engine().knobs
        let dom = Dialect.android(failure, operation: .create, knobs: chromeAndroid)
        XCTAssertEqual(dom["domError"], .string("NotAllowedError"))
        XCTAssertEqual(dom["type"], .string("androidx.credentials.TYPE_CREATE_PUBLIC_KEY_CREDENTIAL_DOM_EXCEPTION/androidx.credentials.TYPE_NOT_ALLOWED_ERROR"))
        let apple = try ProviderScenario(pack: "apple", platform: .ios).engine().knobs
        XCTAssertEqual(Dialect.apple(failure, operation: .create, knobs: apple)["code"], .number(1001))
        XCTAssertEqual(Dialect.web(failure)["name"], .string("NotAllowedError"))
    }

    func testExcludedCredentialIs1006OnAppleAndInvalidStateDomErrorOnAndroid() throws {
        let failure = CeremonyError(.invalidState("x"), reason: .excludedCredential)
        let knobs = SpecPolicy().knobs(for: .ios)
        XCTAssertEqual(Dialect.apple(failure, operation: .create, knobs: knobs)["code"], .number(1006))
        XCTAssertEqual(Dialect.apple(failure, operation: .create, knobs: knobs)["name"], .string("matchedExcludedCredential"))
        XCTAssertEqual(Dialect.android(failure, operation: .create, knobs: knobs)["domError"], .string("InvalidStateError"))
        let noPasscode = CeremonyError(.notAllowed("x"), reason: .noDevicePasscode, silent: true)
        XCTAssertEqual(Dialect.apple(noPasscode, operation: .create, knobs: knobs)["code"], .number(1010))
    }

    /// 1006 exists from iOS 18 / macOS 15, 1010 from the 26 releases (ASAuthorizationError.h availability).
    func testAppleCodesExistOnlyFromTheOSVersionsThatHaveThem() throws {
        let excluded = CeremonyError(.invalidState("x"), reason: .excludedCredential)
        let noPasscode = CeremonyError(.notAllowed("x"), reason: .noDevicePasscode, silent: true)
        for (platform, version, excludedCode, passcodeCode) in [(Platform.ios, "17.5", 1004, 1004), (.ios, "18.0", 1006, 1004), (.ios, "18.6", 1006, 1004),
                                                                 (.ios, "26.0", 1006, 1010), (.macos, "14.6", 1004, 1004), (.macos, "15.1", 1006, 1004),
                                                                 (.macos, "26.1", 1006, 1010)] {
            let knobs = try ProviderScenario(pack: "apple", platform: platform).engine().knobs
            XCTAssertEqual(Dialect.apple(excluded, operation: .create, knobs: knobs, osVersion: version)["code"], .number(Double(excludedCode)), "\(platform) \(version)")
            XCTAssertEqual(Dialect.apple(noPasscode, operation: .create, knobs: knobs, osVersion: version)["code"], .number(Double(passcodeCode)), "\(platform) \(version)")
        }
        let current = try ProviderScenario(pack: "apple", platform: .ios).engine().knobs
        XCTAssertEqual(Dialect.apple(excluded, operation: .create, knobs: current)["code"], .number(1006), "an unset OS version is a current device")
        // The rendering a profile's failure carries follows the profile's OS.
        let old = try ProviderScenario(pack: "apple", platform: .ios) { $0.osVersion = "17.5" }
        XCTAssertEqual(excluded.json(operation: .create, engine: old.engine())["error"]?["dialects"]?["apple"]?["code"], .number(1004))
    }
}
