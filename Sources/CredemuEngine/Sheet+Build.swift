import Vault

extension Sheet {
    /// The browser's sheet for a target whose device state is `state`: the security keys plugged in and the phones it
    /// reaches, with the target's queue (`queue`); every caller that runs ceremonies (the operations layer, the
    /// scenario runner) makes it here, with its own look-ups.
    ///
    /// - Parameters:
    ///   - here: the target's own device, which is never its own phone; nil for a profile's own platform.
    ///   - key: a plugged-in profile's engine as it runs on the target; one whose pack is no security key is refused
    ///     with `notAKey`.
    ///   - device: a device by name, nil when there is none; a phone device is one the desktop reaches (linked, or
    ///     any other by the QR code).
    ///   - hybrid: the phone's session, its accounts answering over hybrid (`Profile.overHybrid`).
    public static func build<Failure: Error>(for state: Profile, queue: Vault, here: String?,
                                             key: (String) throws(Failure) -> Engine,
                                             notAKey: (String, Engine) -> Failure,
                                             device: @escaping @Sendable (String) -> Device?,
                                             hybrid: @escaping @Sendable (Device) throws -> DeviceSession) throws(Failure) -> Sheet {
        var keys: [Engine] = []
        for name in state.authenticators {
            let engine = try key(name)
            guard engine.knobs.model == .securityKey else { throw notAKey(name, engine) }
            keys.append(engine)
        }
        let linked = Set(state.phones)
        return Sheet(keys: keys, queue: queue) { (name) throws(CeremonyError) -> Phone? in
            guard name != here, let phone = device(name), phone.platform.isPhone else { return nil }
            do {
                return Phone(name: name, linked: linked.contains(name), session: try hybrid(phone))
            } catch {
                throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: the phone \(name) cannot answer: \(error)"),
                                    reason: .noProvider)
            }
        }
    }

    /// The refusal of a plugged-in profile whose pack is a passkey provider.
    public static func notAKeyMessage(_ name: String, _ engine: Engine) -> String {
        "'\(name)' is plugged in as a security key, but its pack '\(engine.profile.pack)' is a passkey provider; plug in a profile of the security-key pack."
    }
}
