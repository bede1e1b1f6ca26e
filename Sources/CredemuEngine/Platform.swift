/// Where a profile's provider runs; it decides the dialect outcomes are rendered in.
public enum Platform: String, Sendable, CaseIterable, Codable {
    case chromeDesktop = "chrome-desktop"
    case chromeAndroid = "chrome-android"
    /// A Chromium browser on Windows: Chrome, or Edge, whose Blink, `device/fido/win` and webauthn.dll are the same;
    /// what differs between the two is the browser's own password manager, which is a pack (`gpm`, `edge`). Windows
    /// Hello is the platform authenticator (`windows-hello`); third-party managers reach it as extensions or as
    /// Windows 11 plugin authenticators (`webauthnplugin.h`).
    case chromeWindows = "chrome-windows"
    /// A native Android app through androidx.credentials.
    case android
    case safari
    /// Firefox desktop (135+, `getClientCapabilities`); third-party managers run in it as extensions. Gecko has no
    /// signal methods and reports `conditionalCreate: false` (`dom/webauthn/PublicKeyCredential.cpp`).
    case firefox
    /// A native iOS app through AuthenticationServices.
    case ios
    /// A native macOS app through AuthenticationServices.
    case macos

    /// The surface an RP on this platform sees errors through.
    public var dialect: DialectKind {
        switch self {
        case .chromeDesktop, .chromeAndroid, .chromeWindows, .safari, .firefox: return .web
        case .android: return .android
        case .ios, .macos: return .apple
        }
    }

    /// Whether the platform's browser is Chromium, whose renderer checks every request before any provider is asked
    /// (Blink's `authentication_credentials_container.cc`; `Engine.makesBlinkChecks`). Chrome and Edge on Windows run
    /// the same Blink, so `chromeWindows` answers true; a new Chromium-based platform does too.
    public var rendererIsBlink: Bool {
        switch self {
        case .chromeDesktop, .chromeAndroid, .chromeWindows: return true
        case .android, .safari, .firefox, .ios, .macos: return false
        }
    }

    /// A phone a desktop reaches over hybrid: Android (Chrome or an app, GPM through Play services) or an iPhone.
    public var isPhone: Bool { self == .chromeAndroid || self == .android || self == .ios }

    /// What the OS's API for third-party providers (`device.integration` osProvider) carries besides a modal create and
    /// a get: an entry point for a conditional create, and one for the signals. Windows 11's plugin authenticator API
    /// (microsoft/webauthn `webauthnplugin.h`: add and remove the authenticator, its credentials' metadata for autofill,
    /// Hello user verification; `pluginauthenticator.h`: MakeCredential, GetAssertion, CancelOperation) has neither, so
    /// a plugin provider gets no conditional create and no signal. Elsewhere the platform's rules decide
    /// (`DeviceRouting.signalTargets`, the pack's knobs).
    public var osProviderEntryPoints: (conditionalCreate: Bool, signals: Bool) {
        self == .chromeWindows ? (false, false) : (true, true)
    }
}

public enum DialectKind: String, Sendable, Codable {
    case web, android, apple
}
