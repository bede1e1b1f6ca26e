import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// The queue of a device's simulated user at its browser's sheet (`use:NAME`, and a cancel of the sheet itself):
    /// kept beside the profiles' under a name no profile can have.
    func deviceQueue(_ device: String) -> Vault { vault.scoped(to: "device:" + device) }

    /// The browser's sheet for a target whose device state is `state` (`Sheet.build`): the keys plugged in, the
    /// phones it reaches, and the target's queue (`queue`). `device` is the device itself, nil for a profile's own.
    func sheet(_ state: Profile, queue: Vault, device: Device?) throws(OperationError) -> Sheet {
        try Sheet.build(for: state, queue: queue, here: device?.name, key: { (name) throws(OperationError) in try keyEngine(name, on: device) },
                        notAKey: { .invalidInput(Sheet.notAKeyMessage($0, $1)) },
                        device: { [self] in try? self.device($0) }, hybrid: { [self] in try self.session($0.name, overHybrid: true) })
    }

    /// A security key's engine, plugged into `device` (or its profile's own platform): a key answers on any
    /// platform, with its pack's knobs.
    func keyEngine(_ name: String, on device: Device?) throws(OperationError) -> Engine {
        var profile = try profile(name)
        if let device { profile = profile.on(device) }
        return try cachedEngine(EngineKey(profile: name, platform: profile.platform, device: device?.name), profile) { () throws(OperationError) in
            try policy(for: profile)
        }
    }

    /// Refuses keys that are not security keys and phones that are not phone devices, by name.
    func checkRoaming(_ state: Profile) throws(OperationError) {
        // A setting naming what does not exist is the setting's error (400), not a missing resource of the request's.
        func named<T>(_ what: String, _ name: String, _ look: () throws(OperationError) -> T) throws(OperationError) -> T {
            do { return try look() } catch where error.code == .notFound {
                throw .invalidInput("\(what) '\(name)' does not exist: \(error.message)")
            }
        }
        _ = try named("A security key", state.authenticators.joined(separator: ", ")) { () throws(OperationError) in
            try sheet(state, queue: vault, device: nil)
        }
        for name in state.phones {
            let phone = try named("The linked phone", name) { () throws(OperationError) in try device(name) }
            guard phone.platform.isPhone else {
                throw .invalidInput("The linked phone '\(name)' is a \(phone.platform.rawValue) device; a phone is a chrome-android, android or ios device.")
            }
        }
    }
}
