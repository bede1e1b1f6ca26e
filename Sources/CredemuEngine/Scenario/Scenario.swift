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

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    static let actions: Set<String> = ["savePassword", "autofill", "usePassword", "advance", "create", "get", "setting",
                                       "signal", "removePasskey", "user", "rp"]

    public init(json text: String, origin file: String = "scenario") throws(Invalid) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw Invalid(description: "\(file): not valid JSON: \(error.description)")
        }
        func fail(_ m: String) -> Invalid { Invalid(description: "\(file): \(m)") }
        guard document["format"]?.stringValue == "credemu-scenario", document["version"]?.numberValue == 1 else {
            throw fail("format must be \"credemu-scenario\" and version 1")
        }
        guard let name = document["name"]?.stringValue, let title = document["title"]?.stringValue else {
            throw fail("name and title are required strings")
        }
        self.name = name
        self.title = title
        description = document["description"]?.stringValue ?? ""
        criteria = document["criteria"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let rp = document["rp"]
        origin = rp?["origin"]?.stringValue ?? "https://shop.example.com"
        rpID = rp?["rpId"]?.stringValue ?? "example.com"
        userName = document["user"]?["name"]?.stringValue ?? "alice@example.com"
        displayName = document["user"]?["displayName"]?.stringValue ?? "Alice"
        var platforms: [String: Platform] = [:]
        for (pack, value) in document["platforms"]?.objectValue ?? [] {
            guard let p = value.stringValue.flatMap(Platform.init(rawValue:)) else { throw fail("platforms.\(pack) is not a platform") }
            platforms[pack] = p
        }
        self.platforms = platforms
        guard let items = document["steps"]?.arrayValue, !items.isEmpty else { throw fail("steps must be a non-empty array") }
        var steps: [Step] = []
        for (i, item) in items.enumerated() {
            guard item.objectValue != nil, let action = item["do"]?.stringValue else { throw fail("steps[\(i)] needs \"do\"") }
            guard Scenario.actions.contains(action) else {
                throw fail("steps[\(i)].do '\(action)' is not one of \(Scenario.actions.sorted().joined(separator: ", "))")
            }
            let times = Int(item["times"]?.numberValue ?? 1)
            guard (1...100).contains(times) else { throw fail("steps[\(i)].times must be 1 to 100") }
            steps.append(Step(label: item["label"]?.stringValue ?? "\(i + 1). \(action)", action: action, arguments: item,
                              expect: item["expect"]?.objectValue ?? [], times: times))
        }
        self.steps = steps
    }

    public static func load(path: String) throws(Invalid) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else { throw Invalid(description: "\(path): cannot be read") }
        return try Scenario(json: String(decoding: data, as: UTF8.self), origin: path)
    }
}
