import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// The repository's `providers/` directory.
public let providersDirectory: String = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("providers").path
}()

/// One profile on one pack with a virtual clock, driven as an RP test would: save and autofill passwords,
/// move time, run ceremonies and signals, read the event log.
public final class ProviderScenario {
    public let vault: Vault
    public let directory: TemporaryDirectory
    public let clock = VirtualClock(Date(timeIntervalSince1970: 1_800_000_000))
    public let policy: any ProviderPolicy
    public private(set) var profile: Profile
    public let origin = "https://shop.example.com"
    public let rpID = "example.com"

    /// - Parameter held: the vault opened as `credemu serve` holds one (exclusive: registrations are staged).
    public init(pack: String, platform: Platform? = nil, held: Bool = false, configure: (inout Profile) -> Void = { _ in }) throws {
        (vault, directory) = try makeTestVault(held: held)
        let registry = try PolicyRegistry()
        var profile = Profile(name: "user", pack: pack)
        policy = try registry.policy(for: profile)
        profile.platform = platform ?? (policy as? PolicyPack)?.defaultPlatform ?? .chromeDesktop
        configure(&profile)
        self.profile = profile
    }

    /// The engine on the profile's platform, or on another platform of the same account.
    public func engine(on platform: Platform? = nil) -> Engine {
        var p = profile
        if let platform { p.platform = platform }
        return Engine(vault: vault, profile: p, policy: policy, clock: clock)
    }

    public func update(_ change: (inout Profile) -> Void) { change(&profile) }

    public func advance(_ seconds: TimeInterval) { clock.advance(by: seconds) }

    public func savePassword(_ user: String = "alice@example.com", password: String = "pw", savedIn: String? = nil) throws {
        try engine().savePassword(origin: origin, username: user, password: password, savedIn: savedIn)
    }

    /// The password is filled into the sign-in form and submitted.
    public func autofillAndSignIn(_ user: String = "alice@example.com") throws {
        _ = try engine().autofill(origin: origin, username: user, submit: true)
    }

    public func creationOptions(user: String = "alice@example.com", userID: [UInt8]? = nil, exclude: [[UInt8]] = [],
                                userVerification: String = "preferred", conditional: Bool) throws -> CreationOptions {
        try CreationOptions(json: creationOptionsJSON(rpID: rpID, userID: userID ?? Array(user.utf8), userName: user,
                                                      algorithms: [-7, -8, -257], exclude: exclude, userVerification: userVerification,
                                                      mediation: conditional ? "conditional" : nil))
    }

    public func conditionalCreate(user: String = "alice@example.com", exclude: [[UInt8]] = [], on platform: Platform? = nil,
                                  userVerification: String = "preferred") throws -> RegistrationResponse {
        try engine(on: platform).create(try creationOptions(user: user, exclude: exclude, userVerification: userVerification, conditional: true),
                                        caller: try Caller(origin: origin))
    }

    public func modalCreate(user: String = "alice@example.com", userID: [UInt8]? = nil, exclude: [[UInt8]] = []) throws -> RegistrationResponse {
        try engine().create(try creationOptions(user: user, userID: userID, exclude: exclude, conditional: false), caller: try Caller(origin: origin))
    }

    public func signIn(allow: [[UInt8]] = [], extensions: JSONValue? = nil) throws -> AuthenticationResponse {
        try engine().get(try RequestOptions(json: requestOptionsJSON(rpID: rpID, allow: allow, extensions: extensions)), caller: try Caller(origin: origin))
    }

    /// A modal create with the given extension inputs.
    public func modalCreate(user: String = "alice@example.com", extensions: JSONValue) throws -> RegistrationResponse {
        try engine().create(try CreationOptions(json: creationOptionsJSON(rpID: rpID, userID: Array(user.utf8), userName: user, extensions: extensions)),
                            caller: try Caller(origin: origin))
    }

    public func signal(_ request: SignalRequest, on platform: Platform? = nil) throws {
        try engine(on: platform).signal(request, caller: try Caller(origin: origin))
    }

    public func passkeys(includeHidden: Bool = true) throws -> [PasskeyRecord] {
        try vault.scoped(to: profile.name).passkeys(rpID: rpID, includeHidden: includeHidden)
    }

    public func events(_ kind: String) throws -> [EventRecord] {
        try vault.scoped(to: profile.name).events(kind: kind)
    }

    /// The failure a call ends in, or nil when it succeeds.
    public func failure(_ body: () throws -> Any) -> CeremonyError? {
        do {
            _ = try body()
            return nil
        } catch let error as CeremonyError {
            return error
        } catch {
            return CeremonyError(WebAuthnError(.unknownError, "\(error)"), reason: Reason(rawValue: "unexpected"))
        }
    }
}
