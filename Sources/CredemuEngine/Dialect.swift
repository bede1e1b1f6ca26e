import WebAuthn

/// Renders one engine outcome the way each platform's RP code sees it: the web's DOMException, Android's
/// androidx.credentials exception, Apple's `ASAuthorizationError`. Where providers differ (which exception an
/// ineligible conditional create raises), the pack's knob decides.
public enum Dialect {
    public enum Operation: String, Sendable { case create, get, signal }

    /// All three renderings, as JSON; `osVersion` is the device's (Apple's codes depend on it), nil for a current one.
    public static func render(_ failure: CeremonyError, operation: Operation, knobs: PolicyKnobs, osVersion: String? = nil) -> JSONValue {
        .object([
            ("web", web(failure)),
            ("android", android(failure, operation: operation, knobs: knobs)),
            ("apple", apple(failure, operation: operation, knobs: knobs, osVersion: osVersion)),
        ])
    }

    /// The DOMException (or TypeError) a page's promise rejects with.
    public static func web(_ failure: CeremonyError) -> JSONValue {
        .object([("name", .string(failure.error.name.rawValue)), ("message", .string(failure.error.message))])
    }

    /// androidx.credentials 1.6 exception classes and type strings (providers.md §2.4).
    public static func android(_ failure: CeremonyError, operation: Operation, knobs: PolicyKnobs) -> JSONValue {
        let name = failure.error.name.rawValue
        func dom(_ cls: String, _ typePrefix: String) -> JSONValue {
            .object([("exception", .string(cls)),
                     ("type", .string("\(typePrefix)/androidx.credentials.TYPE_\(screaming(name))")),
                     ("domError", .string(name)), ("message", .string(failure.error.message))])
        }
        func plain(_ cls: String, _ type: String) -> JSONValue {
            .object([("exception", .string(cls)), ("type", .string(type)), ("message", .string(failure.error.message))])
        }
        switch operation {
        case .create:
            if failure.silent && knobs.androidIneligible == .noCreateOption {
                return plain("androidx.credentials.exceptions.CreateCredentialNoCreateOptionException",
                             "android.credentials.CreateCredentialException.TYPE_NO_CREATE_OPTIONS")
            }
            switch failure.reason {
            case .platformUnsupported:
                return plain("androidx.credentials.exceptions.CreateCredentialUnsupportedException",
                             "androidx.credentials.TYPE_CREATE_CREDENTIAL_UNSUPPORTED_EXCEPTION")
            case .userCancelled:
                return plain("androidx.credentials.exceptions.CreateCredentialCancellationException",
                             "android.credentials.CreateCredentialException.TYPE_USER_CANCELED")
            default:
                return dom("androidx.credentials.exceptions.publickeycredential.CreatePublicKeyCredentialDomException",
                           "androidx.credentials.TYPE_CREATE_PUBLIC_KEY_CREDENTIAL_DOM_EXCEPTION")
            }
        case .get:
            switch failure.reason {
            case .noCredential:
                return plain("androidx.credentials.exceptions.NoCredentialException", "android.credentials.GetCredentialException.TYPE_NO_CREDENTIAL")
            case .userCancelled:
                return plain("androidx.credentials.exceptions.GetCredentialCancellationException",
                             "android.credentials.GetCredentialException.TYPE_USER_CANCELED")
            default:
                return dom("androidx.credentials.exceptions.publickeycredential.GetPublicKeyCredentialDomException",
                           "androidx.credentials.TYPE_GET_PUBLIC_KEY_CREDENTIAL_DOM_EXCEPTION")
            }
        case .signal:
            if failure.reason == .rateLimited {
                let message = playServicesRateLimitMessage(retryMillis: failure.retryMillis ?? 0)
                return .object([
                    ("exception", "androidx.credentials.exceptions.publickeycredential.SignalCredentialRateLimitExceededException"),
                    ("type", "androidx.credentials.SignalCredentialStateException.RATE_LIMIT_EXCEEDED"),
                    ("retryMillis", .number(Double(androidxRetryMillis(message)))),
                    ("message", .string(message)),
                ])
            }
            switch failure.error.name {
            case .typeError: return plain("java.lang.IllegalArgumentException", "java.lang.IllegalArgumentException")
            case .securityError:
                return plain("androidx.credentials.exceptions.publickeycredential.SignalCredentialSecurityException",
                             "androidx.credentials.SignalCredentialStateException.SECURITY")
            default:
                return plain("androidx.credentials.exceptions.publickeycredential.SignalCredentialUnknownException",
                             "androidx.credentials.SignalCredentialStateException.UNKNOWN")
            }
        }
    }

