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
        guard knobs.conditionalGet == .answered else {
            log("offer", "passedToBrowser", .success, [("origin", .string(caller.serializedOrigin)), ("rpId", .string(rpID)), ("credentialIds", .array([])),
                                                      ("note", .string(knobs.cite("conditionalGet.mode", "passedToBrowser") + ": the browser's own get has the request; this provider lists nothing"))])
            return (rpID, [])
        }
        let offered = try candidates(options, rpID: rpID, limit: Engine.offerLimit).map {
            OfferedPasskey(credentialID: $0.credentialID, userName: $0.userName, userDisplayName: $0.displayName)
        }
        log("offer", "offered", .success, [("origin", .string(caller.serializedOrigin)), ("rpId", .string(rpID)),
                                           ("credentialIds", .array(offered.map { .string(Base64URL.encode($0.credentialID)) }))])
        return (rpID, offered)
    }

    /// A conditional get never reaches a provider that hands it to the browser (`conditionalGet.mode`
    /// passedToBrowser): its passkeys are not the browser's, so the request finds none of them. On the server such a
    /// get waits on an empty dropdown, as the browser's own would; here, answered at once, it is NotAllowedError.
    func checkConditionalGetAnswered(_ options: RequestOptions, rpID: String) throws(CeremonyError) {
        guard options.mediation == "conditional", knobs.conditionalGet == .passedToBrowser else { return }
        throw CeremonyError(.notAllowed("The operation either timed out or was not allowed: " + knobs.cite("conditionalGet.mode", "passedToBrowser")
                                        + ": the conditional request went to the browser's own get, which holds none of this provider's passkeys for \(rpID)."),
                            reason: .noCredential)
    }
}
