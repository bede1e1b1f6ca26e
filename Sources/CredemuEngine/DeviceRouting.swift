import WebAuthn

/// Where a device's platform sends each ceremony among its provider accounts, from each provider's
/// `device.integration` knob. The rules are the platforms' (browsers and operating systems), not the providers':
///
/// - **Extensions** (`extension`) exist only in desktop browsers with extensions (Chrome desktop, Firefox, Safari). Their
///   page script replaces `navigator.credentials.create` and `get`, so the first in the device's order takes a create
///   and answers first in a get; it falls back to the browser's own manager when it holds nothing (Bitwarden's
///   `FallbackRequestedError`, `fido2-page-script.ts`; keepassxc-browser `passkeys-inject.js`). They never override the
///   signal methods, so signals go to the browser (same files).
/// - **OS providers** (`osProvider`) exist from Android 14 (developer.android.com/identity/credential-manager/
///   credential-provider) and from iOS 17 / macOS 14 (`ASCredentialProviderViewController` passkey support). On
///   Android the preferred service takes a create and every enabled provider's passkeys are in the account selector;
///   Chrome on Android 14+ "sends the signal to all enabled passkey providers" (developer.chrome.com/blog/
///   signal-api-android). On Apple platforms a third-party provider gets signals from the 26 releases
///   (`ASCredentialProviderViewController` report methods), unconfirmed; that the system sheet proposes the preferred
///   provider for a new passkey is unconfirmed too. On Windows 11 a plugin authenticator (`webauthnplugin.h`) is
///   reached for creates and gets only: no signal reaches it (`Platform.osProviderEntryPoints`).
/// - **Built-in** managers (`builtIn`: GPM, iCloud Keychain) are always reachable and always get signals.
public struct DeviceRouting: Sendable {
    /// One account on the device, with how its provider plugs in.
    public struct Account: Sendable {
        public var name: String
        public var integration: PolicyKnobs.Integration
        /// The provider lists passkeys in a conditional get's autofill dropdown (`conditionalGet.mode` answered).
        public var offersInAutofill: Bool

        public init(name: String, integration: PolicyKnobs.Integration, offersInAutofill: Bool) {
            self.name = name
            self.integration = integration
            self.offersInAutofill = offersInAutofill
        }
    }

    public let device: Device
    /// The device's accounts in its order.
    public let accounts: [Account]

    public init(device: Device, accounts: [Account]) {
        self.device = device
        self.accounts = accounts
    }

    /// Why an account takes no part on this device, or nil when the platform reaches it.
    public func unreachable(_ account: Account) -> String? {
        let platform = device.platform
        switch account.integration {
        case .builtIn:
            return nil
        case .extension:
            return [.chromeDesktop, .chromeWindows, .firefox, .safari].contains(platform) ? nil
                : "a browser extension, and \(platform.rawValue) runs no extensions"
        case .osProvider:
            let os = device.state.osVersion.flatMap(Version.init)
            func since(_ floor: String, _ system: String) -> String? {
                guard let os, os < Version(floor)! else { return nil }
                return "an OS credential provider, which \(system) \(os) does not have (from \(floor))"
            }
            switch platform {
            case .chromeAndroid, .android: return since("14", "Android")
            case .ios, .safari: return since("17", "iOS")
            case .macos: return since("14", "macOS")
            // Windows 11's plugin authenticators (webauthnplugin.h); the Windows build that brought them is not modelled.
            case .chromeWindows: return nil
            case .chromeDesktop, .firefox: return "an OS credential provider, which \(platform.rawValue) does not reach"
            }
        }
    }

    /// The accounts the platform reaches, in the device's order.
    public var reachable: [Account] { accounts.filter { unreachable($0) == nil } }

    /// Whether the platform has a preferred provider for new passkeys (Android's preferred service; Apple's
    /// choice, unconfirmed). Desktop browsers have none: an extension takes over, or the browser's own manager answers.
    var honoursPreferred: Bool { ![.chromeDesktop, .chromeWindows, .firefox].contains(device.platform) }

    /// The account a create goes to, and why.
    public func createTarget() -> (account: Account, rule: String)? {
        let reach = reachable
        if let ext = reach.first(where: { $0.integration == .extension }) {
            return (ext, "the extension's page script takes navigator.credentials.create")
        }
        if honoursPreferred, let preferred = device.preferredProvider, let account = reach.first(where: { $0.name == preferred }) {
            return (account, "the device's preferred provider")
        }
        if let builtIn = reach.first(where: { $0.integration == .builtIn }) { return (builtIn, "the platform's own manager") }
        return reach.first.map { ($0, "the first enabled provider") }
    }

    /// The accounts a get asks, in the order the platform lists their passkeys: extensions first (they answer
    /// before the browser), then the preferred provider where the platform has one, then the rest in the device's order.
    public func getOrder() -> [Account] {
        let reach = reachable
        let extensions = reach.filter { $0.integration == .extension }
        var rest = reach.filter { $0.integration != .extension }
        if honoursPreferred, let preferred = device.preferredProvider, let i = rest.firstIndex(where: { $0.name == preferred }) {
            rest.insert(rest.remove(at: i), at: 0)
        }
        return extensions + rest
    }

    /// The accounts a conditional get's dropdown lists: those of `getOrder()` whose provider offers in autofill.
    public func autofillOrder() -> [Account] { getOrder().filter(\.offersInAutofill) }

    /// The accounts a signal reaches.
    public func signalTargets() -> [Account] {
        reachable.filter { account in
            switch account.integration {
            case .builtIn: return true
            case .extension: return false
            case .osProvider:
                guard device.platform.osProviderEntryPoints.signals else { return false }
                switch device.platform {
                case .chromeAndroid, .android: return true
                case .ios, .macos, .safari:
                    // The report methods of a provider extension arrived with the 26 releases (unconfirmed).
                    return device.state.osVersion.flatMap(Version.init).map { $0 >= Version("26")! } ?? true
                case .chromeDesktop, .chromeWindows, .firefox: return false
                }
            }
        }
    }
}
