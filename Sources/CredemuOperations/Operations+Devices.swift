import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    // MARK: Devices

    /// Every device's settings, by name.
    public func listDevices() throws(OperationError) -> [JSONValue] {
        try stored { () throws(VaultError) in try vault.allDevices() }.map(\.settings)
    }

    /// A device by name.
    public func device(_ name: String) throws(OperationError) -> Device {
        guard let settings = try stored({ () throws(VaultError) in try vault.deviceSettings(name) }) else {
            throw .notFound("No device '\(name)'; create it with 'credemu device create \(name) --providers PROFILE,...' or POST /devices.")
        }
        do {
            return try Device(name: name, json: settings)
        } catch {
            throw OperationError(.configuration, .configuration(error.kind), "The stored settings of device '\(name)' are unreadable: \(error.message)")
        }
    }

    /// A new device with `settings` applied; `providers` is required.
    public func createDevice(_ name: String, settings: [(String, JSONValue)]) throws(OperationError) -> Device {
        try Operations.checkProfileName(name, what: "device")
        if try stored({ () throws(VaultError) in try vault.deviceSettings(name) }) != nil {
            throw .conflict("The device '\(name)' exists already.")
        }
        guard settings.contains(where: { $0.0 == "providers" }) else {
            throw .invalidInput("A device needs providers: the profiles (provider accounts) enabled on it, in the user's order.")
        }
        var device = Device(name: name)
        try apply(settings, to: &device)
        try save(device, outcome: "created", changed: settings)
        return device
    }

    /// Changes settings of an existing device.
    public func updateDevice(_ name: String, settings: [(String, JSONValue)]) throws(OperationError) -> Device {
        var device = try device(name)
        try apply(settings, to: &device)
        try save(device, outcome: "changed", changed: settings)
        return device
    }

    /// Deletes a device; its provider accounts stay.
    public func removeDevice(_ name: String) throws(OperationError) {
        try leases.remove(.device(name)) { () throws(OperationError) in
            ceremonies.wake()
            guard try stored({ () throws(VaultError) in try vault.removeDevice(name) }) else { throw .notFound("No device '\(name)'.") }
            forgetDevice(name)
            forgeries.remove(.device(name))
        }
    }

    /// The devices that name a profile among their providers.
    func devices(using profile: String) throws(OperationError) -> [String] {
        try stored { () throws(VaultError) in try vault.allDevices() }.compactMap { entry in
            (entry.settings["providers"]?.arrayValue ?? []).contains { $0.stringValue == profile } ? entry.name : nil
        }
    }

    /// Applies settings, then checks the device: the preferred account is one of its providers, each provider is a
    /// profile, and each profile's pack models the device's platform.
    private func apply(_ settings: [(String, JSONValue)], to device: inout Device) throws(OperationError) {
        do {
            for (key, value) in settings where key != "name" { try device.set(key, value) }
            try device.checked()
        } catch {
            throw .configuration(error)
        }
        try checkRoaming(device.state)
        for account in device.providers {
            let policy = try policy(for: try profile(account))
            guard policy.platforms.contains(device.platform) else {
                throw .invalidInput("The profile '\(account)' plays the pack '\(policy.id)', which does not model the platform '\(device.platform.rawValue)' of device \(device.name); it models \(policy.platforms.map(\.rawValue).joined(separator: ", ")).")
            }
        }
    }

    private func save(_ device: Device, outcome: String, changed: [(String, JSONValue)]) throws(OperationError) {
        let now = clock.now()
        try stored { () throws(VaultError) in try vault.saveDevice(device.name, settings: device.json, at: now) }
        for account in device.providers {
            log(account, "setting", "device", [("device", .string(device.name)), ("outcome", .string(outcome))]
                + changed.filter { $0.0 != "name" }.map { ("device." + $0.0, $0.1) })
        }
        forgetDevice(device.name)
    }

    /// The ceremonies of a device: an engine per provider account, running on the device.
    ///
    /// - Parameter overHybrid: the device is a phone answering a desktop's sheet; its own sheet is not used then.
    public func session(_ name: String, overHybrid: Bool = false) throws(OperationError) -> DeviceSession {
        let device = try device(name)
        var engines: [Engine] = []
        for account in device.providers { engines.append(try engine(account, on: device, overHybrid: overHybrid)) }
        let sheet = overHybrid ? Sheet(queue: deviceQueue(name)) : try self.sheet(device.state, queue: deviceQueue(name), device: device)
        return DeviceSession(device: device, engines: engines, sheet: sheet)
    }
}
