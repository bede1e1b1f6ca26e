import WebAuthn

/// One stale-account-context check: a registration started for account A, answered after the session changed
/// (seed 002 N2.5-AC03, seed 000 N2.6-AC03 and N2.6-AC06).
///
/// The checks are about the server's sessions, not about what a provider sends: they run once, with the first
/// provider of the run, and would come out the same with any other. What they see is what the server answers and
/// whether the credential later signs in; a credential the server stored and never lets sign in is beyond them.
public struct StaleContextCheck: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// The session signed out (the adapter's `signOut`) before the registration's answer came.
        case signedOut
        /// Account B signed in on the same session (the adapter's `signIn`, another user name) before it came.
        case switchedAccount
        /// Account A signed in again (a newer sign-in supersedes the one the ceremony began in) before it came.
        case supersededSignIn
        /// After the switch, the registration options the server issues name account B, not A (N2.6-AC03).
        case optionsAfterSwitch

        public var title: String {
            switch self {
            case .signedOut: return "registration answered after sign-out"
            case .switchedAccount: return "registration answered after switching to another account"
            case .supersededSignIn: return "registration answered after a newer sign-in of the same account"
            case .optionsAfterSwitch: return "registration options after switching accounts"
            }
        }

        /// The seed criteria the check carries out.
        public var criteria: [String] {
            self == .optionsAfterSwitch ? ["N2.6-AC03"] : ["N2.5-AC03", "N2.6-AC06"]
        }

        public var rule: String {
            switch self {
            case .optionsAfterSwitch:
                return "seed 000 N2.6-AC03: generate creation options for the account that completed sign-in; do not reuse an earlier account context (WebAuthn L3 §5.4.3: user.id is the handle of the account being registered)"
            default:
                return "seed 002 N2.5-AC03: bind a registration to the account authenticated when the ceremony starts and reject the response if that account changes before completion; seed 000 N2.6-AC06: reject a registration response made stale by logout, account switching or a superseding login, so no stale response changes any account's credential list"
            }
        }

        public var fix: String {
            switch self {
            case .optionsAfterSwitch:
                return "build the options from the session's current account (its user.id, name and excludeCredentials), never from state kept from an earlier sign-in"
            default:
                return "keep the pending registration in the session that began it, with the account and the sign-in it began under; at the finish, refuse it unless the same session and sign-in are still current (sign-out, another sign-in and a newer sign-in of the account all discard it), and store the credential for that account only"
            }
        }
    }

    public enum Outcome: String, Sendable {
        /// The server refused the stale response and the credential signs in as neither account.
        case passed
        /// The server accepted the stale response, or the credential signs in: a finding (exit 1).
        case finding
        /// A step the check relies on failed (the sign-in, the options, the provider): nothing to conclude.
        case notRun
        /// The interface cannot express the check: the Conformance API has no session, an adapter no `signOut`.
        case needsAdapter
    }

    public var kind: Kind
    public var outcome: Outcome
    /// What happened: the server's answers and the later sign-ins.
    public var message: String
    /// "pack@platform" whose responses the check sent.
    public var provider: String

    public var json: JSONValue {
        .object([("check", .string(kind.rawValue)), ("title", .string(kind.title)),
                 ("criteria", .array(kind.criteria.map(JSONValue.string))), ("outcome", .string(outcome.rawValue)),
                 ("message", .string(message)), ("provider", .string(provider)),
                 ("rule", .string(kind.rule)), ("fix", .string(kind.fix))])
    }
}
