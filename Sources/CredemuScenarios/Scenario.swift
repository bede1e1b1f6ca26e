import CredemuEngine
import Foundation
import WebAuthn

/// A scenario: a sequence of steps an RP and its user take (save or autofill a password, move the clock,
/// create or get, change a setting, send a signal, remove a passkey), run against one or more providers.
/// Format: `scenarios/README.md`.
public struct Scenario: Sendable {
    public struct Step: Sendable {
        public var label: String
        public var action: Action
        public var target: Target
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
    /// Provider accounts (profiles), for scenarios with devices: label, the pack (nil: the column's) and settings.
    public var accounts: [Account] = []
    /// Devices, each with its platform (per column pack, "*" for any) and the accounts enabled on it.
    public var devices: [DeviceSpec] = []

    public struct Account: Sendable {
        public var label: String
        public var pack: String?
        public var settings: [(String, JSONValue)]
    }

    public struct DeviceSpec: Sendable {
        public var label: String
        /// Column pack ID (or "*") to the device's platform in that column; no entry: the device is absent there.
        public var platforms: [String: Platform]
        /// Device settings (`Device.settingNames`), providers included.
        public var settings: [(String, JSONValue)]

        /// The device's platform when the matrix column plays `pack`.
        public func platform(column pack: String) -> Platform? { platforms[pack] ?? platforms["*"] }
    }

    /// The members each action takes besides `do`, `label`, `times` and `expect` (scenarios/README.md).
    static let arguments: [String: Set<String>] = [
        "savePassword": ["user", "password", "savedIn", "origin"], "autofill": ["user", "submit", "origin"], "usePassword": ["user"], "advance": ["by"],
        "create": ["mediation", "as", "exclude", "user", "userId", "userVerification", "attachment", "residentKey", "attestation", "use"],
        "get": ["allow", "use"],
        "setting": Set(Profile.settingNames), "signal": ["kind", "credential", "accepted", "name", "displayName", "userId"],
        "removePasskey": ["credential"], "renamePasskey": ["credential", "name", "displayName"], "user": ["decisions"], "rp": ["note"],
        "move": ["to", "keepSource"],
    ]

    /// What names the step's target when a scenario has accounts and devices: `on` a device (ceremonies, device
    /// settings), or an `account` (passwords, account settings, decisions, removals; ceremonies outside any device).
    static let targets: [String: Set<String>] = [
        "savePassword": ["account"], "autofill": ["account"], "usePassword": ["account"], "create": ["on", "account"],
        "get": ["on", "account"], "setting": ["on", "account"], "signal": ["on", "account"], "removePasskey": ["account"],
        "renamePasskey": ["account"], "user": ["on", "account"], "move": ["account"],
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
        try s.onlyKeys(["format", "version", "name", "title", "description", "criteria", "rp", "user", "platforms", "accounts", "devices", "steps"])
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
        (accounts, devices) = try Scenario.accountsAndDevices(s)
        _ = try s.required("steps", s.array)
        var steps: [Step] = []
        for (i, step) in try s.objects("steps").enumerated() {
            let read = try Scenario.step(step, number: i + 1, accounts: Set(accounts.map(\.label)), devices: Set(devices.map(\.label)))
            if case .setting(let settings) = read.action {
                try Scenario.checkRoaming(settings, at: "\(step.path)", accounts: accounts, devices: devices)
            }
            steps.append(read)
        }
        guard !steps.isEmpty else { throw s.invalid("steps", "must be a non-empty array") }
        self.steps = steps
    }

