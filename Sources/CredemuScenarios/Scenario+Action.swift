import CredemuEngine
import Foundation
import WebAuthn

extension Scenario {
    /// What a step does, one case per step kind (`do` in scenarios/README.md), its arguments read and checked once.
    public enum Action: Sendable {
        case savePassword(SavePassword)
        case autofill(Autofill)
        /// The user types the password saved for this user (nil: the scenario's) and submits.
        case usePassword(user: String?)
        case advance(Advance)
        case create(Create)
        /// A get allowing the credentials with these labels (none: discoverable); `use` names the security key,
        /// phone or manager account the user chooses in the browser's sheet.
        case get(allow: [String], use: String?)
        /// Settings in the order written: the device's when the step is `on` one, else the account's.
        case setting([(String, JSONValue)])
        case signal(Signal)
        /// The user deletes the credential with this label in the provider.
        case removePasskey(label: String?)
        /// The user renames the credential with this label in the provider (its user name, display name or both).
        case renamePasskey(label: String?, name: String?, displayName: String?)
        case user([UserDecision])
        case rp(note: String?)
        /// The user moves the account's passkeys and passwords of the scenario's RP to the account `to` (CXF, the
        /// operations layer's move): the step's `account` (default the first) exports, `to` imports, and with
        /// `keepSource` the account keeps its copies (both managers then hold the passkeys).
        case move(to: String, keepSource: Bool)

        public struct SavePassword: Sendable {
            public var user: String?
            public var password: String?
            public var savedIn: String?
            /// The page whose sign-in form it is saved from (nil: the scenario's RP origin).
            public var origin: String?
        }

        public struct Autofill: Sendable {
            public var user: String?
            public var submit: Bool
            /// The page whose sign-in form is filled (nil: the scenario's RP origin).
            public var origin: String?
        }

        public struct Advance: Sendable {
            public var seconds: TimeInterval
            /// The duration as written ("6m"), when it was a string.
            public var written: String?
        }

        public struct Create: Sendable {
            public enum Exclude: Sendable {
                /// Every credential the vault holds for the user.
                case known
                case labels([String])
            }

            public var conditional: Bool
            /// The label the new credential gets (default: the next `pkN`).
            public var label: String?
            public var exclude: Exclude
            public var user: String?
            public var userID: String?
            public var userVerification: String?
            /// `authenticatorSelection.authenticatorAttachment`: "platform" or "cross-platform" (nil: none asked).
            public var attachment: String?
            /// `authenticatorSelection.residentKey` (default "required").
            public var residentKey: String
            /// The attestation conveyance asked (default "none").
            public var attestation: String
            /// The security key, phone or manager account the user chooses in the browser's sheet (`use:NAME`).
            public var use: String?
        }

        public struct Signal: Sendable {
            public enum Kind: String, Sendable {
                case unknown, accepted, details
            }

            public var kind: Kind
            public var credential: String?
            public var accepted: [String]
            public var name: String?
            public var displayName: String?
            public var userID: String?
        }

        /// The step's `do`, for the default label and the dialect's operation.
        public var name: String {
            switch self {
            case .savePassword: return "savePassword"
            case .autofill: return "autofill"
            case .usePassword: return "usePassword"
            case .advance: return "advance"
            case .create: return "create"
            case .get: return "get"
            case .setting: return "setting"
            case .signal: return "signal"
            case .removePasskey: return "removePasskey"
            case .renamePasskey: return "renamePasskey"
            case .user: return "user"
            case .rp: return "rp"
            case .move: return "move"
            }
        }

        /// A password step's `origin`: a web origin as a browser serializes it, or nil when absent.
        static func pageOrigin(_ f: ConfigurationFields) throws(InvalidConfiguration.Field) -> String? {
            guard let text = try f.string("origin") else { return nil }
            guard case .web? = try? Origin(text), (try? Origin(text))?.description == text else {
                throw f.invalid("origin", "must be a web origin such as https://login.example.com (scheme, lower-case host, optional port; no path), not \"\(text)\"")
            }
            return text
        }

