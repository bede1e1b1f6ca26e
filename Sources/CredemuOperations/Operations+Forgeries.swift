import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// `POST /profiles/{p}/forge-next` (and a device's): arms `name` for the target's next create or get it
    /// applies to (`Forgery.ceremonies`); nil disarms. A ceremony of the other kind is answered honestly and
    /// leaves it armed.
    ///
    /// `replayed` is refused: its fault is sending an answer twice, which the test does itself with an answer it
    /// already has; there is nothing to change in the next one.
    public func forgeNext(_ target: CeremonyTarget, _ name: String?) throws(OperationError) -> JSONValue {
        try checkExists(target)
        var forgery: Forgery?
        if let name {
            do { forgery = try Forgery.named(name) } catch { throw .invalidInput(error.message) }
            guard forgery != .replayed else {
                throw .invalidInput("A replay is an answer sent twice: post the answer your test already has again; forge-next changes the next answer. The other forgeries: "
                                    + Forgery.allCases.filter { $0 != .replayed }.map(\.rawValue).joined(separator: ", ") + ".")
            }
        }
        forgeries.arm(forgery, on: target)
        return try forgeryState(target)
    }

    /// What is armed on a target: the pending forgery, and for a profile its override bits.
    public func forgeryState(_ target: CeremonyTarget) throws(OperationError) -> JSONValue {
        try checkExists(target)
        var members: [(String, JSONValue)] = [("forgery", forgeries.armed(on: target).map { .string($0.rawValue) } ?? .null)]
        if case .profile(let name) = target { members.append(("overrideBits", forgeries.bits(profile: name).json)) }
        return .object(members)
    }

    /// CDP's `WebAuthn.setResponseOverrideBits` on a virtual authenticator: each of `isBogusSignature`, `isBadUV`,
    /// `isBadUP` a boolean, one left out cleared (Chromium's `value_or(false)`); they hold for every later answer.
    public func setResponseOverrideBits(_ id: String, _ parameters: JSONValue) throws(OperationError) -> JSONValue {
        _ = try virtualAuthenticator(id)
        let bits = try WebDriverArgument.reading { () throws(WebDriverArgument) in
            let fields = try JSONFields<WebDriverArgument>(parameters, path: "parameters")
            try fields.onlyKeys(Set(ForgeryBoard.OverrideBits.names))
            // DevTools refuses null for a boolean parameter; left out is the way to clear one.
            for name in ForgeryBoard.OverrideBits.names where parameters[name]?.isNull == true { throw fields.invalid(name, "must be true or false, not null") }
            return ForgeryBoard.OverrideBits(isBogusSignature: try fields.bool("isBogusSignature") ?? false,
                                             isBadUV: try fields.bool("isBadUV") ?? false, isBadUP: try fields.bool("isBadUP") ?? false)
        }
        forgeries.setBits(bits, profile: id)
        return bits.json
    }

    /// The answer the page gets: `response` as the provider made it, or forged by the answering profile's override
    /// bits and the target's armed forgery. The vault keeps what the provider did (the passkey stored, the counter
    /// advanced), as Chromium's key keeps its credential whatever bits it answers with: the forgery is in the
    /// bytes the page receives, and it is logged in the answering profile's events as `forged`.
    ///
    /// A forgery that cannot be made of this answer (a batch attestation it would have to sign again, no other
    /// user's passkey to swap in, a counter that has not grown) fails the ceremony with `ForgeryNotMade`; the armed
    /// forgery is used up either way.
    func forged(_ response: JSONValue, _ ceremony: Forgery.Ceremony, _ target: CeremonyTarget, _ engine: Engine,
                offered: [COSEAlgorithm] = COSEAlgorithm.allCases) throws(OperationError) -> JSONValue {
        let bits = forgeries.bits(profile: engine.profile.name)
        // The format (a decode of the attestation object) is read only for the one bit that depends on it.
        let format = ceremony == .registration && bits.isBogusSignature ? ForgeryBoard.registrationFormat(response) : nil
        var chosen = bits.forgeries(ceremony, format: format).map { ($0, "overrideBits") }
        if let next = forgeries.take(on: target, for: ceremony) { chosen.append((next, "forgeNext")) }
        guard !chosen.isEmpty else { return response }
        let operation = ceremony == .registration ? "create" : "get"
        let detail: [(String, JSONValue)] = [("credentialId", response["id"] ?? .null),
                                             ("forgeries", .array(chosen.map { .object([("forgery", .string($0.0.rawValue)), ("by", .string($0.1))]) }))]
        do throws(ForgeryError) {
            let context = try forgeryContext(response, chosen.map(\.0), engine, offered: offered)
            var forged = response
            for (forgery, _) in chosen { forged = try forgery.apply(to: forged, context) }
            engine.log(operation, "forged", .success, detail)
            return forged
        } catch {
            engine.log(operation, "forgeryNotMade", .success, detail + [("error", .string(error.description))])
            throw OperationError(.conflict, .forgeryNotMade, "The forged answer could not be made: \(error.message)")
        }
    }

    /// The credential's key, and what `otherUsersCredential` and `counterRegression` need from the vault.
    private func forgeryContext(_ response: JSONValue, _ chosen: [Forgery], _ engine: Engine,
                                offered: [COSEAlgorithm]) throws(ForgeryError) -> ForgeryContext {
        guard let id = response["rawId"]?.stringValue.flatMap(Base64URL.decode),
              let record = try? engine.vault.passkey(id: id), let pkcs8 = try? engine.vault.privateKey(for: id) else {
            throw ForgeryError(.malformedResponse, "The answer's credential is not in the profile's vault.")
        }
        var context = try ForgeryContext(pkcs8: pkcs8, offeredAlgorithms: offered)
        if chosen.contains(.otherUsersCredential) {
            let others = (try? engine.vault.passkeys(rpID: record.rpID)) ?? []
            guard let other = others.first(where: { $0.userHandle != record.userHandle }) else {
                throw ForgeryError(.missingContext, "otherUsersCredential puts another user's handle on this credential, and the profile holds no passkey of another user for \(record.rpID): register a second account first.")
            }
            context.userHandle = other.userHandle
        }
        if chosen.contains(.counterRegression) {
            // The RP stored the counter of the previous sign-in (this one's less one): 0 is lower when that is not 0.
            guard record.signCount >= 2 else {
                throw ForgeryError(.missingContext, "counterRegression needs a credential whose counter has grown (a security key's, signed in with once before); this one's is \(record.signCount).")
            }
            context.signCount = 0
        }
        return context
    }
}

extension ForgeryBoard {
    /// A registration answer's attestation format (`fmt`), nil when it does not parse.
    static func registrationFormat(_ response: JSONValue) -> String? {
        guard let text = response["response"]?["attestationObject"]?.stringValue, let bytes = Base64URL.decode(text),
              let object = try? CBOR.decode(bytes, options: .lenient) else { return nil }
        return object["fmt"]?.textValue
    }
}
