import Foundation
import Synchronization
import Vault
import WebAuthn

/// Immediate mediation's request counts (`immediateGet.rateLimit`): one sliding window of request times per
/// (browser, top-frame registrable domain, window), in memory. One per server process (`Operations` shares it with
/// every engine it makes), so the count dies with the process, as Chrome's `ImmediateRequestRateLimiter` dies with
/// the browser; each CLI invocation starts with none.
public final class ImmediateRequestLimiter: Sendable {
    private struct Key: Hashable { var browser: String; var site: String; var window: Int }
    private let times = Mutex([Key: [Int64]]())

    public init() {}

    /// Whether a request at `now` (ms) passes every window, in order; a window it passes counts it even when a
    /// later one refuses it (Chrome acquires the long window, then the short one). Returns the refusing window.
    func acquire(browser: String, site: String, now: Int64, windows: [(max: Int, seconds: Int)]) -> (max: Int, seconds: Int)? {
        times.withLock { times in
            for (index, window) in windows.enumerated() {
                let key = Key(browser: browser, site: site, window: index)
                let start = now - Int64(window.seconds) * 1000
                var kept = (times[key] ?? []).filter { $0 > start }
                guard kept.count < window.max else {
                    times[key] = kept
                    return window
                }
                kept.append(now)
                times[key] = kept
            }
            return nil
        }
    }
}

extension Engine {
    /// `mediation: "immediate"` exists in this browser (`immediateGet.sinceBrowserVersion`, the profile's
    /// `browserVersion`); otherwise the value fails the WebIDL enum conversion, as in a browser without it.
    public var hasImmediateMediation: Bool {
        guard let since = knobs.immediateGetSince.flatMap(Version.init) else { return false }
        guard let version = profile.browserVersion.flatMap(Version.init) else { return true }
        return version >= since
    }

    /// Refuses "immediate" where the browser has no such mediation, before anything else is read.
    func checkImmediateMediationExists(_ options: RequestOptions) throws(CeremonyError) {
        guard options.mediation == "immediate", !hasImmediateMediation else { return }
        let why = knobs.immediateGetSince.map { knobs.cite("immediateGet.sinceBrowserVersion", $0) + " and the profile's browserVersion is \(profile.browserVersion ?? "")" }
            ?? knobs.cite("immediateGet.sinceBrowserVersion", "null")
        throw CeremonyError(.typeError("Failed to execute 'get' on 'CredentialsContainer': Failed to read the 'mediation' property from 'CredentialRequestOptions': The provided value 'immediate' is not a valid enum value of type CredentialMediationRequirement. (\(why))"),
                            reason: .malformedRequest)
    }

    /// Chrome's `MaybeHandleImmediateMediation`: an immediate get fails at once, showing nothing, in a private
    /// tab, over the rate limit, or when the provider holds no credential it may use. Every refusal is the one
    /// NotAllowedError, so a page cannot tell them apart.
    func checkImmediateGet(_ options: RequestOptions, rpID: String, caller: Caller, detail: inout [(String, JSONValue)]) throws(CeremonyError) {
        guard options.mediation == "immediate" else { return }
        detail.append(("immediate", .string(knobs.cite("immediateGet.timeoutMillis", "\(knobs.immediateGetTimeoutMillis)"))))
        func refused(_ reason: Reason, _ why: String) -> CeremonyError {
            CeremonyError(.notAllowed("The operation either timed out or was not allowed: an immediate request " + why + "."), reason: reason)
        }
        if knobs.immediateGetRefusedInPrivate && profile.privateBrowsing {
            throw refused(.privateBrowsing, "in a private-browsing tab is refused at once (" + knobs.cite("immediateGet.privateBrowsing", "notAllowed") + ")")
        }
        let top = caller.topOrigin ?? caller.origin
        if case .web(_, let host, _) = top, !(knobs.immediateGetRateLimit.exemptLocalhost && host == "localhost"),
           !knobs.immediateGetRateLimit.windows.isEmpty {
            let site = RelyingPartyID.registrableDomain(host)
            if let over = immediateLimiter.acquire(browser: profile.device ?? profile.name, site: site, now: Int64((clock.now().timeIntervalSince1970 * 1000).rounded(.down)),
                                                   windows: knobs.immediateGetRateLimit.windows) {
                throw refused(.rateLimited, "from \(site) is over \(over.max) in \(over.seconds) s (" + knobs.cite("immediateGet.rateLimit", knobs.immediateGetRateLimit.description) + ")")
            }
        }
        if try candidates(options, rpID: rpID, limit: 1).isEmpty {
            throw refused(.noCredential, "finds no credential the provider holds for \(rpID), so none is shown")
        }
    }
}
