import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// Every profile's settings; `default` is created first if it is missing.
    public func listProfiles() throws(OperationError) -> [JSONValue] {
        _ = try profile(Vault.defaultProfile)
        return try stored { () throws(VaultError) in try vault.allProfiles() }.map(\.settings)
    }

    /// A new profile with `settings` applied over the defaults.
    ///
    /// `packPath` names a file to read, so only a trusted front end (the CLI) may set it.
    public func createProfile(_ name: String, settings: [(String, JSONValue)], allowPackPath: Bool) throws(OperationError) -> Profile {
        try Operations.checkProfileName(name)
        if try stored({ () throws(VaultError) in try vault.profileSettings(name) }) != nil {
            throw .conflict("The profile '\(name)' exists already.")
        }
        var profile = Profile(name: name)
        try apply(settings, to: &profile, allowPackPath: allowPackPath)
        try save(profile, outcome: "created", changed: settings)
        return profile
    }

    /// Changes settings of an existing profile (`default` is created first if missing).
    public func updateProfile(_ name: String, settings: [(String, JSONValue)], allowPackPath: Bool) throws(OperationError) -> Profile {
        var profile = try profile(name)
        try apply(settings, to: &profile, allowPackPath: allowPackPath)
        try save(profile, outcome: "changed", changed: settings)
        return profile
    }

    /// Deletes a profile; one a device still names is refused (change or remove the device first).
    ///
    /// Its ceremonies in flight end first (`TargetLeases`): a held or waiting one fails with NotAllowedError, and
    /// none writes for the name after the delete, so a profile made later under it starts empty.
    public func removeProfile(_ name: String) throws(OperationError) {
        let devices = try devices(using: name)
        guard devices.isEmpty else {
            throw .conflict("The profile '\(name)' is a provider account of device \(devices.joined(separator: ", ")); change its providers or remove it first.")
        }
        try leases.remove(.profile(name)) { () throws(OperationError) in
            holds.removeProfile(name)
            forgeries.remove(.profile(name))
            ceremonies.wake()
            guard try stored({ () throws(VaultError) in try vault.removeProfile(name) }) else { throw .notFound("No profile '\(name)'.") }
            forget(name)
        }
    }

    /// Letters, digits, '-', '_' and '.', 1 to 64 of them: a name that is safe in a URL path and a file name.
    static func checkProfileName(_ name: String, what: String = "profile") throws(OperationError) {
        guard Profile.isValidName(name) else {
            throw .invalidInput("A \(what) name is 1 to 64 letters, digits, '-', '_' and '.'.")
        }
    }

    /// Applies settings in order, then checks the result against its pack: the pack must load and model the
    /// platform. A pack change without a platform moves to the new pack's default platform when the old one
    /// is not modelled.
    private func apply(_ settings: [(String, JSONValue)], to profile: inout Profile, allowPackPath: Bool) throws(OperationError) {
        for (key, value) in settings where key != "name" {
            if key == "packPath" && !allowPackPath && !value.isNull {
                throw .invalidInput("packPath can only be set from the command line: the API does not read files a request names.")
            }
            do {
                try profile.set(key, value)
            } catch {
                throw .configuration(error)
            }
        }
        let policy = try policy(for: profile)
        try checkAuthenticatorOptions(&profile, policy)
        try checkRoaming(profile)
        guard !policy.platforms.contains(profile.platform) else { return }
        if settings.contains(where: { $0.0 == "platform" }) {
            _ = try platform(profile.platform.rawValue, for: policy)
        }
        profile.platform = (policy as? PolicyPack)?.defaultPlatform ?? policy.platforms.first ?? profile.platform
    }

    private func save(_ profile: Profile, outcome: String, changed: [(String, JSONValue)]) throws(OperationError) {
        let now = clock.now()
        try stored { () throws(VaultError) in
            try vault.saveProfile(profile.name, settings: profile.json, at: now)
            try vault.scoped(to: profile.name).appendEvent(kind: "setting", outcome: outcome, reason: "success",
                                                           detail: .object(changed.filter { $0.0 != "name" }), at: now)
        }
        forget(profile.name)
    }

    /// A security key's profile always shows its hardware (the defaults until set); a provider's has none.
    private func checkAuthenticatorOptions(_ profile: inout Profile, _ policy: any ProviderPolicy) throws(OperationError) {
        let isKey = policy.knobs(for: profile.platform).model == .securityKey
        if isKey, profile.authenticator == nil { profile.authenticator = AuthenticatorOptions() }
        if !isKey, profile.authenticator != nil {
            throw .configuration(InvalidConfiguration(.profileSetting, "profile.authenticator sets a security key's hardware, and the pack '\(profile.pack)' is a passkey provider; use a pack whose authenticator.model is securityKey (security-key), or leave it out."))
        }
        if isKey, !profile.authenticators.isEmpty || !profile.phones.isEmpty {
            throw .configuration(InvalidConfiguration(.profileSetting, "profile.authenticators and profile.phones belong to a device or a provider's profile; a security key cannot have keys plugged into it."))
        }
    }
}
