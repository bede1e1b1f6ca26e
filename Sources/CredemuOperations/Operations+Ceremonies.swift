import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// `navigator.credentials.create()`: modal or conditional, web or native.
    public func create(_ name: String, _ request: CeremonyRequest, overrides: PasskeySettingOverrides = .init()) throws(OperationError) -> JSONValue {
        let engine = try engine(name, platform: request.platform)
        let (parsed, nativeOrigin) = try run(engine, .create) { () throws(CeremonyError) in
            do throws(WebAuthnError) { return try PlatformRequest.creationOptions(try request.document()) } catch { throw CeremonyError(error) }
        }
        var options = parsed
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, engine, .create)
        if let mediation = request.mediation { options.mediation = mediation == "modal" ? nil : mediation }
        let settings = overrides.isEmpty ? nil : try overrides.applied(to: engine.knobs.newPasskeySettings)
        try honourHold(engine, .create)
        return try run(engine, .create) { () throws(CeremonyError) in try engine.create(options, caller: caller, settings: settings) }.json
    }

    /// `navigator.credentials.get()`, with the simulated user's pick when given.
    public func get(_ name: String, _ request: CeremonyRequest) throws(OperationError) -> JSONValue {
        let engine = try engine(name, platform: request.platform)
        let (parsed, nativeOrigin) = try run(engine, .get) { () throws(CeremonyError) in
            do throws(WebAuthnError) { return try PlatformRequest.requestOptions(try request.document()) } catch { throw CeremonyError(error) }
        }
        var options = parsed
        let caller = try ceremonyCaller(request, nativeOrigin: nativeOrigin, engine, .get)
        if let mediation = request.mediation { options.mediation = mediation == "modal" ? nil : mediation }
        let pick = try request.pick.map { (id) throws(OperationError) -> [UInt8] in
            guard let bytes = Base64URL.decode(id) else { throw .invalidInput("The pick must be a base64url credential ID.") }
            return bytes
        }
        try honourHold(engine, .get)
        return try run(engine, .get) { () throws(CeremonyError) in try engine.get(options, caller: caller, pick: pick) }.json
    }

    /// The signal kinds, as the API's path and the CLI's word name them.
    public static let signalKinds = ["unknown", "accepted", "details"]

    /// One of the WebAuthn signals; resolves with nothing to say, as browsers do.
    public func signal(_ name: String, kind: String, _ request: CeremonyRequest) throws(OperationError) {
        guard Operations.signalKinds.contains(kind) else {
            throw .invalidInput("No signal '\(kind)'; the signals are \(Operations.signalKinds.joined(separator: ", ")).")
        }
        let engine = try engine(name, platform: request.platform)
        let caller = try ceremonyCaller(request, nativeOrigin: nil, engine, .signal)
        let signal = try run(engine, .signal) { () throws(CeremonyError) in
            do throws(WebAuthnError) { return try SignalRequest(kind: kind, document: try request.document()) } catch { throw CeremonyError(error) }
        }
        try run(engine, .signal) { () throws(CeremonyError) in try engine.signal(signal, caller: caller) }
    }

    /// `PublicKeyCredential.getClientCapabilities()` as the profile's platform answers it.
    public func capabilities(_ name: String, platform: String?) throws(OperationError) -> JSONValue {
        try engine(name, platform: platform).capabilities()
    }

    private func ceremonyCaller(_ request: CeremonyRequest, nativeOrigin: String?, _ engine: Engine,
                                _ operation: Dialect.Operation) throws(OperationError) -> Caller {
        do throws(OperationError) {
            guard let caller = try request.caller(nativeOrigin: nativeOrigin) else {
                throw OperationError.invalidInput("The caller's origin is required (web options carry none).")
            }
            return caller
        } catch {
            guard error.code == .ceremony else { throw error }
            let name = WebAuthnError.Name(rawValue: error.name) ?? .typeError
            throw .ceremony(CeremonyError(WebAuthnError(name, error.message)), operation, engine)
        }
    }

    /// Waits out a hold armed on the profile; a cancelled or expired hold fails the ceremony.
    private func honourHold(_ engine: Engine, _ operation: Dialect.Operation) throws(OperationError) {
        guard let (outcome, timedOut) = holds.waitIfHeld(profile: engine.profile.name, operation: operation.rawValue) else { return }
        guard outcome == .cancel else { return }
        let failure = timedOut
            ? CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony timed out."), reason: .timedOut)
            : CeremonyError(.notAllowed("The operation either timed out or was not allowed: the held ceremony was cancelled."), reason: .userCancelled)
        throw .ceremony(failure, operation, engine)
    }
}