        /// Reads the arguments of the step `f` whose `do` is `action` (its members already limited to the action's),
        /// with the messages of scenarios/README.md's rules.
        static func read(_ f: ConfigurationFields, _ action: String) throws(InvalidConfiguration.Field) -> Action {
            for key in ["user", "password", "savedIn", "origin", "as", "userId", "userVerification", "credential", "name", "displayName", "note", "use"] {
                _ = try f.string(key)
            }
            _ = try f.bool("submit")
            _ = try f.strings("allow")
            _ = try f.strings("accepted")
            switch action {
            case "savePassword":
                return .savePassword(SavePassword(user: try f.string("user"), password: try f.string("password"), savedIn: try f.string("savedIn"),
                                                  origin: try pageOrigin(f)))
            case "autofill":
                return .autofill(Autofill(user: try f.string("user"), submit: try f.bool("submit") ?? true, origin: try pageOrigin(f)))
            case "usePassword":
                return .usePassword(user: try f.string("user"))
            case "advance":
                let by = try f.required("by") { (key) throws(InvalidConfiguration.Field) in f.present(key) }
                guard let seconds = by.numberValue.flatMap({ (0...maximumDuration).contains($0) ? $0 : nil }) ?? by.stringValue.flatMap(parseDuration) else {
                    throw f.invalid("by", "must be a duration such as 90s, 6m, 2h or 1d, or a number of seconds, not \(by.serialized())")
                }
                return .advance(Advance(seconds: seconds, written: by.stringValue))
            case "create":
                let mediation = try f.string("mediation")
                if let mediation, !["conditional", "modal"].contains(mediation) {
                    throw f.invalid("mediation", "must be \"conditional\" or \"modal\", not \"\(mediation)\"")
                }
                let exclude: Create.Exclude
                if let text = f.present("exclude")?.stringValue {
                    guard text == "known" else { throw f.invalid("exclude", "must be \"known\" or a list of labels, not \"\(text)\"") }
                    exclude = .known
                } else {
                    exclude = .labels(try f.strings("exclude"))
                }
                let attachment = try f.string("attachment")
                if let attachment, !["platform", "cross-platform"].contains(attachment) {
                    throw f.invalid("attachment", "must be \"platform\" or \"cross-platform\", not \"\(attachment)\"")
                }
                let residentKey = try f.string("residentKey") ?? "required"
                guard ["required", "preferred", "discouraged"].contains(residentKey) else {
                    throw f.invalid("residentKey", "must be required, preferred or discouraged, not \"\(residentKey)\"")
                }
                let attestation = try f.string("attestation") ?? "none"
                guard ["none", "indirect", "direct", "enterprise"].contains(attestation) else {
                    throw f.invalid("attestation", "must be none, indirect, direct or enterprise, not \"\(attestation)\"")
                }
                let use = try f.string("use")
                if use != nil, mediation == "conditional" {
                    throw f.invalid("use", "is a choice in the browser's sheet, which a conditional create does not show")
                }
                return .create(Create(conditional: mediation == "conditional", label: try f.string("as"), exclude: exclude, user: try f.string("user"),
                                      userID: try f.string("userId"), userVerification: try f.string("userVerification"), attachment: attachment,
                                      residentKey: residentKey, attestation: attestation, use: use))
            case "get":
                return .get(allow: try f.strings("allow"), use: try f.string("use"))
            case "setting" where f.present("on") != nil:
                var probe = Device(name: "scenario")
                var settings: [(String, JSONValue)] = []
                for (key, value) in f.members where Device.settingNames.contains(key) {
                    try probe.apply(key, value, at: f.path)
                    settings.append((key, value))
                }
                return .setting(settings)
            case "setting":
                var probe = Profile(name: "scenario")
                var settings: [(String, JSONValue)] = []
                for (key, value) in f.members where Profile.settingNames.contains(key) {
                    try probe.apply(key, value, at: f.path)
                    settings.append((key, value))
                }
                return .setting(settings)
            case "signal":
                let text = try f.string("kind") ?? "unknown"
                guard let kind = Signal.Kind(rawValue: text) else { throw f.invalid("kind", "must be unknown, accepted or details, not \"\(text)\"") }
                return .signal(Signal(kind: kind, credential: try f.string("credential"), accepted: try f.strings("accepted"), name: try f.string("name"),
                                      displayName: try f.string("displayName"), userID: try f.string("userId")))
            case "removePasskey":
                return .removePasskey(label: try f.string("credential"))
            case "renamePasskey":
                let name = try f.string("name"), displayName = try f.string("displayName")
                guard name != nil || displayName != nil else { throw f.invalid("name", "or displayName is required") }
                if name?.isEmpty == true { throw f.invalid("name", "must not be empty") }
                return .renamePasskey(label: try f.string("credential"), name: name, displayName: displayName)
            case "user":
                var decisions: [UserDecision] = []
                for (i, text) in try f.strings("decisions").enumerated() {
                    guard let decision = UserDecision(text) else {
                        throw .invalidField("\(f.path).decisions[\(i)] '\(text)' is not accept, cancel, timeout, pick:ID[@ACCOUNT] or use:NAME.")
                    }
                    decisions.append(decision)
                }
                return .user(decisions)
            case "move":
                return .move(to: try f.string("to") ?? "", keepSource: try f.bool("keepSource") ?? false)
            default:
                return .rp(note: try f.string("note"))
            }
        }
    }

    /// Where a step acts when the scenario has accounts and devices.
    public enum Target: Sendable, Equatable {
        /// The scenario's only account, or the first declared.
        case main
        case account(String)
        /// A ceremony or device setting `on` a device, as its platform routes it.
        case device(String)
    }
}
