import CredemuEngine
import WebAuthn

extension PolicyRegistry {
    /// The providers a scenario runs on: "all" (every policy on the scenario's platform for it, else its
    /// default), or a list such as "gpm,apple@ios,webauthn-spec".
    public func select(_ text: String, for scenario: Scenario) throws(InvalidConfiguration) -> [(any ProviderPolicy, Platform)] {
        try select(text, platforms: scenario.platforms)
    }
}