    /// Play services' message for a signal over its quota, which androidx matches ("called too frequently") to raise
    /// `SignalCredentialRateLimitExceededException`; the minutes are the wait rounded up to a whole minute (how Play
    /// services rounds is unconfirmed: its source is closed).
    static func playServicesRateLimitMessage(retryMillis: Int) -> String {
        let minutes = max(1, retryMillis / 60_000 + (retryMillis % 60_000 > 0 ? 1 : 0))
        return "SignalCredentialState has been called too frequently. Please retry later after \(minutes) minutes."
    }

    /// androidx's `retryMillis` for that message, as `SignalCredentialStateController.parseRefillMinutesRegex` reads it
    /// (androidx/androidx credentials/credentials-play-services-auth/.../signalcredentialstate/
    /// SignalCredentialStateController.kt): the minute count of `^SignalCredentialState has been called too frequently\.
    /// Please retry later after (\d+) minutes\.$`, taken as milliseconds unconverted (`toIntOrNull()?.toLong()`), or
    /// `MAX_RETRY_TIME` (600000) when the message is absent, does not match, or the count overflows a Kotlin Int.
    static func androidxRetryMillis(_ message: String?) -> Int {
        let maxRetryTime = 600_000
        let prefix = "SignalCredentialState has been called too frequently. Please retry later after ", suffix = " minutes."
        guard let message, message.hasPrefix(prefix), message.hasSuffix(suffix), message.count > prefix.count + suffix.count else { return maxRetryTime }
        let digits = message.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let minutes = Int32(digits) else { return maxRetryTime }
        return Int(minutes)
    }

    /// `ASAuthorizationError` codes (AuthenticationServices ASAuthorizationError.h; providers.md §3.2). 1006 and
    /// 1010 exist only from the OS versions the pack names (`apple.matchedExcludedCredentialSince`,
    /// `apple.deviceNotConfiguredSince`); on an older device credemu renders failed (1004) in their place.
    public static func apple(_ failure: CeremonyError, operation: Operation, knobs: PolicyKnobs, osVersion: String? = nil) -> JSONValue {
        func exists(since: String?) -> Bool {
            guard let since, let minimum = Version(since), let osVersion, let version = Version(osVersion) else { return true }
            return !(version < minimum)
        }
        let excluded = exists(since: knobs.appleMatchedExcludedSince) ? 1006 : 1004
        let notConfigured = exists(since: knobs.appleDeviceNotConfiguredSince) ? 1010 : 1004
        let code: Int
        if failure.silent {
            code = failure.reason == .noDevicePasscode ? notConfigured : knobs.appleIneligibleCode
        } else {
            switch (failure.reason, failure.error.name) {
            case (.excludedCredential, _): code = excluded
            case (.noDevicePasscode, _): code = notConfigured
            case (.userCancelled, _), (.timedOut, _), (.noCredential, _), (.noAnswerUntilTimeout, _): code = 1001
            case (_, .unknownError): code = 1000
            default: code = 1004
            }
        }
        return .object([("domain", "ASAuthorizationErrorDomain"), ("code", .number(Double(code))),
                        ("name", .string(appleNames[code] ?? "unknown")), ("message", .string(failure.error.message))])
    }

    static let appleNames: [Int: String] = [
        1000: "unknown", 1001: "canceled", 1002: "invalidResponse", 1003: "notHandled", 1004: "failed", 1005: "notInteractive",
        1006: "matchedExcludedCredential", 1007: "credentialImport", 1008: "credentialExport", 1009: "preferSignInWithApple",
        1010: "deviceNotConfiguredForPasskeyCreation",
    ]

    /// "NotAllowedError" -> "NOT_ALLOWED_ERROR".
    static func screaming(_ camel: String) -> String {
        var out = ""
        for (i, ch) in camel.enumerated() {
            if ch.isUppercase && i > 0 { out += "_" }
            out += ch.uppercased()
        }
        return out
    }
}
