import Foundation
import WebAuthn

/// A scenario: a sequence of steps an RP and its user take (save or autofill a password, move the clock,
/// create or get, change a setting, send a signal, remove a passkey), run against one or more providers.
/// Format: `scenarios/README.md`.
public struct Scenario: Sendable {
    public struct Step: Sendable {
        public var label: String
        public var action: String
        public var arguments: JSONValue
        /// Expected outcome per pack ID, or "*" for all.
        public var expect: [(String, JSONValue)]
        /// For a repeated step: how many times.
        public var times: Int
    }

    public var name: String
    public var title: String
    public var description: String
    public var criteria: [String]
    public var origin: String
    public var rpID: String
    public var userName: String
    public var displayName: String
    /// Pack ID to the platform it runs on in this scenario (default: the pack's default platform).
    public var platforms: [String: Platform]
    public var steps: [Step]

    /// The members each action takes besides `do`, `label`, `times` and `expect` (scenarios/README.md).
    static let arguments: [String: Set<String>] = [
        "savePassword": ["user", "password", "savedIn"], "autofill": ["user", "submit"], "usePassword": ["user"], "advance": ["by"],
        "create": ["mediation", "as", "exclude", "user", "userId", "userVerification"], "get": ["allow"],
        "setting": Set(Profile.settingNames), "signal": ["kind", "credential", "accepted", "name", "displayName", "userId"],
        "removePasskey": ["credential"], "user": ["decisions"], "rp": ["note"],
    ]

    /// Reads a scenario strictly: an unknown member, a wrong type or an impossible value is an `InvalidConfiguration`
    /// naming the file and the member's path.
    public init(json text: String, origin file: String = "scenario") throws(InvalidConfiguration) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw InvalidConfiguration(.scenario, "\(file): not valid JSON: \(error.description)")
        }
        self = try InvalidConfiguration.reading(.scenario, from: file) { () throws(InvalidConfiguration.Field) in
            try Scenario(document: document)
        }
    }

    private init(document: JSONValue) throws(InvalidConfiguration.Field) {
        let s = try ConfigurationFields(document, path: "scenario")
        try s.onlyKeys(["format", "version", "name", "title", "description", "criteria", "rp", "user", "platforms", "steps"])
        guard try s.string("format") == "credemu-scenario" else { throw s.invalid("format", "must be \"credemu-scenario\"") }
        guard try s.number("version") == 1 else { throw s.invalid("version", "must be 1") }
        name = try s.requiredString("name")
        title = try s.requiredString("title")
        description = try s.string("description") ?? ""
        criteria = try s.strings("criteria")
        let rp = try s.object("rp")
        try rp?.onlyKeys(["origin", "rpId"])
        origin = try rp?.string("origin") ?? "https://shop.example.com"
        rpID = try rp?.string("rpId") ?? "example.com"
        let user = try s.object("user")
        try user?.onlyKeys(["name", "displayName"])
        userName = try user?.string("name") ?? "alice@example.com"
        displayName = try user?.string("displayName") ?? "Alice"
        var platforms: [String: Platform] = [:]
        if let p = try s.object("platforms") {
            for (pack, _) in p.members {
                guard let platform = Platform(rawValue: try p.requiredString(pack)) else {
                    throw p.invalid(pack, "is not one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                platforms[pack] = platform
            }
        }
        self.platforms = platforms
        _ = try s.required("steps", s.array)
        var steps: [Step] = []
        for (i, step) in try s.objects("steps").enumerated() { steps.append(try Scenario.step(step, number: i + 1)) }
        guard !steps.isEmpty else { throw s.invalid("steps", "must be a non-empty array") }
        self.steps = steps
    }

    private static func step(_ f: ConfigurationFields, number: Int) throws(InvalidConfiguration.Field) -> Step {
        let action = try f.requiredString("do")
        guard let allowed = arguments[action] else {
            throw .invalidField("\(f.path).do '\(action)' is not one of \(arguments.keys.sorted().joined(separator: ", ")).")
        }
        try f.onlyKeys(allowed.union(["do", "label", "times", "expect"]))
        let label = try f.string("label") ?? "\(number). \(action)"
        let times = try f.integer("times", in: 1...100) ?? 1
        var expect: [(String, JSONValue)] = []
        if let e = try f.object("expect") {
            for (pack, _) in e.members {
                let cell = try e.requiredObject(pack)
                try cell.onlyKeys(["outcome", "summary", "reason", "error", "dialect", "vault", "knob"])
                for (key, _) in cell.members { _ = try cell.requiredString(key) }
                expect.append((pack, cell.value))
            }
        }
        try checkArguments(f, action)
        return Step(label: label, action: action, arguments: f.value, expect: expect, times: Int(times))
    }

    /// Checks the types and values of a step's arguments, as `ScenarioRunner` reads them.
    private static func checkArguments(_ f: ConfigurationFields, _ action: String) throws(InvalidConfiguration.Field) {
        for key in ["user", "password", "savedIn", "as", "userId", "userVerification", "credential", "name", "displayName", "note"] {
            _ = try f.string(key)
        }
        _ = try f.bool("submit")
        _ = try f.strings("allow")
        _ = try f.strings("accepted")
        switch action {
        case "advance":
            let by = try f.required("by") { (key) throws(InvalidConfiguration.Field) in f.present(key) }
            guard by.numberValue.map({ (0...maximumDuration).contains($0) }) ?? by.stringValue.flatMap(parseDuration).map({ _ in true }) ?? false else {
                throw f.invalid("by", "must be a duration such as 90s, 6m, 2h or 1d, or a number of seconds, not \(by.serialized())")
            }
        case "create":
            if let mediation = try f.string("mediation"), !["conditional", "modal"].contains(mediation) {
                throw f.invalid("mediation", "must be \"conditional\" or \"modal\", not \"\(mediation)\"")
            }
            if let exclude = f.present("exclude")?.stringValue {
                guard exclude == "known" else { throw f.invalid("exclude", "must be \"known\" or a list of labels, not \"\(exclude)\"") }
            } else {
                _ = try f.strings("exclude")
            }
        case "setting":
            var probe = Profile(name: "scenario")
            for (key, value) in f.members where Profile.settingNames.contains(key) { try probe.apply(key, value, at: f.path) }
        case "signal":
            if let kind = try f.string("kind"), !["unknown", "accepted", "details"].contains(kind) {
                throw f.invalid("kind", "must be unknown, accepted or details, not \"\(kind)\"")
            }
        case "user":
            for (i, decision) in try f.strings("decisions").enumerated() where UserDecision(decision) == nil {
                throw .invalidField("\(f.path).decisions[\(i)] '\(decision)' is not accept, cancel, timeout or pick:ID.")
            }
        default:
            break
        }
    }

    public static func load(path: String) throws(InvalidConfiguration) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else { throw InvalidConfiguration(.scenario, "\(path): cannot be read") }
        return try Scenario(json: String(decoding: data, as: UTF8.self), origin: path)
    }
}
