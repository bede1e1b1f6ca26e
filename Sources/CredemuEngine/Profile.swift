import WebAuthn

/// One user's provider account: the policy it plays, the platform and device it runs on, and the user's
/// provider settings. Settings such as the automatic-upgrade opt-out belong to the account, so they hold on
/// every platform the profile is used from (GPM syncs the opt-out across devices: providers.md §2.1).
public struct Profile: Equatable, Sendable {
    public var name: String
    /// A pack ID from `providers/`, or a built-in policy such as `webauthn-spec`.
    public var pack: String
    /// A pack file outside `providers/`, when the user loaded their own.
    public var packPath: String?
    public var platform: Platform
    public var osVersion: String?
    public var playServicesVersion: String?
    public var passcodeSet: Bool
    /// "Automatic passkey upgrades" (GPM) / "Allow Automatic Passkey Upgrades" (Apple): off is the opt-out.
    public var automaticPasskeyUpgrades: Bool
    /// Passkeys enabled in the provider at all (GPM's kCredentialsEnablePasskeys, Bitwarden's enablePasskeys).
    public var passkeysEnabled: Bool

    public init(name: String, pack: String = "gpm", packPath: String? = nil, platform: Platform = .chromeDesktop,
                osVersion: String? = nil, playServicesVersion: String? = nil, passcodeSet: Bool = true,
                automaticPasskeyUpgrades: Bool = true, passkeysEnabled: Bool = true) {
        self.name = name
        self.pack = pack
        self.packPath = packPath
        self.platform = platform
        self.osVersion = osVersion
        self.playServicesVersion = playServicesVersion
        self.passcodeSet = passcodeSet
        self.automaticPasskeyUpgrades = automaticPasskeyUpgrades
        self.passkeysEnabled = passkeysEnabled
    }

    /// The settings as stored in the vault and shown by the CLI and API.
    public var json: JSONValue {
        .object([
            ("name", .string(name)),
            ("pack", .string(pack)),
            ("packPath", packPath.map(JSONValue.string) ?? .null),
            ("platform", .string(platform.rawValue)),
            ("osVersion", osVersion.map(JSONValue.string) ?? .null),
            ("playServicesVersion", playServicesVersion.map(JSONValue.string) ?? .null),
            ("passcodeSet", .bool(passcodeSet)),
            ("automaticPasskeyUpgrades", .bool(automaticPasskeyUpgrades)),
            ("passkeysEnabled", .bool(passkeysEnabled)),
        ])
    }

    /// The settings a caller may change, and what each takes.
    public static let settingNames = ["pack", "packPath", "platform", "osVersion", "playServicesVersion", "passcodeSet",
                                      "automaticPasskeyUpgrades", "passkeysEnabled"]

    public init(name: String, json: JSONValue) throws(WebAuthnError) {
        self.init(name: name)
        for (key, value) in json.objectValue ?? [] where key != "name" {
            try set(key, value)
        }
    }

    /// Changes one setting; a wrong name or value is a `TypeError` naming it.
    public mutating func set(_ key: String, _ value: JSONValue) throws(WebAuthnError) {
        func string() throws(WebAuthnError) -> String {
            guard let s = value.stringValue else { throw .typeError("The profile setting \(key) takes a string.") }
            return s
        }
        func optionalVersion() throws(WebAuthnError) -> String? {
            if value.isNull { return nil }
            let s = try string()
            guard Version(s) != nil else { throw .typeError("The profile setting \(key) takes a dotted version such as 25.13, not '\(s)'.") }
            return s
        }
        func bool() throws(WebAuthnError) -> Bool {
            if let b = value.boolValue { return b }
            if let s = value.stringValue, let b = ["true": true, "false": false, "on": true, "off": false][s] { return b }
            throw .typeError("The profile setting \(key) takes true or false.")
        }
        switch key {
        case "pack": pack = try string()
        case "packPath": packPath = value.isNull ? nil : try string()
        case "platform":
            let s = try string()
            guard let p = Platform(rawValue: s) else {
                throw .typeError("The platform '\(s)' is not one of \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            platform = p
        case "osVersion": osVersion = try optionalVersion()
        case "playServicesVersion": playServicesVersion = try optionalVersion()
        case "passcodeSet": passcodeSet = try bool()
        case "automaticPasskeyUpgrades": automaticPasskeyUpgrades = try bool()
        case "passkeysEnabled": passkeysEnabled = try bool()
        default:
            throw .typeError("'\(key)' is not a profile setting; the settings are \(Profile.settingNames.joined(separator: ", ")).")
        }
    }
}
