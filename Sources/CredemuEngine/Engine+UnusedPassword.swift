import Foundation
import Vault
import WebAuthn

extension Engine {
    /// The RP's app reports a password unused (seed 003: retiring passwords on accounts that moved to passkeys).
    /// The provider acts on it as `passwords.reportUnused` says: a hidden or deleted password is no longer filled
    /// and no longer counts for an automatic passkey upgrade. Like a signal, it tells the caller nothing about what
    /// the provider did ("the system accepted the update"); it throws only for a bad request or a platform
    /// without the call.
    public func reportUnusedPassword(_ report: UnusedPasswordReport) throws(CeremonyError) {
        var detail: [(String, JSONValue)] = [("domain", .string(report.domain)), ("userName", .string(report.userName))]
        let knob = knobs.cite("passwords.reportUnused", knobs.unusedPassword.rawValue)
        do throws(CeremonyError) {
            let report = try report.checked()
            detail = [("domain", .string(report.domain)), ("userName", .string(report.userName)), ("origin", .string(report.signonRealm))]
            let changed: Bool
            switch knobs.unusedPassword {
            case .unsupported:
                throw CeremonyError(.notSupported("reportUnusedPasswordCredential(domain:userName:) is not available on \(profile.platform.rawValue): \(knob)."),
                                    reason: .platformUnsupported)
            case .ignore:
                changed = false
            case .hide:
                changed = try store { () throws(VaultError) in
                    try vault.retirePassword(origin: report.signonRealm, username: report.userName, at: clock.now())
                }
            case .delete:
                changed = try store { () throws(VaultError) in try vault.removePassword(origin: report.signonRealm, username: report.userName) }
            }
            let outcome = knobs.unusedPassword == .ignore ? "ignored" : changed ? (knobs.unusedPassword == .hide ? "retired" : "deleted") : "noop"
            log("password", outcome, .success, detail + [("report", "unused"), ("knob", .string(knob))])
        } catch {
            throw failed("password", error, detail + [("report", "unused"), ("knob", .string(knob))])
        }
    }
}
