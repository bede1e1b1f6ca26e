import Foundation
import Signing
import Vault
import WebAuthn

/// The credential provider: answers create and get ceremonies from its vault, as a browser plus
/// authenticator would.
///
/// Every ceremony either returns the response a browser hands the RP or throws one `WebAuthnError`; a failed
/// ceremony leaves the vault unchanged.
public final class Engine: @unchecked Sendable {
    public let vault: Vault
    public let clock: any Clock
    public let authenticator: AuthenticatorModel

    private let cacheLock = NSLock()
    private var keyCache: [[UInt8]: any SigningKey] = [:]
    private static let keyCacheLimit = 4096

    public init(vault: Vault, clock: any Clock = SystemClock(), authenticator: AuthenticatorModel = .standard) {
        self.vault = vault
        self.clock = clock
        self.authenticator = authenticator
    }

    /// The signing key of a stored passkey, parsed once and kept in memory.
    func signingKey(for record: PasskeyRecord) throws(WebAuthnError) -> any SigningKey {
        cacheLock.lock()
        let cached = keyCache[record.credentialID]
        cacheLock.unlock()
        if let cached { return cached }
        let key: any SigningKey
        do {
            key = try SigningKeys.importPKCS8(try vault.privateKey(for: record.credentialID), expecting: record.algorithm)
        } catch let error as VaultError {
            throw Engine.storageFailure(error)
        } catch {
            throw WebAuthnError(.unknownError, "The private key of credential \(record.id) is unusable: \(error).")
        }
        remember(key, for: record.credentialID)
        return key
    }

    func remember(_ key: any SigningKey, for credentialID: [UInt8]) {
        cacheLock.lock()
        if keyCache.count >= Engine.keyCacheLimit { keyCache.removeAll(keepingCapacity: true) }
        keyCache[credentialID] = key
        cacheLock.unlock()
    }

    /// A vault failure during a ceremony, as the caller sees it.
    static func storageFailure(_ error: VaultError) -> WebAuthnError {
        WebAuthnError(.unknownError, "The credential store failed: \(error.message)")
    }

    /// The RP ID a ceremony runs under: the one given, checked against the caller, or the default.
    func relyingPartyID(_ requested: String?, caller: Caller) throws(WebAuthnError) -> String {
        guard let requested else { return try RelyingPartyID.defaultID(for: caller.origin) }
        try RelyingPartyID.validate(requested, for: caller.origin)
        return requested
    }

    func clientData(_ type: ClientData.CeremonyType, challenge: [UInt8], caller: Caller) -> ClientData {
        ClientData(type: type, challenge: challenge, origin: caller.origin.description, crossOrigin: caller.isCrossOrigin,
                   topOrigin: caller.isCrossOrigin ? caller.topOrigin?.description : nil)
    }
}
