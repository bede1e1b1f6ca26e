import WebAuthn

/// Why an engine outcome is what it is: a stable code in the spirit of Chrome's `PasskeyUpgradeResult`
/// (`kOptOut`, `kNoMatchingPassword`, ...), recorded in the event log and returned with every failure.
public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let success = Reason(rawValue: "success")
    public static let malformedRequest = Reason(rawValue: "malformedRequest")
    public static let securityError = Reason(rawValue: "securityError")
    public static let unsupportedAlgorithm = Reason(rawValue: "unsupportedAlgorithm")
    public static let excludedCredential = Reason(rawValue: "excludedCredential")
    public static let noCredential = Reason(rawValue: "noCredential")
    public static let userCancelled = Reason(rawValue: "userCancelled")
    public static let timedOut = Reason(rawValue: "timedOut")
    /// The page aborted the ceremony (its AbortSignal).
    public static let aborted = Reason(rawValue: "aborted")
    /// The authenticator or profile answering was removed mid-ceremony (WebDriver's Remove Virtual Authenticator,
    /// a profile or device deleted): NotAllowedError, as a security key pulled out of its port.
    public static let authenticatorRemoved = Reason(rawValue: "authenticatorRemoved")
    /// Another request of the caller is still pending.
    public static let requestPending = Reason(rawValue: "requestPending")
    public static let noAnswerUntilTimeout = Reason(rawValue: "noAnswerUntilTimeout")
    public static let passkeysDisabled = Reason(rawValue: "passkeysDisabled")
    /// The RP asked for the other authenticator attachment and the browser did not offer the provider.
    public static let attachmentNotOffered = Reason(rawValue: "attachmentNotOffered")
    public static let storage = Reason(rawValue: "storage")
    /// No provider account on the device is reachable on its platform (`DeviceRouting`).
    public static let noProvider = Reason(rawValue: "noProvider")
    /// An extension input the client refuses (a large blob read at creation, a PRF key not in the allow list).
    public static let invalidExtensionInput = Reason(rawValue: "invalidExtensionInput")
    /// The RP requires large blob support and the provider has none.
    public static let largeBlobUnsupported = Reason(rawValue: "largeBlobUnsupported")
    // Conditional create (automatic passkey upgrade).
    public static let conditionalCreateUnsupported = Reason(rawValue: "conditionalCreateUnsupported")
    public static let platformUnsupported = Reason(rawValue: "platformUnsupported")
    public static let optOut = Reason(rawValue: "optOut")
    public static let noDevicePasscode = Reason(rawValue: "noDevicePasscode")
    public static let noMatchingPassword = Reason(rawValue: "noMatchingPassword")
    public static let noRecentlyUsedPassword = Reason(rawValue: "noRecentlyUsedPassword")
    public static let passkeyExists = Reason(rawValue: "passkeyExists")
    public static let crossOriginIframe = Reason(rawValue: "crossOriginIframe")
    public static let userVerificationRequired = Reason(rawValue: "userVerificationRequired")
    /// The browser profile is not signed in and syncing passwords (GPM: `kPasswordStoreError`).
    public static let passwordStoreUnavailable = Reason(rawValue: "passwordStoreUnavailable")
    /// A private-browsing tab (Safari's system check).
    public static let privateBrowsing = Reason(rawValue: "privateBrowsing")
    // Signals.
    public static let rateLimited = Reason(rawValue: "rateLimited")
    /// The platform has no signal methods (Firefox): the page's call is a TypeError.
    public static let signalMethodsMissing = Reason(rawValue: "signalMethodsMissing")
}

/// One engine failure: the web error a browser raises, why, and how the caller should read it.
/// Platform dialects (`Dialect`) render this one value for the web, Android and Apple.
public struct CeremonyError: Error, Equatable, Sendable, CustomStringConvertible {
    public var error: WebAuthnError
    public var reason: Reason
    /// An expected no-op that shows the user nothing (an ineligible conditional create).
    public var silent: Bool
    /// For a rate-limited call that is rejected: how long to wait before retrying.
    public var retryMillis: Int?
    /// The operation's timeout, for failures that surface only when it runs out.
    public var settlesAfterMillis: Int?

    public init(_ error: WebAuthnError, reason: Reason, silent: Bool = false, retryMillis: Int? = nil, settlesAfterMillis: Int? = nil) {
        self.error = error
        self.reason = reason
        self.silent = silent
        self.retryMillis = retryMillis
        self.settlesAfterMillis = settlesAfterMillis
    }

    /// A client-rule failure, with the reason its name implies.
    public init(_ error: WebAuthnError) {
        let reason: Reason
        switch error.name {
        case .typeError: reason = .malformedRequest
        case .securityError: reason = .securityError
        case .notSupportedError: reason = .unsupportedAlgorithm
        case .invalidStateError: reason = .excludedCredential
        case .notAllowedError: reason = .noCredential
        case .unknownError: reason = .storage
        default: reason = Reason(rawValue: error.name.rawValue)
        }
        self.init(error, reason: reason)
    }

    public var description: String { "\(error) [\(reason)]" }
}
