import Vault
import WebAuthn

/// What the simulated person at the device does at the next prompt. The user accepts unless a test queued
/// other decisions (`credemu user next ...`), which are taken first in, first out.
public enum UserDecision: Equatable, Sendable, CustomStringConvertible {
    case accept
    case cancel
    /// Lets the prompt run until the ceremony's timeout.
    case timeout
    /// Picks this credential (on a device, this account's entry of it) in an account chooser.
    case pick(Pick)
    /// Chooses an authenticator in the browser's sheet (`Sheet`): a security key's profile, a phone device, or a
    /// manager account.
    case use(String)

    public init?(_ text: String) {
        switch text {
        case "accept": self = .accept
        case "cancel": self = .cancel
        case "timeout": self = .timeout
        case _ where text.hasPrefix("use:"):
            let name = String(text.dropFirst(4))
            guard Profile.isValidName(name) else { return nil }
            self = .use(name)
        default:
            guard text.hasPrefix("pick:"), let pick = Pick(String(text.dropFirst(5))) else { return nil }
            self = .pick(pick)
        }
    }

    public var description: String {
        switch self {
        case .accept: return "accept"
        case .cancel: return "cancel"
        case .timeout: return "timeout"
        case .pick(let pick): return "pick:" + pick.description
        case .use(let name): return "use:" + name
        }
    }
}

extension Engine {
    /// Queues the user's next decision.
    public func queue(_ decision: UserDecision) throws(CeremonyError) {
        try store { () throws(VaultError) in try vault.pushDecision(decision.description) }
    }

    /// The next decision: queued, or accept.
    func nextDecision() throws(CeremonyError) -> UserDecision {
        guard let text = try store({ () throws(VaultError) in try vault.popDecision() }) else { return .accept }
        return UserDecision(text) ?? .accept
    }

    /// The failure a prompt ends in when the user cancels or lets it time out.
    func declined(_ decision: UserDecision, timeout: Double?) -> CeremonyError? {
        switch decision {
        case .cancel:
            return CeremonyError(.notAllowed("The operation either timed out or was not allowed: the user cancelled."), reason: .userCancelled)
        case .timeout:
            let millis = Int(saturating: timeout ?? 300_000)
            return CeremonyError(.notAllowed("The operation either timed out or was not allowed: the prompt timed out after \(millis) ms."),
                                 reason: .timedOut, settlesAfterMillis: millis)
        default:
            return nil
        }
    }
}
