/// What a page's API looks like on a target beside what every page has, as its packs decide
/// (`Operations.pageFacts`): the shim's configuration says it.
public struct PageFacts: Sendable, Equatable {
    /// `signals.methodsExposed`: false where the platform has no signal methods (Firefox).
    public var signalMethods: Bool
    /// `mediation: "immediate"` is a value the page's browser accepts (`immediateGet.sinceBrowserVersion`); the shim
    /// accepts it only where the real browser it runs in does too.
    public var immediateMediation: Bool
    /// `response.getPublicKey` absent: a create's response has no `getPublicKey` of its own.
    public var publicKeyMethodAbsent: Bool
    /// `Engine.makesBlinkChecks` of the page's provider: the shim makes Chrome's renderer checks in Blink's order.
    public var blinkChecks: Bool

    public init(signalMethods: Bool, immediateMediation: Bool, publicKeyMethodAbsent: Bool, blinkChecks: Bool = false) {
        self.signalMethods = signalMethods
        self.immediateMediation = immediateMediation
        self.publicKeyMethodAbsent = publicKeyMethodAbsent
        self.blinkChecks = blinkChecks
    }
}
