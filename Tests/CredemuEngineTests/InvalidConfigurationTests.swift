import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Profile settings and packs that cannot be used are `InvalidConfiguration`s naming the fault.
final class InvalidConfigurationTests: XCTestCase {
    func configurationError(_ body: () throws -> Any) -> InvalidConfiguration? {
        do {
            _ = try body()
            XCTFail("no error")
            return nil
        } catch {
            guard let error = error as? InvalidConfiguration else {
                XCTFail("not an InvalidConfiguration: \(error)")
                return nil
            }
            return error
        }
    }

    func testAProfileSettingWithAWrongValueIsAnInvalidProfileSetting() {
        var profile = Profile(name: "x")
        let cases: [(String, JSONValue, String)] = [
            ("passcodeSet", "maybe", #"profile.passcodeSet must be true or false, not "maybe"."#),
            ("passkeysEnabled", 1, "profile.passkeysEnabled must be true or false, not 1."),
            ("platform", "windows", "profile.platform must be one of"),
            ("osVersion", "eighteen", #"profile.osVersion must be a dotted version such as 25.13, not "eighteen"."#),
            ("pack", 5, "profile.pack must be a string, not number."),
            ("pack", .null, "profile.pack is required."),
            ("colour", "blue", "'colour' is not a profile setting"),
        ]
        for (key, value, fragment) in cases {
            let error = configurationError { try profile.set(key, value) }
            XCTAssertEqual(error?.kind, .profileSetting, key)
            XCTAssertTrue(error?.message.hasPrefix(fragment) == true, "\(error?.message ?? "") lacks \(fragment)")
            XCTAssertEqual(error?.json["error"]?["name"], "InvalidProfileSetting")
        }
        XCTAssertEqual(profile, Profile(name: "x"), "a refused setting changes nothing")
        XCTAssertNoThrow(try profile.set("passcodeSet", "off"))
        XCTAssertFalse(profile.passcodeSet)
        XCTAssertEqual(configurationError { try Profile(name: "x", json: .object([("passcodeSet", "maybe")])) }?.kind, .profileSetting)
    }

    func testAMissingPackIsAnInvalidPolicyPack() throws {
        let registry = try PolicyRegistry()
        let missing = configurationError { try registry.policy(for: Profile(name: "x", pack: "nope")) }
        XCTAssertEqual(missing?.kind, .policyPack)
        XCTAssertTrue(missing?.message.hasPrefix("No policy pack 'nope'; the packs are ") == true, missing?.message ?? "")
        XCTAssertEqual(missing?.json, .object([("error", .object([("name", "InvalidPolicyPack"), ("message", .string(missing?.message ?? ""))]))]))
        let unreadable = configurationError { try registry.policy(for: Profile(name: "x", packPath: "/nonexistent/pack.json")) }
        XCTAssertEqual(unreadable, InvalidConfiguration(.policyPack, "/nonexistent/pack.json: cannot be read"))
        XCTAssertEqual(configurationError { try registry.select("gpm,nope", platforms: [:]) }?.kind, .policyPack)
    }

    func testPackNumbersOutOfRangeAreRefusedWithoutTrapping() throws {
        let text = try String(contentsOfFile: providersDirectory + "/gpm.json", encoding: .utf8)
        let cases: [(String, String, String)] = [
            ("\"value\": 300", "\"value\": 1e300", "conditionalCreate.windowSeconds must be an integer in 0...86400"),
            ("\"value\": 300", "\"value\": -1e300", "conditionalCreate.windowSeconds must be an integer in 0...86400"),
            ("\"value\": 300", "\"value\": 300.5", "conditionalCreate.windowSeconds must be an integer in 0...86400"),
            ("\"capacity\": 10", "\"capacity\": 1e300", "tokenBucket needs capacity and refillSeconds"),
            ("\"capacity\": 10", "\"capacity\": 1.5", "tokenBucket needs capacity and refillSeconds"),
            ("\"windowSeconds\": 120", "\"windowSeconds\": 1e300", "window needs max and windowSeconds"),
        ]
        for (old, new, fragment) in cases {
            let changed = text.replacingOccurrences(of: old, with: new)
            XCTAssertNotEqual(changed, text, new)
            let error = configurationError { try PolicyPack(json: changed, origin: "gpm.json") }
            XCTAssertEqual(error?.kind, .policyPack)
            XCTAssertTrue(error?.message.hasPrefix("gpm.json: pack.") == true, error?.message ?? "")
            XCTAssertTrue(error?.message.contains(fragment) == true, "\(error?.message ?? "") lacks \(fragment)")
        }
    }
}
