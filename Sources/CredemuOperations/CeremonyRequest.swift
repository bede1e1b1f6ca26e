import CredemuEngine
import Vault
import WebAuthn

/// A create, get or signal as a front end received it, before any WebAuthn rule: the options document and
/// who the caller says it is.
public struct CeremonyRequest: Sendable {
    /// The options: web JSON (bare or `{"publicKey": ...}`), Android's `requestJson` shape or Apple's fields;
    /// text is parsed by the operation so malformed JSON fails as the ceremony's `TypeError`.
    public enum Options: Sendable {
        case json(JSONValue)
        case text(String)
    }

    public var options: Options
    public var origin: String?
    public var topOrigin: String?
    public var androidPackage: String?
    /// Another platform of the profile's account (the pack must model it).
    public var platform: String?
    /// `modal` or a WebAuthn mediation value; overrides the options' own.
    public var mediation: String?
    /// A base64url credential ID the simulated user picks in a get.
    public var pick: String?
    /// The caller's ID for the ceremony (the shim sends one), by which it can abort it.
    public var ceremony: String?
    /// The only origin this caller may act for: a page's `Origin` header. Nil for trusted callers (the CLI,
    /// and HTTP clients that are not pages), which name the origin themselves.
    public var restrictedTo: String?
    /// Whether the caller has gone (its connection closed): a wait for a pick or a hold ends then.
    public var clientGone: @Sendable () -> Bool
    /// Whether the calling frame has transient user activation (the shim reports the page's); nil for a caller that
    /// acts for a user who has just clicked.
    public var userActivation: Bool?
    /// Whether the caller may be made to wait at all: false for a request the server answers on a pool thread,
    /// which neither a hold armed after it was dispatched nor a dropdown holds there.
    public var mayWait: Bool

    public init(options: Options, origin: String? = nil, topOrigin: String? = nil, androidPackage: String? = nil,
                platform: String? = nil, mediation: String? = nil, pick: String? = nil, ceremony: String? = nil,
                restrictedTo: String? = nil, userActivation: Bool? = nil, clientGone: @escaping @Sendable () -> Bool = { false },
                mayWait: Bool = true) {
        self.options = options
        self.origin = origin
        self.topOrigin = topOrigin
        self.androidPackage = androidPackage
        self.platform = platform
        self.mediation = mediation
        self.pick = pick
        self.ceremony = ceremony
        self.restrictedTo = restrictedTo
        self.userActivation = userActivation
        self.clientGone = clientGone
        self.mayWait = mayWait
    }

    /// The options as JSON; malformed text is the `TypeError` a browser raises.
    func document() throws(WebAuthnError) -> JSONValue {
        switch options {
        case .json(let value): return value
        case .text(let text):
            do {
                return try JSONValue.parse(text)
            } catch {
                throw .typeError("The options are not valid JSON: \(error.description).")
            }
        }
    }

    /// The caller: the named origin, else the native shape's, else the page's own.
    func caller(nativeOrigin: String?) throws(OperationError) -> Caller? {
        guard let origin = origin ?? nativeOrigin ?? restrictedTo else { return nil }
        try Operations.checkSpeaksFor(origin, restrictedTo: restrictedTo)
        do {
            var caller = try Caller(origin: origin, topOrigin: topOrigin, androidPackageName: androidPackage)
            if let userActivation { caller.hasUserActivation = userActivation }
            return caller
        } catch {
            throw OperationError(.ceremony, .web(error.name), error.message)
        }
    }
}

/// Per-credential settings a trusted caller may force on a new passkey, over the pack's.
public struct PasskeySettingOverrides: Sendable {
    public var backupEligible: Bool?
    public var backupState: Bool?
    public var counter: CounterMode?
    public var attestation: AttestationCapability?
    public var aaguid: [UInt8]?

    public init(backupEligible: Bool? = nil, backupState: Bool? = nil, counter: CounterMode? = nil,
                attestation: AttestationCapability? = nil, aaguid: [UInt8]? = nil) {
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.counter = counter
        self.attestation = attestation
        self.aaguid = aaguid
    }

    public var isEmpty: Bool { backupEligible == nil && backupState == nil && counter == nil && attestation == nil && aaguid == nil }

    func applied(to base: PasskeySettings) throws(OperationError) -> PasskeySettings {
        var s = base
        if let be = backupEligible {
            s.backupEligible = be
            if !be { s.backupState = false }
        }
        if let bs = backupState {
            guard !bs || s.backupEligible else { throw .invalidInput("Backup state needs backup eligibility (WebAuthn L3 §6.1.3).") }
            s.backupState = bs
        }
        if let counter { s.counter = counter }
        if let attestation { s.attestation = attestation }
        if let aaguid { s.aaguid = aaguid }
        return s
    }
}
