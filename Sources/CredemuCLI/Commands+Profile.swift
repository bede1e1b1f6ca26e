import CredemuEngine
import CredemuOperations
import Foundation
import Vault
import WebAuthn

extension Option {
    /// Every profile setting as an option, in `Profile.settingNames`' order: what `profile create` and `profile set` take.
    static let profileSettings: [Option] = Profile.settingNames.compactMap { setting[$0] }
    /// Every device setting as an option, in `Device.settingNames`' order: what `device create` and `device set` take.
    static let deviceSettings: [Option] = Device.settingNames.compactMap { setting[$0] }

    /// The help of each profile and device setting by name (a setting missing here is not offered: a test fails).
    private static let setting: [String: Option] = {
        let section = "Settings (the word null returns one to its default):"
        let platforms = Platform.allCases.map(\.rawValue).joined(separator: ", ")
        let options = [
            Option("pack", .text("ID"), "The policy pack (new profiles: gpm); `credemu providers` lists them.", section: section),
            Option("packPath", .text("FILE"), "Your own pack file, played instead of --pack's.", section: section),
            Option("platform", .text("P"), "The platform: \(platforms) (new ones: chrome-desktop).", section: section),
            Option("osVersion", .text("V"), "The OS version; unset is a current device.", section: section),
            Option("playServicesVersion", .text("V"), "Google Play services' version on Android; unset is current.", section: section),
            Option("passcodeSet", .text("true|false"), "Whether the device has a passcode or screen lock.", section: section),
            Option("automaticPasskeyUpgrades", .text("true|false"),
                   "false is the opt-out from automatic passkey upgrades; it holds on every platform of the account.", section: section),
            Option("passkeysEnabled", .text("true|false"), "The user's passkeys setting.", section: section),
            Option("browserSignedIn", .text("true|false"), "Signed in to the browser (GPM desktop upgrades need it and sync).",
                   section: section),
            Option("syncEnabled", .text("true|false"), "Sync on (GPM desktop upgrades need it and the sign-in).", section: section),
            Option("privateBrowsing", .text("true|false"), "A private tab (Safari does not upgrade in one).", section: section),
            Option("browserVersion", .text("V"), "Chrome's or Safari's version; related origin requests need Chrome 128 or Safari 18.",
                   section: section),
            Option("relatedOrigins", .json, """
                The RPs' related origins, {"example.com": ["https://example.co.uk"]}: what
                https://example.com/.well-known/webauthn would list (credemu never fetches it).
                """, section: section),
            Option("authenticator", .json, """
                A security key's hardware (profiles of the security-key pack), WebAuthn L3 §11.1's options:
                {"protocol": "ctap2_1"|"ctap2"|"ctap1/u2f", "transport": "usb", "hasResidentKey": true,
                "hasUserVerification": true, "isUserConsenting": true, "isUserVerified": true, "extensions": [...],
                "defaultBackupEligibility": false, "defaultBackupState": false, "residentKeyCapacity": 25, "minPinLength": 4,
                "minPinLengthRPIDs": [...]}; members given change, the rest stay.
                """, section: section),
            Option("authenticators", .text("K1,K2"), """
                The security keys plugged in (security-key profiles), at most \(Profile.roamingLimit): the browser's sheet
                offers them beside the password manager (`user next use:KEY` picks one).
                """, section: section),
            Option("phones", .text("D1,D2"), """
                The phones linked to the browser (chrome-android, android or ios devices), at most \(Profile.roamingLimit);
                `user next use:PHONE` reaches one over hybrid (any other phone device by the QR code).
                """, section: section),
            Option("providers", .text("P1,P2"), """
                The provider accounts (profiles), at most \(Device.providerLimit), in the user's order, each with a pack that
                models the device's platform; a new device needs them.
                """, section: section),
            Option("preferred", .text("P"), "Android's preferred service (the first provider when unset).", section: section),
        ]
        return Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }()
}

extension Positional {
    static let profileName = Positional("NAME", "a profile name")
    static let deviceName = Positional("NAME", "a device name")
}

