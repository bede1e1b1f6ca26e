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
    /// Device state, not the account's: the browser profile is signed in to the provider's account, and syncs
    /// passwords (GPM desktop counts only passwords in its account or synced store: providers.md §2.1).
    public var browserSignedIn: Bool
    public var syncEnabled: Bool
    /// The ceremonies run in a private-browsing tab (Safari's system check "Is this a non-private browsing tab?",
    /// seed 001).
    public var privateBrowsing: Bool
    /// The browser's version (Chrome's or Safari's; nil: a current one): features a browser added later, such as related
    /// origin requests, are gated on it.
    public var browserVersion: String?
    /// Each RP ID's `https://RPID/.well-known/webauthn` `origins` (WebAuthn L3 §5.11), as the RP would serve it: credemu
    /// never fetches it, the test gives it.
    public var relatedOrigins: [String: [String]] = [:]
    /// The device the account runs on for this ceremony (`on(_:)`), named in its events; nil for the profile's own.
    public var device: String?
    /// A security key's hardware (`AuthenticatorOptions`), for a profile whose pack's model is `securityKey`.
    public var authenticator: AuthenticatorOptions?
    /// Device state: the security keys plugged in (profiles whose pack is a security key), which the browser's sheet
    /// offers beside its own manager.
    public var authenticators: [String] = []
    /// Device state: the phones linked to the browser (device names), which its sheet lists for hybrid; any other
    /// phone device is reached by scanning the QR code.
    public var phones: [String] = []
    /// The account answers from a phone, reached over hybrid by a desktop's sheet (`Sheet`): its credentials
    /// report the cross-platform attachment and the hybrid transport. Never stored.
    public var overHybrid = false
    /// The most keys plugged into, and phones linked to, one device.
    public static let roamingLimit = 8

    public init(name: String, pack: String = "gpm", packPath: String? = nil, platform: Platform = .chromeDesktop,
                osVersion: String? = nil, playServicesVersion: String? = nil, passcodeSet: Bool = true,
                automaticPasskeyUpgrades: Bool = true, passkeysEnabled: Bool = true, browserSignedIn: Bool = true,
                syncEnabled: Bool = true, privateBrowsing: Bool = false) {
        self.name = name
        self.pack = pack
        self.packPath = packPath
        self.platform = platform
        self.osVersion = osVersion
        self.playServicesVersion = playServicesVersion
        self.passcodeSet = passcodeSet
        self.automaticPasskeyUpgrades = automaticPasskeyUpgrades
        self.passkeysEnabled = passkeysEnabled
        self.browserSignedIn = browserSignedIn
        self.syncEnabled = syncEnabled
        self.privateBrowsing = privateBrowsing
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
            ("browserSignedIn", .bool(browserSignedIn)),
            ("syncEnabled", .bool(syncEnabled)),
            ("privateBrowsing", .bool(privateBrowsing)),
            ("browserVersion", browserVersion.map(JSONValue.string) ?? .null),
            ("relatedOrigins", .object(relatedOrigins.sorted { $0.key < $1.key }.map { ($0.key, .array($0.value.map(JSONValue.string))) })),
            ("authenticators", .array(authenticators.map(JSONValue.string))),
            ("phones", .array(phones.map(JSONValue.string))),
        ] + (authenticator.map { [("authenticator", $0.json)] } ?? []))
    }

    /// The settings a caller may change, and what each takes.
    public static let settingNames = ["pack", "packPath", "platform", "osVersion", "playServicesVersion", "passcodeSet",
                                      "automaticPasskeyUpgrades", "passkeysEnabled", "browserSignedIn", "syncEnabled", "privateBrowsing",
                                      "browserVersion", "relatedOrigins", "authenticator", "authenticators", "phones"]

    /// The profile from its stored settings.
    public init(name: String, json: JSONValue) throws(InvalidConfiguration) {
        self.init(name: name)
        try InvalidConfiguration.reading(.profileSetting) { () throws(InvalidConfiguration.Field) in
            for (key, value) in try ConfigurationFields(json, path: "profile").members where key != "name" {
                try apply(key, value, at: "profile")
            }
        }
    }

    /// Changes one setting; a wrong name or value is an `InvalidConfiguration` naming it.
    public mutating func set(_ key: String, _ value: JSONValue) throws(InvalidConfiguration) {
        try InvalidConfiguration.reading(.profileSetting) { () throws(InvalidConfiguration.Field) in try apply(key, value, at: "profile") }
    }

    /// Changes one setting; failures name `path.key` (a scenario's setting step gives the step's path).
    public mutating func apply(_ key: String, _ value: JSONValue, at path: OptionsPath) throws(InvalidConfiguration.Field) {
        let setting = try ConfigurationFields(.object([(key, value)]), path: path)
        func version() throws(InvalidConfiguration.Field) -> String? {
            guard let s = try setting.string(key) else { return nil }
            guard Version(s) != nil else { throw setting.invalid(key, "must be a dotted version such as 25.13, not \"\(s)\"") }
            return s
        }
        func bool() throws(InvalidConfiguration.Field) -> Bool {
            // The command line gives every value as text.
            let words = ["true": true, "false": false, "on": true, "off": false]
            guard let b = value.boolValue ?? value.stringValue.flatMap({ words[$0] }) else {
                throw setting.invalid(key, "must be true or false, not \(value.serialized())")
            }
            return b
        }
        switch key {
        case "pack": pack = try setting.requiredString(key)
        case "packPath": packPath = try setting.string(key)
        case "platform":
            let s = try setting.requiredString(key)
            guard let p = Platform(rawValue: s) else {
                throw setting.invalid(key, "must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(s)\"")
            }
            platform = p
        case "osVersion": osVersion = try version()
        case "playServicesVersion": playServicesVersion = try version()
        case "passcodeSet": passcodeSet = try bool()
        case "automaticPasskeyUpgrades": automaticPasskeyUpgrades = try bool()
        case "passkeysEnabled": passkeysEnabled = try bool()
        case "browserSignedIn": browserSignedIn = try bool()
        case "syncEnabled": syncEnabled = try bool()
        case "privateBrowsing": privateBrowsing = try bool()
        case "browserVersion": browserVersion = try version()
        case "relatedOrigins":
            // An RP ID to the origins its well-known file lists; bounded so a stored profile stays small.
            guard let members = value.objectValue, members.count <= 64,
                  members.allSatisfy({ RelyingPartyID.isValidDomain($0.0) && ($0.1.arrayValue.map { $0.count <= 1000 && $0.allSatisfy { $0.stringValue != nil } } ?? false) })
            else {
                throw setting.invalid(key, "must map up to 64 RP IDs (domains) to lists of up to 1000 origin strings, as {\"example.com\": [\"https://example.co.uk\"]}")
            }
            relatedOrigins = Dictionary(members.map { ($0.0, $0.1.arrayValue!.compactMap(\.stringValue)) }, uniquingKeysWith: { _, last in last })
        case "authenticator":
            if value == .null { authenticator = nil; break }
            var options = authenticator ?? AuthenticatorOptions()
            try options.apply(value, at: .member(path, key))
            authenticator = options
        case "authenticators", "phones":
            let names = value.isNull ? [] : try Profile.nameList(value, setting)
            if key == "authenticators" { authenticators = names } else { phones = names }
        default:
            throw .invalidField("'\(key)' is not a profile setting; the settings are \(Profile.settingNames.joined(separator: ", ")).")
        }
    }
}

extension Profile {
    /// A list of profile or device names (the command line gives them comma-separated), at most `roamingLimit`,
    /// each once.
    static func nameList(_ value: JSONValue, _ setting: ConfigurationFields) throws(InvalidConfiguration.Field) -> [String] {
        let key = setting.members.first?.0 ?? "names"
        let names: [String]
        if let text = value.stringValue {
            names = text.split(separator: ",", omittingEmptySubsequences: true).map { String($0) }
        } else if let list = value.arrayValue, list.allSatisfy({ $0.stringValue != nil }) {
            names = list.compactMap(\.stringValue)
        } else {
            throw setting.invalid(key, "must be a list of names")
        }
        guard names.count <= Profile.roamingLimit, names.allSatisfy(Profile.isValidName), Set(names).count == names.count else {
            throw setting.invalid(key, "must list at most \(Profile.roamingLimit) distinct names of 1 to 64 letters, digits, '-', '_' and '.'")
        }
        return names
    }
}