    /// `accounts` and `devices`: every label a profile name, every device's providers declared accounts.
    private static func accountsAndDevices(_ s: ConfigurationFields) throws(InvalidConfiguration.Field) -> ([Account], [DeviceSpec]) {
        var accounts: [Account] = []
        if let a = try s.object("accounts") {
            for (label, _) in a.members {
                guard Profile.isValidName(label) else { throw a.invalid(label, "is not a profile name (letters, digits, '-', '_', '.')") }
                let fields = try a.requiredObject(label)
                var probe = Profile(name: label)
                var settings: [(String, JSONValue)] = []
                for (key, value) in fields.members {
                    guard Profile.settingNames.contains(key), key != "packPath", key != "platform" else {
                        throw fields.invalid(key, "is not an account setting (pack, automaticPasskeyUpgrades, passkeysEnabled, ...)")
                    }
                    try probe.apply(key, value, at: fields.path)
                    settings.append((key, value))
                }
                accounts.append(Account(label: label, pack: try fields.string("pack"), settings: settings.filter { $0.0 != "pack" }))
            }
        }
        var devices: [DeviceSpec] = []
        if let d = try s.object("devices") {
            guard !accounts.isEmpty else { throw s.invalid("devices", "needs accounts: the provider accounts the devices hold") }
            for (label, _) in d.members {
                guard Profile.isValidName(label) else { throw d.invalid(label, "is not a device name (letters, digits, '-', '_', '.')") }
                let fields = try d.requiredObject(label)
                var platforms: [String: Platform] = [:]
                if let text = fields.present("platform")?.stringValue {
                    guard let p = Platform(rawValue: text) else { throw fields.invalid("platform", "is not one of \(Platform.allCases.map(\.rawValue))") }
                    platforms["*"] = p
                } else if let map = try fields.object("platform") {
                    for (pack, _) in map.members {
                        guard let p = Platform(rawValue: try map.requiredString(pack)) else {
                            throw map.invalid(pack, "is not one of \(Platform.allCases.map(\.rawValue))")
                        }
                        platforms[pack] = p
                    }
                } else {
                    throw fields.invalid("platform", "is required: a platform, or column pack ID (or \"*\") to platform")
                }
                var probe = Device(name: label)
                var settings: [(String, JSONValue)] = []
                for (key, value) in fields.members where key != "platform" {
                    try probe.apply(key, value, at: fields.path)
                    settings.append((key, value))
                }
                guard !probe.providers.isEmpty else { throw fields.invalid("providers", "is required: the accounts enabled on the device") }
                if let missing = probe.providers.first(where: { p in !accounts.contains { $0.label == p } }) {
                    throw fields.invalid("providers", "names '\(missing)', which is not one of the scenario's accounts")
                }
                if let preferred = probe.preferred, !probe.providers.contains(preferred) {
                    throw fields.invalid("preferred", "'\(preferred)' is not one of the device's providers")
                }
                devices.append(DeviceSpec(label: label, platforms: platforms, settings: settings))
            }
        }
        for account in accounts {
            try checkRoaming(account.settings, at: "scenario.accounts.\(account.label)", accounts: accounts, devices: devices)
        }
        for device in devices {
            try checkRoaming(device.settings, at: "scenario.devices.\(device.label)", accounts: accounts, devices: devices)
        }
        return (accounts, devices)
    }

    /// `authenticators` name the scenario's accounts (of the security-key pack, checked when the run plugs them in)
    /// and `phones` its devices.
    static func checkRoaming(_ settings: [(String, JSONValue)], at path: String, accounts: [Account], devices: [DeviceSpec]) throws(InvalidConfiguration.Field) {
        for (key, value) in settings where key == "authenticators" || key == "phones" {
            let known = key == "authenticators" ? Set(accounts.map(\.label)) : Set(devices.map(\.label))
            for name in value.arrayValue?.compactMap(\.stringValue) ?? [] where !known.contains(name) {
                throw .invalidField("\(path).\(key) names '\(name)', which is not one of the scenario's \(key == "authenticators" ? "accounts" : "devices").")
            }
        }
    }

    private static func step(_ f: ConfigurationFields, number: Int, accounts: Set<String>, devices: Set<String>) throws(InvalidConfiguration.Field) -> Step {
        let action = try f.requiredString("do")
        guard var allowed = arguments[action] else {
            throw .invalidField("\(f.path).do '\(action)' is not one of \(arguments.keys.sorted().joined(separator: ", ")).")
        }
        let targets = Scenario.targets[action] ?? []
        if !accounts.isEmpty { allowed.formUnion(targets) }
        if let on = try f.string("on") {
            guard devices.contains(on) else { throw f.invalid("on", "'\(on)' is not one of the scenario's devices") }
            if action == "setting" {
                allowed = ["on"]
                allowed.formUnion(Device.stateNames)
                allowed.formUnion(["providers", "preferred"])
            }
        }
        if let account = try f.string("account"), !accounts.contains(account) {
            throw f.invalid("account", "'\(account)' is not one of the scenario's accounts")
        }
        if f.present("on") != nil, f.present("account") != nil { throw f.invalid("on", "and account cannot both be given") }
        if let use = try f.string("use"), !accounts.contains(use), !devices.contains(use) {
            throw f.invalid("use", "'\(use)' is not one of the scenario's accounts (a security key, a manager) or devices (a phone)")
        }
        try f.onlyKeys(allowed.union(["do", "label", "times", "expect"]))
        if action == "move" {
            guard let to = try f.string("to"), accounts.contains(to) else {
                throw f.invalid("to", "must name one of the scenario's accounts: the manager the credentials move to")
            }
        }
        let label = try f.string("label") ?? "\(number). \(action)"
        let times = try f.integer("times", in: 1...100) ?? 1
        var expect: [(String, JSONValue)] = []
        if let e = try f.object("expect") {
            for (pack, _) in e.members {
                let cell = try e.requiredObject(pack)
                try cell.onlyKeys(["outcome", "summary", "reason", "error", "dialect", "vault", "knob", "ui", "flags", "provider", "authenticator"])
                for (key, _) in cell.members { _ = try cell.requiredString(key) }
                expect.append((pack, cell.value))
            }
        }
        var target = Target.main
        if let on = try f.string("on") { target = .device(on) } else if let account = try f.string("account") { target = .account(account) }
        return Step(label: label, action: try Action.read(f, action), target: target, expect: expect, times: Int(times))
    }

    public static func load(path: String) throws(InvalidConfiguration) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else { throw InvalidConfiguration(.scenario, "\(path): cannot be read") }
        return try Scenario(json: String(decoding: data, as: UTF8.self), origin: path)
    }
}
