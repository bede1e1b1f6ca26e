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
        guard try stored({ () throws(VaultError) in try vault.removeDevice(name) }) else { throw .notFound("No device '\(name)'.") }
        forgetDevice(name)
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
    public func session(_ name: String) throws(OperationError) -> DeviceSession {
        let device = try device(name)
        var engines: [Engine] = []
        for account in device.providers { engines.append(try engine(account, on: device)) }
        return DeviceSession(device: device, engines: engines)
    }

    /// A device's ceremonies run on its platform: a request naming one is refused rather than half obeyed.
    static func checkNoPlatform(_ request: CeremonyRequest) throws(OperationError) {
        guard request.platform != nil else { return }
        throw .invalidInput("A device's ceremonies run on its own platform; change the device's platform setting instead of giving one.")
    }

    /// The board key of a device's ceremonies: '@' is never in a profile name, so the two never meet.
    static func board(device name: String) -> String { "@" + name }

    // MARK: Ceremonies on a device

    /// `navigator.credentials.create()` on a device: the platform's rule picks the provider (`DeviceRouting`).
    public func create(device name: String, _ request: CeremonyRequest) throws(OperationError) -> (response: JSONValue, account: String) {
        try Operations.checkNoPlatform(request)
        let session = try session(name)
        let engine = try routed(session, .create) { () throws(CeremonyError) in try session.createEngine().engine }
        return (try create(on: engine, board: Operations.board(device: name), request), engine.profile.name)
    }

    /// `navigator.credentials.get()` on a device: the union of its providers' passkeys in the platform's order, the
    /// chosen one answered by its own provider.
    public func get(device name: String, _ request: CeremonyRequest) throws(OperationError) -> (response: JSONValue, account: String) {
        try Operations.checkNoPlatform(request)
        let session = try session(name)
        let page = try routed(session, .get) { () throws(CeremonyError) in try session.pageEngine() }
        let routing = GetRouting(page: page, offer: { (o, c) throws(CeremonyError) in try session.autofillOffer(o, caller: c) },
                                 answerer: { (o, c, pick) throws(CeremonyError) in try session.getEngine(o, caller: c, pick: pick) },
                                 queued: { () throws(OperationError) in
                                     for engine in session.engines where try !self.stored({ () throws(VaultError) in try engine.vault.pendingDecisions() }).isEmpty {
                                         return true
                                     }
                                     return false
                                 })
        let (response, engine) = try get(board: Operations.board(device: name), request, routing)
        return (response, engine.profile.name)
    }

    /// A signal on a device, sent to every provider its platform sends it to; returns those accounts.
    public func signal(device name: String, kind: String, _ request: CeremonyRequest) throws(OperationError) -> [String] {
        guard Operations.signalKinds.contains(kind) else {
            throw .invalidInput("No signal '\(kind)'; the signals are \(Operations.signalKinds.joined(separator: ", ")).")
        }
        try Operations.checkNoPlatform(request)
        let session = try session(name)
        let page = try routed(session, .signal) { () throws(CeremonyError) in try session.pageEngine() }
        let caller = try ceremonyCaller(request, nativeOrigin: nil, page, .signal)
        let signal = try options(request, page, .signal) { (document) throws(WebAuthnError) in try SignalRequest(kind: kind, document: document) }
        return try run(page, .signal) { () throws(CeremonyError) in try session.signal(signal, caller: caller) }
    }

    /// `getClientCapabilities()` on a device: the page's API (an extension's, else the browser's own).
    public func capabilities(device name: String) throws(OperationError) -> JSONValue {
        let session = try session(name)
        return try routed(session, .get) { () throws(CeremonyError) in try session.pageEngine() }.capabilities()
    }

    /// What a device's dropdown would offer a conditional get now, each passkey with its provider account.
    public func autofillOffer(device name: String, _ request: CeremonyRequest) throws(OperationError) -> JSONValue {
        let session = try session(name)
        let page = try routed(session, .get) { () throws(CeremonyError) in try session.pageEngine() }
        let (options, nativeOrigin) = try options(request, page, .get, PlatformRequest.requestOptions)
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, page, .get)
        let (rpID, offered) = try run(page, .get) { () throws(CeremonyError) in try session.autofillOffer(options, caller: caller) }
        return .object([("origin", .string(caller.origin.description)), ("rpId", .string(rpID)), ("passkeys", .array(offered.map(\.json)))])
    }

    /// The device's open autofill dropdowns.
    public func offers(device name: String, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        _ = try device(name)
        return .object([("offers", .array(ceremonies.offers(profile: Operations.board(device: name), view: PageView(page))))])
    }

    /// The simulated user picks a passkey from a device's open dropdown.
    public func pickOffered(device name: String, credentialID text: String, ceremony: String?, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        _ = try device(name)
        guard let credentialID = Base64URL.decode(text), !credentialID.isEmpty else { throw .invalidInput("'\(text)' is not a base64url credential ID.") }
        guard let id = ceremonies.pick(profile: Operations.board(device: name), credentialID: credentialID, ceremony: ceremony, view: PageView(page)) else {
            throw .notFound("No open autofill dropdown of device \(name) offers \(text).")
        }
        return .object([("picked", .string(text)), ("ceremony", .string(id))])
    }

    /// The page aborted a ceremony on a device.
    public func abortCeremony(device name: String, id: String, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        _ = try device(name)
        guard CeremonyBoard.isValidID(id) else { throw .invalidInput("The ceremony ID must be 1 to 64 base64url characters.") }
        return .object([("aborted", .bool(ceremonies.abort(profile: Operations.board(device: name), id: id, view: PageView(page))))])
    }

    /// Whether the device's page has the signal methods (Firefox's has none), for the shim; nil for no such device.
    public func pageHasSignalMethods(device name: String) -> Bool? {
        guard let session = try? session(name), let page = try? session.pageEngine() else { return nil }
        return page.knobs.signalMethods
    }

    /// The account that saves and fills a device's passwords: the one its creates go to; nil when there is none.
    public func passwordProfile(device name: String) -> String? {
        guard let session = try? session(name) else { return nil }
        return try? session.createEngine().engine.profile.name
    }

    /// A routing failure (no reachable provider) as the ceremony's error, rendered in the device's first engine.
    private func routed<T>(_ session: DeviceSession, _ operation: Dialect.Operation, _ body: () throws(CeremonyError) -> T) throws(OperationError) -> T {
        do {
            return try body()
        } catch {
            guard let first = session.engines.first else { throw .invalidInput("The device \(session.device.name) has no providers.") }
            throw .ceremony(error, operation, first)
        }
    }
}
