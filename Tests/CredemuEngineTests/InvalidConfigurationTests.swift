import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Profile settings, packs and scenarios that cannot be used are `InvalidConfiguration`s naming the fault.
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
        let scenario = try Scenario(json: #"{"format": "credemu-scenario", "version": 1, "name": "s", "title": "S", "steps": [{"do": "rp"}]}"#)
        XCTAssertEqual(configurationError { try registry.select("gpm,nope", for: scenario) }?.kind, .policyPack)
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

    func testScenarioParsingIsStrictAndNamesTheFileAndPath() {
        func scenario(_ steps: String, top: String = "") -> String {
            #"{"format": "credemu-scenario", "version": 1, "name": "s", "title": "S", \#(top) "steps": [\#(steps)]}"#
        }
        let cases: [(String, String)] = [
            (scenario(#"{"do": "rp"}"#, top: #""colour": "blue","#), #"scenario has an unknown member "colour"."#),
            (scenario(#"{"do": "rp"}"#, top: #""rp": {"origin": "https://a.example", "rpID": "a.example"},"#),
             #"scenario.rp has an unknown member "rpID"."#),
            (scenario(#"{"do": "rp"}"#, top: #""criteria": "N2.6","#), "scenario.criteria must be an array, not string."),
            (scenario(#"{"do": "rp"}"#, top: #""platforms": {"gpm": "windows"},"#), "scenario.platforms.gpm is not one of"),
            (scenario(#"{"do": "signal", "kind": "unknown", "credentialId": "pk1"}"#), #"scenario.steps[0] has an unknown member "credentialId"."#),
            (scenario(#"{"do": "rp"}, {"do": "dance"}"#), "scenario.steps[1].do 'dance' is not one of"),
            (scenario(#"{"do": "rp", "label": 5}"#), "scenario.steps[0].label must be a string, not number."),
            (scenario(#"{"do": "autofill", "submit": "yes"}"#), "scenario.steps[0].submit must be a boolean, not string."),
            (scenario(#"{"do": "rp", "times": "3"}"#), "scenario.steps[0].times must be a number, not string."),
            (scenario(#"{"do": "rp", "times": 1e300}"#), "scenario.steps[0].times must be an integer from 1 to 100, not 1e+300."),
            (scenario(#"{"do": "rp", "times": 0}"#), "scenario.steps[0].times must be an integer from 1 to 100, not 0."),
            (scenario(#"{"do": "advance", "by": "soon"}"#), #"scenario.steps[0].by must be a duration such as 90s"#),
            (scenario(#"{"do": "advance", "by": -5}"#), "scenario.steps[0].by must be a duration such as 90s"),
            (scenario(#"{"do": "advance"}"#), "scenario.steps[0].by is required."),
            (scenario(#"{"do": "setting", "passcodeSet": "maybe"}"#), #"scenario.steps[0].passcodeSet must be true or false, not "maybe"."#),
            (scenario(#"{"do": "signal", "kind": "acepted"}"#), #"scenario.steps[0].kind must be unknown, accepted or details, not "acepted"."#),
            (scenario(#"{"do": "create", "exclude": "all"}"#), #"scenario.steps[0].exclude must be "known" or a list of labels"#),
            (scenario(#"{"do": "get", "allow": ["pk1", 2]}"#), "scenario.steps[0].allow[1] must be a string, not number."),
            (scenario(#"{"do": "user", "decisions": ["accept", "shrug"]}"#), "scenario.steps[0].decisions[1] 'shrug' is not accept"),
            (scenario(#"{"do": "rp", "expect": {"*": {"outcome": 1}}}"#), "scenario.steps[0].expect.*.outcome must be a string, not number."),
            (scenario(#"{"do": "rp", "expect": {"*": {"colour": "red"}}}"#), #"scenario.steps[0].expect.* has an unknown member "colour"."#),
            (scenario(""), "scenario.steps must be a non-empty array."),
            (#"{"format": "credemu-scenario", "version": 1, "name": "s", "title": "S"}"#, "scenario.steps is required."),
            (#"{"format": "credemu-scenario", "version": 2}"#, "scenario.version must be 1."),
            ("[]", "scenario must be an object, not array."),
        ]
        for (text, fragment) in cases {
            let error = configurationError { try Scenario(json: text, origin: "x.json") }
            XCTAssertEqual(error?.kind, .scenario, text)
            XCTAssertTrue(error?.message.hasPrefix("x.json: " + fragment) == true, "\(error?.message ?? "") is not x.json: \(fragment)")
        }
    }

    func testAWellFormedScenarioKeepsItsDefaultsAndArguments() throws {
        let scenario = try Scenario(json: #"""
        {"format": "credemu-scenario", "version": 1, "name": "s", "title": "S",
         "steps": [{"do": "advance", "by": "1d"}, {"do": "advance", "by": 90, "times": 3, "label": "later"},
                   {"do": "create", "as": "pk1", "exclude": ["pk0"], "mediation": "conditional", "expect": {"*": {"outcome": "created"}}},
                   {"do": "setting", "automaticPasskeyUpgrades": false}, {"do": "user", "decisions": ["cancel", "pick:AQ"]}]}
        """#)
        XCTAssertEqual(scenario.steps.map(\.label), ["1. advance", "later", "3. create", "4. setting", "5. user"])
        XCTAssertEqual(scenario.steps.map(\.times), [1, 3, 1, 1, 1])
        XCTAssertEqual(scenario.steps[2].expect.first?.1, .object([("outcome", "created")]))
        XCTAssertEqual(scenario.origin, "https://shop.example.com")
        XCTAssertEqual(scenario.criteria, [])
    }
}
