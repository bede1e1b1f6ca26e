import CredemuEngine
import Foundation
import WebAuthn
import XCTest
@testable import CredemuScenarios

/// Scenarios are read strictly: a fault is an `InvalidScenario` naming the file and the member's path.
final class ScenarioParsingTests: XCTestCase {
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
            (scenario(#"{"do": "autofill", "origin": "https://login.example.com/signin"}"#), "scenario.steps[0].origin must be a web origin such as"),
            (scenario(#"{"do": "savePassword", "origin": "https://LOGIN.example.com"}"#), "scenario.steps[0].origin must be a web origin such as"),
            (scenario(#"{"do": "savePassword", "origin": 42}"#), "scenario.steps[0].origin must be a string, not number."),
            (scenario(#"{"do": "usePassword", "origin": "https://login.example.com"}"#), #"scenario.steps[0] has an unknown member "origin"."#),
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
        guard case .advance(let day) = scenario.steps[0].action, case .advance(let later) = scenario.steps[1].action,
              case .create(let create) = scenario.steps[2].action, case .labels(let exclude) = create.exclude,
              case .setting(let settings) = scenario.steps[3].action, case .user(let decisions) = scenario.steps[4].action else {
            return XCTFail("each step is read as its kind: \(scenario.steps.map(\.action.name))")
        }
        XCTAssertEqual([day.seconds, later.seconds], [86_400, 90])
        XCTAssertEqual([day.written, later.written], ["1d", nil])
        XCTAssertEqual([create.conditional ? "conditional" : "modal", create.label], ["conditional", "pk1"])
        XCTAssertEqual(exclude, ["pk0"])
        XCTAssertEqual(settings.map(\.0), ["automaticPasskeyUpgrades"])
        XCTAssertEqual(decisions, [.cancel, .pick(Pick([1]))])
        XCTAssertEqual(scenario.steps.map(\.target), Array(repeating: .main, count: 5))
    }

    /// A step names its target once, typed: a device it runs `on`, or an account.
    func testAStepsTargetIsADeviceOrAnAccount() throws {
        let scenario = try Scenario(json: #"""
        {"format": "credemu-scenario", "version": 1, "name": "s", "title": "S",
         "accounts": {"a": {}, "b": {"pack": "gpm"}}, "devices": {"phone": {"platform": "android", "providers": ["a", "b"]}},
         "steps": [{"do": "create", "on": "phone"}, {"do": "savePassword", "account": "b"}, {"do": "get"},
                   {"do": "setting", "on": "phone", "preferred": "b"}, {"do": "signal", "kind": "accepted", "accepted": ["pk1"]}]}
        """#)
        XCTAssertEqual(scenario.steps.map(\.target), [.device("phone"), .account("b"), .main, .device("phone"), .main])
        guard case .setting(let settings) = scenario.steps[3].action, case .signal(let signal) = scenario.steps[4].action else {
            return XCTFail("setting and signal steps")
        }
        XCTAssertEqual(settings.map(\.0), ["preferred"])
        XCTAssertEqual(signal.kind, .accepted)
        XCTAssertEqual(signal.accepted, ["pk1"])
    }
}
