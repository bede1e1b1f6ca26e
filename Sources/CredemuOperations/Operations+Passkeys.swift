import CredemuEngine
import Vault
import WebAuthn

extension Operations {
    /// The profile's passkeys as listings: metadata and public keys, never a private key. A page
    /// (`restrictedTo`) sees only the passkeys its origin could use.
    public func listPasskeys(_ name: String, restrictedTo page: String? = nil) throws(OperationError) -> [JSONValue] {
        _ = try profile(name)
        let all = try stored { () throws(VaultError) in try vault.scoped(to: name).allPasskeys() }
        let view = PageView(page)
        var out: [JSONValue] = []
        for record in all where try view.sees(record) { out.append(VaultFixture.passkeyJSON(record, privateKey: nil)) }
        return out
    }

    public func passkey(_ name: String, id: String, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        VaultFixture.passkeyJSON(try record(name, id, restrictedTo: page), privateKey: nil)
    }

    /// Removes a passkey, as the user deleting it in the password manager would; a page only its own RP's.
    public func removePasskey(_ name: String, id: String, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        let record = try record(name, id, restrictedTo: page)
        let scoped = vault.scoped(to: name)
        try stored { () throws(VaultError) in
            _ = try scoped.removePasskey(credentialID: record.credentialID)
            try scoped.appendEvent(kind: "vault", outcome: "removed", reason: "success",
                                   detail: .object([("credentialId", .string(id)), ("rpId", .string(record.rpID))]), at: clock.now())
        }
        forget(name)
        return .object([("removed", VaultFixture.passkeyJSON(record, privateKey: nil))])
    }

    /// Hides or restores a passkey, as the user would in the password manager's list (a hidden passkey is kept
    /// but never offered); a page only its own RP's. Logged as a `vault` event, `hidden` or `restored`.
    public func setPasskeyHidden(_ name: String, id: String, hidden: Bool, restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        let record = try record(name, id, restrictedTo: page)
        let scoped = vault.scoped(to: name)
        let now = clock.now()
        let changed = try stored { () throws(VaultError) -> PasskeyRecord? in
            if record.hidden != hidden {
                try scoped.setHidden(credentialID: record.credentialID, hidden: hidden, at: now)
                try scoped.appendEvent(kind: "vault", outcome: hidden ? "hidden" : "restored", reason: "success",
                                       detail: .object([("credentialId", .string(id)), ("rpId", .string(record.rpID))]), at: now)
            }
            return try scoped.passkey(id: record.credentialID, includeShadowed: true)
        }
        forget(name)
        guard let changed else { throw .notFound("No passkey \(id) in profile \(name).") }
        return VaultFixture.passkeyJSON(changed, privateKey: nil)
    }

    /// The most UTF-8 bytes a user name or display name the user types may have.
    public static let userNameLimit = 1024

    /// Renames a passkey's user, as the user editing it in the password manager's list would (a shadowed one too):
    /// its user name and display name (nil keeps the current one), and marks it edited by the user, which a pack's
    /// details signal may respect (`signals.currentUserDetailsRespectsUserEdit`). A page only its own RP's. Logged as a
    /// `vault` event `renamed`. A name that is empty, over `userNameLimit` bytes or holds a control character (Unicode's Cc, C1 included) is
    /// refused, the vault unchanged.
    public func renamePasskey(_ name: String, id: String, userName: String?, displayName: String?,
                              restrictedTo page: String? = nil) throws(OperationError) -> JSONValue {
        guard userName != nil || displayName != nil else {
            throw .invalidInput("A rename needs a userName, a displayName or both.")
        }
        try Operations.checkUserName(userName, "userName", mayBeEmpty: false)
        try Operations.checkUserName(displayName, "displayName", mayBeEmpty: true)
        let record = try record(name, id, restrictedTo: page)
        let scoped = vault.scoped(to: name)
        let now = clock.now()
        let renamed = try stored { () throws(VaultError) -> PasskeyRecord in
            let edited = try scoped.editUser(credentialID: record.credentialID, name: userName ?? record.userName,
                                             displayName: displayName ?? record.displayName)
            try scoped.appendEvent(kind: "vault", outcome: "renamed", reason: "success",
                                   detail: .object([("credentialId", .string(id)), ("rpId", .string(record.rpID)),
                                                    ("userName", .string(edited.userName)), ("displayName", .string(edited.displayName))]),
                                   at: now)
            return edited
        }
        forget(name)
        return VaultFixture.passkeyJSON(renamed, privateKey: nil)
    }

    static func checkUserName(_ text: String?, _ field: String, mayBeEmpty: Bool) throws(OperationError) {
        guard let text else { return }
        if text.isEmpty && !mayBeEmpty { throw .invalidInput("\(field) must not be empty.") }
        if text.utf8.count > userNameLimit { throw .invalidInput("\(field) must be at most \(userNameLimit) bytes of UTF-8 (it has \(text.utf8.count)).") }
        if text.containsControlCharacter {
            throw .invalidInput("\(field) must not hold a control character.")
        }
    }

    private func record(_ name: String, _ id: String, restrictedTo page: String?) throws(OperationError) -> PasskeyRecord {
        _ = try profile(name)
        guard let bytes = Base64URL.decode(id), !bytes.isEmpty else { throw .invalidInput("'\(id)' is not a base64url credential ID.") }
        // A page is told nothing of another RP's passkey, not even that it exists.
        guard let record = try stored({ () throws(VaultError) in try vault.scoped(to: name).passkey(id: bytes, includeShadowed: true) }),
              try PageView(page).sees(record) else {
            throw .notFound("No passkey \(id) in profile \(name).")
        }
        return record
    }

    static func pageOrigin(_ text: String) throws(OperationError) -> Origin {
        do {
            return try Origin(text)
        } catch {
            throw .wrongOrigin("The page's origin \(text) is not one WebAuthn serves: \(error.message)")
        }
    }

    /// Whether a page at `origin` could use the passkey: its RP ID is the origin's host or a registrable
    /// suffix of it (WebAuthn L3 §5.1.3 step 8).
    static func usable(by record: PasskeyRecord) -> (Origin) -> Bool {
        { origin in (try? RelyingPartyID.validate(record.rpID, for: origin)) != nil }
    }
}
