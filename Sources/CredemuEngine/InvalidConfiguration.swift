import WebAuthn

/// A profile setting, policy pack or scenario that cannot be used, with what is wrong and where. Not a WebAuthn
/// error: no ceremony ran. The CLI prints `json` and exits with its usage status.
public struct InvalidConfiguration: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case profileSetting = "InvalidProfileSetting"
        case deviceSetting = "InvalidDeviceSetting"
        case policyPack = "InvalidPolicyPack"
        case scenario = "InvalidScenario"
        /// A pack claims an extension the engine cannot answer (`providers validate` refuses it).
        case unansweredExtension = "UnansweredExtension"
        /// A scenario run over `ScenarioLimits`.
        case scenarioTooLarge = "ScenarioTooLarge"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// `{"error": {"name": "InvalidProfileSetting" | "InvalidDeviceSetting" | "InvalidPolicyPack" | "InvalidScenario" | "UnansweredExtension" | "ScenarioTooLarge", "message": ...}}`.
    public var json: JSONValue {
        ErrorBody.json(name: kind.rawValue, message: message)
    }

    /// What a configuration reader raises before it is known which configuration it reads (a profile setting is
    /// read on its own, and in a scenario's setting step); `reading` gives it its kind.
    public struct Field: JSONFieldFailure {
        public var message: String
        public static func invalidField(_ message: String) -> Field { Field(message: message) }
    }

    /// Runs a reader, its failure becoming a configuration error of `kind`, prefixed by the file it came from.
    public static func reading<T>(_ kind: Kind, from origin: String? = nil, _ read: () throws(Field) -> T) throws(InvalidConfiguration) -> T {
        do {
            return try read()
        } catch {
            throw InvalidConfiguration(kind, origin.map { "\($0): \(error.message)" } ?? error.message)
        }
    }
}

/// Typed reads from profiles, packs and scenarios.
public typealias ConfigurationFields = JSONFields<InvalidConfiguration.Field>
