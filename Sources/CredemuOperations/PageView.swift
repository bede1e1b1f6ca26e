import CredemuEngine
import Vault
import WebAuthn

/// What a caller may see and act for: a page (restricted to its `Origin`) only its own origin, the passkeys
/// that origin could use and its own ceremonies; an operator (no restriction) everything. Every listing a page
/// route returns, and every act a page asks for, is checked here (docs/api.md, "Security model").
struct PageView {
    /// The page's origin; nil for an operator.
    let page: String?

    init(_ restrictedTo: String?) { page = restrictedTo }

    /// Refuses a page acting for an origin other than its own.
    func checkActsFor(_ origin: String) throws(OperationError) {
        guard let page, origin != page else { return }
        throw .wrongOrigin("A request from \(page) cannot act for \(origin): a page acts only for its own origin.")
    }

    /// Whether the caller may see a ceremony begun for `origin` (its dropdown, its pick, its abort).
    func sees(ceremonyOrigin origin: String) -> Bool { page.map { $0 == origin } ?? true }

    /// Whether the caller may see a saved password of `origin`.
    func sees(passwordOrigin origin: String) -> Bool { sees(ceremonyOrigin: origin) }

    /// A dropdown's passkey as the caller may see it: a page is not told which account of a device holds it.
    func listing(_ passkey: OfferedPasskey) -> JSONValue {
        guard page != nil, passkey.provider != nil else { return passkey.json }
        var copy = passkey
        copy.provider = nil
        return copy.json
    }

    /// The simulated user's pick as the caller may name it (`Pick`'s text): a page by credential ID alone, since it is
    /// never told which account of a device holds a passkey, so an account it names could only be a guess that
    /// probes the device.
    func pick(_ text: String) throws(OperationError) -> Pick {
        guard let pick = Pick(text) else {
            throw .invalidInput("'\(text)' is not a pick: a base64url credential ID, or ID@ACCOUNT to pick one provider's entry on a device.")
        }
        if page != nil, pick.account != nil {
            throw .invalidInput("A page picks a passkey by its credential ID alone: it is not told which account of a device holds it.")
        }
        return pick
    }

    /// Whether the caller may see a passkey: a page only one its origin could use (the RP ID is its host or a
    /// registrable suffix of it).
    func sees(_ record: PasskeyRecord) throws(OperationError) -> Bool {
        guard let page else { return true }
        return Operations.usable(by: record)(try Operations.pageOrigin(page))
    }
}
