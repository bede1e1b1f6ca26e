import Foundation
import Vault
import WebAuthn

/// Immediate mediation's request counts for one browser and top-frame registrable domain
/// (`immediateGet.rateLimit`): one sliding window of request times per window, kept in the vault
/// (`Vault.countImmediateRequest`), so every process on it counts one browser's requests together, as the signal
/// quotas are counted. Chrome's `ImmediateRequestRateLimiter` counts per top-frame site for the browser's life.
struct ImmediateRequestCounts {
    /// Each window's request times (ms), oldest first.
    var times: [[Int64]]

    /// The stored form, windows separated by `;`, times by `,`; a window missing or unreadable is empty.
    init(stored: String?, windows: Int) {
        let parts = (stored ?? "").split(separator: ";", omittingEmptySubsequences: false)
        times = (0..<windows).map { i in i < parts.count ? parts[i].split(separator: ",").compactMap { Int64($0) } : [] }
    }

    var stored: String { times.map { $0.map(String.init).joined(separator: ",") }.joined(separator: ";") }

    /// Whether a request at `now` (ms) passes every window, in order; a window it passes counts it even when a
    /// later one refuses it (Chrome acquires the long window, then the short one). Returns the refusing window. A
    /// window keeps at most its `max` times.
    mutating func acquire(now: Int64, windows: [(max: Int, seconds: Int)]) -> (max: Int, seconds: Int)? {
        for (index, window) in windows.enumerated() {
            let start = now - Int64(window.seconds) * 1000
            times[index].removeAll { $0 <= start }
            guard times[index].count < window.max else { return window }
            times[index].append(now)
        }
        return nil
    }

    /// When the last time kept leaves its window: after it the counts say nothing, and the vault may drop them.
    func expiry(windows: [(max: Int, seconds: Int)]) -> Int64 {
        zip(times, windows).compactMap { kept, window in kept.last.map { $0 + Int64(window.seconds) * 1000 } }.max() ?? 0
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
            let windows = knobs.immediateGetRateLimit.windows
            let now = Timestamp.millis(clock.now())
            // Counted in a transaction of its own, before the ceremony's: a request refused later still counts.
            let over = try store { () throws(VaultError) in
                try vault.countImmediateRequest(browser: profile.device ?? profile.name, site: site, now: now) { stored in
                    var counts = ImmediateRequestCounts(stored: stored, windows: windows.count)
                    let over = counts.acquire(now: now, windows: windows)
                    return (counts.stored, counts.expiry(windows: windows), over)
                }
            }
            if let over {
                throw refused(.rateLimited, "from \(site) is over \(over.max) in \(over.seconds) s (" + knobs.cite("immediateGet.rateLimit", knobs.immediateGetRateLimit.description) + ")")
            }
        }
        if try candidates(options, rpID: rpID, limit: 1).isEmpty {
            throw refused(.noCredential, "finds no credential the provider holds for \(rpID), so none is shown")
        }
    }
}
