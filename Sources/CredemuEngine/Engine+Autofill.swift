import Foundation
import Vault
import WebAuthn

/// A password the provider filled into a sign-in form.
public struct FilledPassword: Equatable, Sendable {
    public var record: PasswordRecord
    public var password: String
}

extension Engine {
    /// Saves a password for the caller's signon realm (the user typed it and let the provider save it), or, with
    /// `savedIn`, records one that another password manager on the device holds.
    @discardableResult
    public func savePassword(origin realm: String, username: String, password: String, savedIn: String? = nil) throws(CeremonyError) -> PasswordRecord {
        let record = try store { () throws(VaultError) in
            try vault.savePassword(origin: realm, username: username, password: password, at: clock.now(), savedIn: savedIn)
        }
        log("password", "saved", .success, [("origin", .string(realm)), ("username", .string(username))] + (savedIn.map { [("savedIn", .string($0))] } ?? []))
        return record
    }

    /// Fills a saved password into a sign-in form at `realm`: the one for `username`, or the most recently
    /// filled one. Records the fill time, which an automatic upgrade reads.
    ///
    /// - Parameter submit: the form was also submitted, so the password counts as used.
    public func autofill(origin realm: String, username: String? = nil, submit: Bool = false) throws(CeremonyError) -> FilledPassword {
        // A password the RP reported unused is no longer offered (`passwords.reportUnused`).
        let saved = try store { () throws(VaultError) in try vault.passwords(origin: realm) }.filter { $0.retiredAt == nil }
        let candidates = username.map { name in saved.filter { $0.username == name } } ?? saved
        guard let chosen = candidates.max(by: { ($0.lastFilledAt ?? $0.createdAt) < ($1.lastFilledAt ?? $1.createdAt) }) else {
            let failure = CeremonyError(.notAllowed("No saved password " + (username.map { "for '\($0)' " } ?? "") + "at \(realm)."),
                                        reason: .noMatchingPassword)
            throw failed("autofill", failure, [("origin", .string(realm)), ("username", username.map(JSONValue.string) ?? .null)])
        }
        let now = clock.now()
        let secret = try store { () throws(VaultError) -> String in
            try vault.markPasswordFilled(id: chosen.id, at: now)
            if submit { try vault.markPasswordUsed(id: chosen.id, at: now) }
            return try vault.password(for: chosen)
        }
        log("autofill", submit ? "filledAndSubmitted" : "filled", .success, [("origin", .string(realm)), ("username", .string(chosen.username))])
        var record = chosen
        record.lastFilledAt = now
        if submit { record.lastUsedAt = now }
        return FilledPassword(record: record, password: secret)
    }

    /// Records that the filled password was submitted in a sign-in (`date_last_used`).
    public func markPasswordUsed(origin realm: String, username: String) throws(CeremonyError) {
        let saved = try store { () throws(VaultError) in try vault.passwords(origin: realm) }
        guard let record = saved.first(where: { $0.username == username && $0.retiredAt == nil }) else {
            throw failed("password", CeremonyError(.notAllowed("No saved password for '\(username)' at \(realm)."), reason: .noMatchingPassword),
                         [("origin", .string(realm)), ("username", .string(username))])
        }
        try store { () throws(VaultError) in try vault.markPasswordUsed(id: record.id, at: clock.now()) }
        log("password", "used", .success, [("origin", .string(realm)), ("username", .string(username))])
    }
}
