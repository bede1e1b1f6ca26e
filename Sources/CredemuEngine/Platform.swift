/// Where a profile's provider runs; it decides the dialect outcomes are rendered in.
public enum Platform: String, Sendable, CaseIterable, Codable {
    case chromeDesktop = "chrome-desktop"
    case chromeAndroid = "chrome-android"
    /// A native Android app through androidx.credentials.
    case android
    case safari
    /// A native iOS app through AuthenticationServices.
    case ios
    /// A native macOS app through AuthenticationServices.
    case macos

    /// The surface an RP on this platform sees errors through.
    public var dialect: DialectKind {
        switch self {
        case .chromeDesktop, .chromeAndroid, .safari: return .web
        case .android: return .android
        case .ios, .macos: return .apple
        }
    }
}

public enum DialectKind: String, Sendable, Codable {
    case web, android, apple
}
