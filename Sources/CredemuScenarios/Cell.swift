import WebAuthn

/// One step's result for one provider, in the RP's terms; deterministic (credentials are named by their
/// scenario labels, never by random IDs) so matrices can be compared with expected ones.
public struct Cell: Equatable, Sendable {
    /// created, noop, error, signedIn, resolved, filled, saved, ok.
    public var outcome: String
    public var summary: String
    public var reason: String?
    public var error: String?
    /// What the RP's code sees on the provider's platform (exception class or ASAuthorizationError).
    public var dialect: String?
    /// What changed in the vault.
    public var vault: String
    /// The pack knob that decided the outcome, with its value and source.
    public var knob: String?
    /// Expectation not met, when the step states one.
    public var unexpected: String?
    /// What the user saw of a ceremony: "none", the provider's "sheet", or a "notice" after a silent create.
    public var ui: String?
    /// The authenticator data's user-presence and user-verification bits the RP reads ("UP=1 UV=0").
    public var flags: String?
    /// On a device: the provider account that answered (for a signal, those it reached).
    public var provider: String?
    /// What the RP sees of a security key or phone that answered instead of a manager (`authenticator(registration:)`).
    public var authenticator: String?

    /// "UI: none · UP=0 UV=0": what the user saw and the RP reads, for the renderings.
    public var observed: String? {
        let parts = [provider.map { "provider: \($0)" }, ui.map { "UI: \($0)" }, flags, authenticator].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    public init(outcome: String, summary: String, reason: String? = nil, error: String? = nil, dialect: String? = nil, vault: String,
                knob: String? = nil, unexpected: String? = nil, ui: String? = nil, flags: String? = nil) {
        self.outcome = outcome
        self.summary = summary
        self.reason = reason
        self.error = error
        self.dialect = dialect
        self.vault = vault
        self.knob = knob
        self.unexpected = unexpected
        self.ui = ui
        self.flags = flags
    }

    /// What the RP and the user observe of a step, whatever the platform: the outcome and why, the error, the vault,
    /// whether a UI was shown and the flags. Rows whose keys differ across providers diverge; so do rows whose
    /// `dialect` differs between columns on platforms of one kind (`DivergenceMatrix.diverges`).
    var key: String { [outcome, reason ?? "", error ?? "", vault, ui ?? "", flags ?? "", provider ?? "", authenticator ?? ""].joined(separator: "|") }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("outcome", .string(outcome)), ("summary", .string(summary))]
        if let reason { members.append(("reason", .string(reason))) }
        if let error { members.append(("error", .string(error))) }
        if let dialect { members.append(("dialect", .string(dialect))) }
        if let ui { members.append(("ui", .string(ui))) }
        if let flags { members.append(("flags", .string(flags))) }
        if let provider { members.append(("provider", .string(provider))) }
        if let authenticator { members.append(("authenticator", .string(authenticator))) }
        members.append(("vault", .string(vault)))
        if let knob { members.append(("knob", .string(knob))) }
        if let unexpected { members.append(("unexpected", .string(unexpected))) }
        return .object(members)
    }
}
