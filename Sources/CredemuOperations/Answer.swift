import WebAuthn

/// What a ceremony on a target answered, and which provider account answered it (a signal: every account it
/// reached). Front ends show the account to the test code only (`X-Credemu-Provider`, the CLI's standard error).
public struct Answer: Sendable {
    public var response: JSONValue
    public var accounts: [String]

    public init(response: JSONValue, accounts: [String]) {
        self.response = response
        self.accounts = accounts
    }

    /// The one account that answered (a create, a get, capabilities).
    public var account: String { accounts.joined(separator: ",") }
}