extension Commands {
    static let profile: Command = Command(
        "profile", summary: "Create, list, show, change and remove provider profiles.",
        discussion: """
        A profile is one provider account: a pack on a platform, the device state it runs with on its own, and the
        user's settings. A change is logged as a setting event.
        """,
        subcommands: [
            Command("list", summary: "Every profile with its settings.") { context, _ in
                context.printJSON(.array(try context.perform { (ops) throws(OperationError) in try ops.listProfiles() }))
                return .success
            },
            Command("show", summary: "One profile (default: --profile).",
                    positionals: [Positional("NAME", "a profile name (default: --profile)", optional: true)]) { context, args in
                let name = args.argument("NAME") ?? context.profileName
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.profile(name).json })
                return .success
            },
            settingsCommand("create", summary: "A new profile; --pack defaults to gpm, --platform to chrome-desktop.",
                            .profileName, Option.profileSettings) { (ops, name, settings) throws(OperationError) in
                try ops.createProfile(name, settings: settings, allowPackPath: true).json
            },
            settingsCommand("set", summary: "Change settings (logged as a setting event).",
                            .profileName, Option.profileSettings) { (ops, name, settings) throws(OperationError) in
                try ops.updateProfile(name, settings: settings, allowPackPath: true).json
            },
            Command("remove", summary: "Delete a profile with its passwords, passkeys and events.", positionals: [.profileName]) { context, args in
                let name = args.argument("NAME") ?? ""
                try context.perform { (ops) throws(OperationError) in try ops.removeProfile(name) }
                context.printJSON(.object([("removed", .string(name))]))
                return .success
            },
        ])

    static let device: Command = Command(
        "device", summary: "Devices: a platform with several provider accounts (profiles), one preferred.",
        discussion: """
        The device's state replaces each account's own in its ceremonies; the accounts' settings (the opt-out) and
        credentials are shared by every device that names them.

        Where ceremonies go (credemu --device NAME create|get|offer|signal|capabilities): a browser extension
        (device.integration extension) takes creates and answers gets first; else the preferred provider on Android and
        Apple platforms, the browser's own manager on desktop. Gets and the autofill dropdown offer every provider's
        passkeys; signals go to the built-in manager and, on Android 14+ (and Apple 26, unconfirmed), to every enabled OS
        provider, never to an extension.
        """,
        subcommands: [
            Command("list", summary: "Every device with its settings.") { context, _ in
                context.printJSON(.array(try context.perform { (ops) throws(OperationError) in try ops.listDevices() }))
                return .success
            },
            Command("show", summary: "One device.",
                    positionals: [Positional("NAME", "a device name (default: --device)", optional: true)]) { context, args in
                let name = try context.deviceArgument(args, "show")
                context.printJSON(try context.perform { (ops) throws(OperationError) in try ops.device(name).json })
                return .success
            },
            settingsCommand("create", summary: "A new device; --providers names its provider accounts.",
                            .deviceName, Option.deviceSettings) { (ops, name, settings) throws(OperationError) in
                try ops.createDevice(name, settings: settings).json
            },
            settingsCommand("set", summary: "Change settings (logged in each provider account).",
                            .deviceName, Option.deviceSettings) { (ops, name, settings) throws(OperationError) in
                try ops.updateDevice(name, settings: settings).json
            },
            Command("remove", summary: "Delete the device; its accounts stay.",
                    positionals: [Positional("NAME", "a device name (default: --device)", optional: true)]) { context, args in
                let name = try context.deviceArgument(args, "remove")
                try context.perform { (ops) throws(OperationError) in try ops.removeDevice(name) }
                context.printJSON(.object([("removed", .string(name))]))
                return .success
            },
        ])

    /// `create` or `set` of a profile or device: its NAME and settings, given as options, to `apply`; prints its answer.
    private static func settingsCommand(
        _ name: String, summary: String, _ target: Positional, _ settings: [Option],
        _ apply: @escaping @Sendable (Operations, String, [(String, JSONValue)]) throws(OperationError) -> JSONValue
    ) -> Command {
        Command(name, summary: summary, positionals: [target], options: settings) { context, args in
            let (named, values) = (args.argument(target.name) ?? "", context.settingFlags(args, settings))
            context.printJSON(try context.perform { (ops) throws(OperationError) in try apply(ops, named, values) })
            return .success
        }
    }
}

extension Context {
    /// The settings given as `--NAME VALUE` options, in the declared order: `null` unsets one, a JSON setting
    /// (`relatedOrigins`) is given parsed.
    func settingFlags(_ args: Arguments, _ settings: [Option]) -> [(String, JSONValue)] {
        settings.compactMap { setting in
            args.value(setting.name).map { text in
                if text == "null" { return (setting.name, .null) }
                if case .json = setting.value, let json = try? JSONValue.parse(text) { return (setting.name, json) }
                return (setting.name, .string(text))
            }
        }
    }

    /// `device show|remove [NAME]`: the name, else `--device`.
    func deviceArgument(_ args: Arguments, _ sub: String) throws(UsageError) -> String {
        guard let name = args.argument("NAME") ?? deviceName else { throw UsageError("device \(sub) needs a device name.") }
        return name
    }
}
