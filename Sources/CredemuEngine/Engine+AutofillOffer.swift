import Vault
import WebAuthn

/// One passkey in the autofill dropdown a conditional get opens.
public struct OfferedPasskey: Equatable, Sendable {
    public var credentialID: [UInt8]
    public var userName: String
    public var userDisplayName: String
    /// The provider account that holds it, in a device's dropdown (`DeviceSession.autofillOffer`).
    public var provider: String?

    public init(credentialID: [UInt8], userName: String, userDisplayName: String, provider: String? = nil) {
        self.credentialID = credentialID
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.provider = provider
    }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("credentialId", .string(Base64URL.encode(credentialID))), ("userName", .string(userName)),
                                              ("userDisplayName", .string(userDisplayName))]
        if let provider { members.append(("provider", .string(provider))) }
        return .object(members)
    }
}

extension Engine {
    /// What the autofill dropdown offers a conditional get now (WebAuthn L3 §5.1.4.1, conditional mediation):
    /// the usable passkeys for the RP, most recently used first, at most `offerLimit` of them; hidden ones never.
    /// Logged as an `offer` event.
    public func autofillOffer(_ options: RequestOptions, caller: Caller) throws(CeremonyError) -> (rpID: String, passkeys: [OfferedPasskey]) {
        let rpID = try relyingPartyID(options.rpId, caller: caller)
        let offered = try candidates(options, rpID: rpID, limit: Engine.offerLimit).map {
            OfferedPasskey(credentialID: $0.credentialID, userName: $0.userName, userDisplayName: $0.displayName)
        }
        log("offer", "offered", .success, [("origin", .string(caller.origin.description)), ("rpId", .string(rpID)),
                                           ("credentialIds", .array(offered.map { .string(Base64URL.encode($0.credentialID)) }))])
        return (rpID, offered)
    }
}
