/// Where a profile's provider runs; it decides the dialect outcomes are rendered in.
public enum Platform: String, Sendable, CaseIterable, Codable {
    case chromeDesktop = "chrome-desktop"
    case chromeAndroid = "chrome-android"
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
        case .chromeDesktop, .chromeAndroid, .safari, .firefox: return .web
        case .android: return .android
        case .ios, .macos: return .apple
        }
    }

    /// Whether the platform's browser is Chromium, whose renderer checks every request before any provider is asked
    /// (Blink's `authentication_credentials_container.cc`; `Engine.makesBlinkChecks`). A new Chromium-based platform
    /// (Windows, Edge) answers true.
    public var rendererIsBlink: Bool {
        switch self {
        case .chromeDesktop, .chromeAndroid: return true
        case .android, .safari, .firefox, .ios, .macos: return false
        }
    }

    /// A phone a desktop reaches over hybrid: Android (Chrome or an app, GPM through Play services) or an iPhone.
    public var isPhone: Bool { self == .chromeAndroid || self == .android || self == .ios }
}

public enum DialectKind: String, Sendable, Codable {
    case web, android, apple
}
