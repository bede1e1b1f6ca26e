import Vault
import WebAuthn

extension Reason {
    /// The simulated user chose an authenticator the browser's sheet does not offer (`use:NAME`).
    public static let notInSheet = Reason(rawValue: "notInSheet")
}

/// The browser's own sheet (Chrome's "Use a passkey on a different device" / "Use a security key"): what a ceremony may
/// be dispatched to beside the target's password manager, and the simulated user's choice among them.
///
/// Chromium dispatches a create that asks for a cross-platform authenticator to security keys and phones only, and a
/// get to the keys as well as the manager (`device/fido/make_credential_request_handler.cc`,
/// `get_assertion_request_handler.cc`); the user picks in `AuthenticatorRequestDialogModel`. The sheet reads the
/// target's own queue of decisions (a profile's, or a device's `device:NAME`): `use:NAME` picks a key (its profile
/// name), a phone (its device name: a linked phone, or any other by the QR code) or a manager account.
public struct Sheet: Sendable {
    /// A phone the desktop reaches over hybrid: its session, whose accounts answer as cross-platform authenticators.
    public struct Phone: Sendable {
        public var name: String
        public var linked: Bool
        public var session: DeviceSession
        public init(name: String, linked: Bool, session: DeviceSession) {
            self.name = name
            self.linked = linked
            self.session = session
        }
    }

    /// The security keys plugged in, in the device's order.
    public var keys: [Engine]
    /// The phone device named, if the desktop can reach it (linked, or any phone by the QR code).
    public var phone: @Sendable (String) throws(CeremonyError) -> Phone?
    /// The simulated user's queue the sheet reads (the target's own).
    public var queue: Vault

    public init(keys: [Engine] = [], queue: Vault, phone: @escaping @Sendable (String) throws(CeremonyError) -> Phone? = { _ in nil }) {
        self.keys = keys
        self.queue = queue
        self.phone = phone
    }

    /// Who answers a create: the manager's engine (`routed`, which the platform chose) unless the user chooses another
    /// in the sheet, or the request asks for an attachment the manager does not have and a key is plugged in.
    public func create(_ options: CreationOptions, caller: Caller, routed manager: Engine, candidates managers: [Engine]) throws(CeremonyError) -> Engine {
        let offered = Sheet.offers(manager, options.authenticatorAttachment)
        switch try head(consumingDeclines: !offered) {
        case .use(let name):
            if let engine = managers.first(where: { $0.profile.name == name }), Sheet.offers(engine, options.authenticatorAttachment) {
                return engine
            }
            if let key = keys.first(where: { $0.profile.name == name }), Sheet.offers(key, options.authenticatorAttachment) { return key }
            if options.authenticatorAttachment != "platform", let phone = try phone(name) {
                let engine = try phone.session.createEngine().engine
                manager.log("hybrid", "dispatched", .success, Sheet.hybridDetail(phone, engine, "create"))
                return engine
            }
            throw manager.failed("create", notOffered(name, options.authenticatorAttachment),
                                 manager.ceremonyDetail(options, caller: caller) + [("sheet", .string("use:" + name))])
        case .declined(let decision):
            // The sheet itself was cancelled or left to time out (the manager was not offered).
            let failure = manager.declined(decision, timeout: options.timeout)
                ?? CeremonyError(.notAllowed("The operation either timed out or was not allowed."), reason: .userCancelled)
            throw manager.failed("create", failure, manager.ceremonyDetail(options, caller: caller) + [("sheet", .string(decision.description))])
        case .none:
            if offered { return manager }
            // Offered only keys and phones, the user touches the first key plugged in; with none, nobody acts and the
            // manager's refusal (settling at the timeout) is the answer.
            return keys.first { Sheet.offers($0, options.authenticatorAttachment) } ?? manager
        }
    }

    /// Who answers a get: a key or phone the user chooses, else a plugged key that holds a usable credential when the
    /// manager (`routed`, chosen by the platform) holds none, else the manager.
    public func get(_ options: RequestOptions, caller: Caller, routed manager: Engine, candidates managers: [Engine],
                    pick: Pick?) throws(CeremonyError) -> Engine {
        guard pick == nil else { return manager }
        switch try head(consumingDeclines: false) {
        case .use(let name):
            if let engine = managers.first(where: { $0.profile.name == name }) { return engine }
            if let key = keys.first(where: { $0.profile.name == name }) { return key }
            if let phone = try phone(name) {
                let engine = try phone.session.getEngine(options, caller: caller, pick: nil)
                manager.log("hybrid", "dispatched", .success, Sheet.hybridDetail(phone, engine, "get"))
                return engine
            }
            throw manager.failed("get", notOffered(name, nil), [("origin", .string(caller.serializedOrigin)), ("sheet", .string("use:" + name))])
        case .declined, .none:
            guard !keys.isEmpty, try manager.usableCredentials(options, caller: caller, limit: 1).isEmpty else { return manager }
            for key in keys where try !key.usableCredentials(options, caller: caller, limit: 1).isEmpty { return key }
            return manager
        }
    }

    enum Head { case use(String), declined(UserDecision), none }

    /// The sheet's own decision at the head of the queue: a `use:` choice, always taken; a cancel or timeout, taken
    /// only when the sheet is all the user sees (otherwise the manager's prompt takes it).
    func head(consumingDeclines: Bool) throws(CeremonyError) -> Head {
        let first: String?
        do { first = try queue.peekDecision() } catch { throw Engine.storageFailure(error) }
        guard let first, let decision = UserDecision(first) else { return .none }
        switch decision {
        case .use(let name):
            try pop()
            return .use(name)
        case .cancel, .timeout:
            guard consumingDeclines else { return .none }
            try pop()
            return .declined(decision)
        default:
            return .none
        }
    }

    private func pop() throws(CeremonyError) {
        do { _ = try queue.popDecision() } catch { throw Engine.storageFailure(error) }
    }

    /// Whether the browser dispatches a request asking for `attachment` to `engine`'s authenticator.
    static func offers(_ engine: Engine, _ attachment: String?) -> Bool {
        guard let attachment, ["platform", "cross-platform"].contains(attachment) else { return true }
        return attachment == engine.knobs.attachment || engine.knobs.otherAttachment == .answered
    }

    func notOffered(_ name: String, _ attachment: String?) -> CeremonyError {
        let keysText = keys.isEmpty ? "no security key" : "the security keys " + keys.map(\.profile.name).joined(separator: ", ")
        return CeremonyError(.notAllowed("The operation either timed out or was not allowed: the user chose '\(name)', which the browser's sheet does not offer\(attachment.map { " for a \($0) request" } ?? "") (it offers the password manager, \(keysText) and phone devices)."),
                             reason: .notInSheet)
    }

    static func hybridDetail(_ phone: Phone, _ engine: Engine, _ operation: String) -> [(String, JSONValue)] {
        [("operation", .string(operation)), ("phone", .string(phone.name)), ("account", .string(engine.profile.name)),
         ("pack", .string(engine.policy.id)), ("reachedBy", .string(phone.linked ? "linked phone" : "QR code")),
         ("afterwards", .string(Sheet.afterHybrid))]
    }

    /// What the desktop does after a cross-device ceremony. No source shows Chrome offering to save a passkey on the
    /// desktop itself (unconfirmed); web.dev's passkey-form-autofill guide ("Encourage creating a new passkey after a
    /// cross-device authentication") leaves that prompt to the RP.
    static let afterHybrid = "the browser offers no passkey on this device (unconfirmed: no source shows Chrome doing so); an RP may prompt the user to create one here, as web.dev advises after a cross-device sign-in"
}
