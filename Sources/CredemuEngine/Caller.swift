import Vault
import WebAuthn

/// Who is calling: the origin in client data, and whether the frame is cross-origin to the top level.
public struct Caller: Equatable, Sendable {
    public var origin: Origin { didSet { serializedOrigin = origin.description } }
    /// `origin` serialized, as client data and events carry it: made once, where every ceremony made it two or three
    /// times (about 1% of an in-process assertion's samples).
    public private(set) var serializedOrigin: String
    public var topOrigin: Origin?
    /// For an Android app origin: the calling package, echoed in client data.
    public var androidPackageName: String?
    /// Whether the calling frame has transient user activation (HTML's; a click or key press under 5 s ago, not yet
    /// consumed). A page's shim reports it; other callers act for a user who has just clicked.
    public var hasUserActivation: Bool = true

    public init(origin: Origin, topOrigin: Origin? = nil, androidPackageName: String? = nil) {
        self.origin = origin
        serializedOrigin = origin.description
        self.topOrigin = topOrigin
        self.androidPackageName = androidPackageName
    }

    public init(origin: String, topOrigin: String? = nil, androidPackageName: String? = nil) throws(WebAuthnError) {
        (self.origin, serializedOrigin) = try Origin.parsed(origin)
        self.topOrigin = try topOrigin.map { (s) throws(WebAuthnError) in try Origin(s) }
        self.androidPackageName = androidPackageName
    }

    /// `sameOriginWithAncestors` is false when a top origin differs from the caller's.
    public var isCrossOrigin: Bool { topOrigin.map { $0 != origin } ?? false }
}
