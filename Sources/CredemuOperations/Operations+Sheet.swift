import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// The queue of a device's simulated user at its browser's sheet (`use:NAME`, and a cancel of the sheet itself):
    /// kept beside the profiles' under a name no profile can have.
    func deviceQueue(_ device: String) -> Vault { vault.scoped(to: "device:" + device) }

    /// The browser's sheet for a target whose device state is `state`: the keys plugged in, the phones it reaches,
    /// and the target's queue (`queue`). `device` is the device itself, nil for a profile's own.
    func sheet(_ state: Profile, queue: Vault, device: Device?) throws(OperationError) -> Sheet {
        var keys: [Engine] = []
        for name in state.authenticators { keys.append(try keyEngine(name, on: device)) }
        let linked = Set(state.phones)
        let here = device?.name
        return Sheet(keys: keys, queue: queue) { [self] (name) throws(CeremonyError) -> Sheet.Phone? in
            guard name != here, let phone = try? self.device(name), phone.platform.isPhone else { return nil }
            do {
                return Sheet.Phone(name: name, linked: linked.contains(name), session: try self.session(name, overHybrid: true))
            } catch {
                throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the phone \(name) cannot answer: \((error as? OperationError)?.message ?? String(describing: error))"),
                                    reason: .noProvider)
            }
        }
    }

    /// A security key's engine, plugged into `device` (or its profile's own platform): a key answers on any
    /// platform, with its pack's knobs.
    func keyEngine(_ name: String, on device: Device?) throws(OperationError) -> Engine {
        var profile = try profile(name)
        let policy = try policy(for: profile)
        guard policy.knobs(for: profile.platform).model == .securityKey else {
            throw .invalidInput("'\(name)' is plugged in as a security key, but its pack '\(profile.pack)' is a passkey provider; plug in a profile of the security-key pack.")
        }
        if let device { profile = profile.on(device) }
        return try cachedEngine(EngineKey(profile: name, platform: profile.platform, device: device?.name), profile) { () throws(OperationError) in policy }
    }

    /// Refuses keys that are not security keys and phones that are not phone devices, by name.
    func checkRoaming(_ state: Profile) throws(OperationError) {
        // A setting naming what does not exist is the setting's error (400), not a missing resource of the request's.
        func named<T>(_ what: String, _ name: String, _ look: () throws(OperationError) -> T) throws(OperationError) -> T {
            do { return try look() } catch where error.code == .notFound {
                throw .invalidInput("\(what) '\(name)' does not exist: \(error.message)")
            }
        }
        for name in state.authenticators { _ = try named("The security key", name) { () throws(OperationError) in try keyEngine(name, on: nil) } }
        for name in state.phones {
            let phone = try named("The linked phone", name) { () throws(OperationError) in try device(name) }
            guard phone.platform.isPhone else {
                throw .invalidInput("The linked phone '\(name)' is a \(phone.platform.rawValue) device; a phone is a chrome-android, android or ios device.")
            }
        }
    }
}

extension Platform {
    /// A phone the desktop reaches over hybrid: Android (Chrome or an app, GPM through Play services) or an iPhone.
    public var isPhone: Bool { self == .chromeAndroid || self == .android || self == .ios }
}
