import WebAuthn

/// One device: a platform, the device's state, and the provider accounts enabled on it in the user's order, one of
/// them preferred.
///
/// A provider account is a profile: its passkeys, passwords and user settings (the opt-out, passkeys on or off)
/// belong to the account, so two devices that name one profile share them, as two devices signed in to one GPM
/// account do (the opt-out "syncs": developer.chrome.com/blog/automatic-passkey-creation-android). The device's
/// state replaces the profile's own when a ceremony runs on the device (`Profile.on(_:)`).
public struct Device: Equatable, Sendable {
    public var name: String
    /// The platform and device state, held in a profile's fields so one reader checks them (`Profile.apply`).
    public var state: Profile
    /// The enabled provider accounts (profile names), in the order the user set them.
    public var providers: [String]
    /// The preferred provider (Android 14+'s "preferred service", Apple's choice for new passkeys); the first when unset.
    public var preferred: String?

    /// The device settings that are the device's state, not an account's.
    public static let stateNames = ["platform", "osVersion", "playServicesVersion", "passcodeSet", "browserSignedIn", "syncEnabled",
                                    "privateBrowsing", "browserVersion", "authenticators", "phones"]
    /// Every setting a caller may give.
    public static let settingNames = stateNames + ["providers", "preferred"]
    /// The most provider accounts one device holds.
    public static let providerLimit = 8

    public init(name: String, platform: Platform = .chromeDesktop, providers: [String] = [], preferred: String? = nil) {
        self.name = name
        state = Profile(name: name, platform: platform)
        self.providers = providers
        self.preferred = preferred
    }

    public var platform: Platform { state.platform }

    /// The preferred account, or the first.
    public var preferredProvider: String? { preferred ?? providers.first }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("name", .string(name))]
        for key in Device.stateNames { if let value = state.json[key] { members.append((key, value)) } }
        members.append(("providers", .array(providers.map(JSONValue.string))))
        members.append(("preferred", preferred.map(JSONValue.string) ?? .null))
        return .object(members)
    }

    /// The device from its stored settings.
    public init(name: String, json: JSONValue) throws(InvalidConfiguration) {
        self.init(name: name)
        try InvalidConfiguration.reading(.deviceSetting) { () throws(InvalidConfiguration.Field) in
            for (key, value) in try ConfigurationFields(json, path: "device").members where key != "name" {
                try apply(key, value, at: "device")
            }
            try checkPreferred(at: "device")
        }
    }

    /// Changes one setting; a wrong name or value is an `InvalidConfiguration` naming it. The preferred account
    /// must stay one of the providers (`checked()`).
    public mutating func set(_ key: String, _ value: JSONValue) throws(InvalidConfiguration) {
        try InvalidConfiguration.reading(.deviceSetting) { () throws(InvalidConfiguration.Field) in try apply(key, value, at: "device") }
    }

    /// Refuses a preferred account that is not among the providers.
    public func checked() throws(InvalidConfiguration) {
        try InvalidConfiguration.reading(.deviceSetting) { () throws(InvalidConfiguration.Field) in try checkPreferred(at: "device") }
    }

    private func checkPreferred(at path: OptionsPath) throws(InvalidConfiguration.Field) {
        guard let preferred, !providers.contains(preferred) else { return }
        throw .invalidField("\(path).preferred '\(preferred)' is not one of the device's providers (\(providers.joined(separator: ", "))).")
    }

    public mutating func apply(_ key: String, _ value: JSONValue, at path: OptionsPath) throws(InvalidConfiguration.Field) {
        let setting = try ConfigurationFields(.object([(key, value)]), path: path)
        switch key {
        case _ where Device.stateNames.contains(key):
            try state.apply(key, value, at: path)
        case "providers":
            // The command line gives a comma-separated list.
            let names: [String]
            if let text = value.stringValue { names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } else { names = try setting.strings(key) }
            guard (1...Device.providerLimit).contains(names.count), Set(names).count == names.count,
                  names.allSatisfy(Profile.isValidName) else {
                throw setting.invalid(key, "must list 1 to \(Device.providerLimit) distinct profile names, in the user's order")
            }
            providers = names
        case "preferred":
            guard let name = try setting.string(key) else { preferred = nil; return }
            guard Profile.isValidName(name) else { throw setting.invalid(key, "must be a profile name") }
            preferred = name
        default:
            throw .invalidField("'\(key)' is not a device setting; the settings are \(Device.settingNames.joined(separator: ", ")).")
        }
    }

}

extension Profile {
    /// A profile's (or a device's) name: 1 to 64 letters, digits, '-', '_' and '.', safe in a URL path and a file name.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name != "." && name != ".."
            && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) || "-_.".utf8.contains($0) }
    }

    /// The account as it runs on `device`: the device's platform and state over the profile's own, and the device
    /// named in its events.
    public func on(_ device: Device) -> Profile {
        var p = self
        p.platform = device.state.platform
        p.osVersion = device.state.osVersion
        p.playServicesVersion = device.state.playServicesVersion
        p.passcodeSet = device.state.passcodeSet
        p.browserSignedIn = device.state.browserSignedIn
        p.syncEnabled = device.state.syncEnabled
        p.privateBrowsing = device.state.privateBrowsing
        p.browserVersion = device.state.browserVersion
        p.authenticators = device.state.authenticators
        p.phones = device.state.phones
        p.device = device.name
        return p
    }
}
