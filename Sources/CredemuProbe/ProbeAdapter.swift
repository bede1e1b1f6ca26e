import Foundation
import WebAuthn

/// How to reach an RP server's registration and sign-in: the FIDO2 Conformance Test API by default
/// (`ProbeAdapter.conformance`), or a JSON adapter file for servers with their own shapes.
///
/// The file (every path relative to the probe's base URL):
/// ```json
/// {"signIn": {"path": "/login", "body": {"username": "{username}", "password": "secret"}},
///  "registration": {"begin": {"path": "/register/begin", "body": {"username": "{username}"}},
///                   "options": "publicKey",
///                   "finish": {"path": "/register/complete", "response": "credential", "body": {}}},
///  "authentication": {"begin": {"path": "/login/begin", "body": {"username": "{username}"}},
///                     "options": "publicKey",
///                     "finish": {"path": "/login/complete", "response": ""}}}
/// ```
/// `options` is the dotted path of the options in the begin step's answer ("" for the whole answer);
/// `response` the dotted path at which the credential goes into the finish step's body ("" for the body
/// itself). In body strings `{username}`, `{displayName}`, `{userVerification}` and `{attestation}` are
/// replaced. `signIn`, when present, is posted first for each account, and cookies are kept per account.
/// `signOut` (`{"path": "/logout", "method": "POST"}`, method `POST`, `GET` or `DELETE`) ends the session; with
/// `signIn` it turns on the stale-account-context checks (`Prober+StaleContext.swift`), which sign in as a
/// second account with the same `signIn` step and another generated user name. Every step's members are
/// checked: a misspelt one is refused by name rather than ignored.
public struct ProbeAdapter: Sendable {
    public struct Step: Sendable {
        public var path: String
        public var body: JSONValue
        /// The HTTP method: `POST` but for `signIn` and `signOut`, which may say `GET` or `DELETE` (with no body).
        public var method: String = "POST"
    }

    public struct Ceremony: Sendable {
        public var begin: Step
        public var optionsPath: String
        public var finish: Step
        public var responsePath: String
    }

    public var name: String
    public var signIn: Step?
    /// Ends the session the cookies carry; the stale-context checks need it (and `signIn`).
    public var signOut: Step?
    public var registration: Ceremony
    public var authentication: Ceremony

    /// The FIDO2 Conformance Test API (fido-alliance conformance-test-tools-resources,
    /// docs/FIDO2/Server/Conformance-Test-API.md): `ServerPublicKeyCredentialCreationOptionsRequest` and
    /// `ServerPublicKeyCredentialGetOptionsRequest` in, options with `status` and `errorMessage` out.
    public static let conformance = ProbeAdapter(
        name: "FIDO2 Conformance Test API",
        signIn: nil,
        registration: Ceremony(
            begin: Step(path: "/attestation/options", body: .object([
                ("username", "{username}"), ("displayName", "{displayName}"),
                ("authenticatorSelection", .object([("residentKey", "required"), ("requireResidentKey", true),
                                                    ("userVerification", "{userVerification}")])),
                ("attestation", "{attestation}"),
            ])),
            optionsPath: "", finish: Step(path: "/attestation/result", body: .object([])), responsePath: ""),
        authentication: Ceremony(
            begin: Step(path: "/assertion/options", body: .object([("username", "{username}"), ("userVerification", "{userVerification}")])),
            optionsPath: "", finish: Step(path: "/assertion/result", body: .object([])), responsePath: ""))

    public static func load(path: String) throws(ProbeError) -> ProbeAdapter {
        guard let data = FileManager.default.contents(atPath: path) else { throw ProbeError(.badAdapter, "Cannot read the adapter file \(path).") }
        let json: JSONValue
        do {
            json = try JSONValue.parse(Array(data))
        } catch {
            throw ProbeError(.badAdapter, "The adapter file \(path) is not JSON: \(error.description).")
        }
        return try ProbeAdapter(json: json, name: path)
    }

    public init(json: JSONValue, name: String) throws(ProbeError) {
        guard json.objectValue != nil else { throw ProbeError(.badAdapter, "\(name): the adapter must be a JSON object.") }
        for (key, _) in json.objectValue! where !["signIn", "signOut", "registration", "authentication"].contains(key) {
            throw ProbeError(.badAdapter, "\(name): unknown member '\(ProbeError.quote(key, limit: 40))' (signIn, signOut, registration, authentication).")
        }
        self.name = name
        signIn = try json["signIn"].map { (v) throws(ProbeError) in try ProbeAdapter.step(v, "signIn", name, methods: ProbeAdapter.sessionMethods) }
        signOut = try json["signOut"].map { (v) throws(ProbeError) in try ProbeAdapter.step(v, "signOut", name, methods: ProbeAdapter.sessionMethods) }
        if signOut != nil && signIn == nil {
            throw ProbeError(.badAdapter, "\(name): 'signOut' needs a 'signIn' step: there is no session to end without one.")
        }
        registration = try ProbeAdapter.ceremony(json["registration"], "registration", name)
        authentication = try ProbeAdapter.ceremony(json["authentication"], "authentication", name)
    }

    init(name: String, signIn: Step?, signOut: Step? = nil, registration: Ceremony, authentication: Ceremony) {
        self.name = name
        self.signIn = signIn
        self.signOut = signOut
        self.registration = registration
        self.authentication = authentication
    }

    private static func ceremony(_ value: JSONValue?, _ at: String, _ file: String) throws(ProbeError) -> Ceremony {
        guard let value, let members = value.objectValue else { throw ProbeError(.badAdapter, "\(file): '\(at)' must be an object with begin, options, finish.") }
        for (key, _) in members where !["begin", "options", "finish"].contains(key) {
            throw ProbeError(.badAdapter, "\(file): unknown member '\(at).\(ProbeError.quote(key, limit: 40))' (begin, options, finish).")
        }
        guard let begin = value["begin"], let finish = value["finish"] else { throw ProbeError(.badAdapter, "\(file): '\(at)' needs begin and finish.") }
        let options = value["options"] ?? .string("")
        guard let optionsPath = options.stringValue else { throw ProbeError(.badAdapter, "\(file): '\(at).options' must be a dotted path string.") }
        let response = finish["response"] ?? .string("")
        guard let responsePath = response.stringValue else { throw ProbeError(.badAdapter, "\(file): '\(at).finish.response' must be a dotted path string.") }
        return Ceremony(begin: try step(begin, at + ".begin", file), optionsPath: optionsPath,
                        finish: try step(finish, at + ".finish", file, extra: ["response"]), responsePath: responsePath)
    }

    /// The methods a session step may use; a ceremony's steps post JSON.
    static let sessionMethods = ["POST", "GET", "DELETE"]

    /// One step, its members checked: `path`, `body`, `method` where `methods` has more than POST, and `extra`.
    private static func step(_ value: JSONValue, _ at: String, _ file: String, methods: [String] = ["POST"],
                             extra: [String] = []) throws(ProbeError) -> Step {
        guard let members = value.objectValue else { throw ProbeError(.badAdapter, "\(file): '\(at)' must be an object with a path.") }
        let known = ["path", "body"] + (methods.count > 1 ? ["method"] : []) + extra
        for (key, _) in members where !known.contains(key) {
            throw ProbeError(.badAdapter, "\(file): unknown member '\(at).\(ProbeError.quote(key, limit: 40))' (\(known.joined(separator: ", "))).")
        }
        guard let path = value["path"]?.stringValue, !path.isEmpty else { throw ProbeError(.badAdapter, "\(file): '\(at).path' must be a non-empty string.") }
        let body = value["body"] ?? .object([])
        guard body.objectValue != nil else { throw ProbeError(.badAdapter, "\(file): '\(at).body' must be an object.") }
        let method = value["method"] ?? .string("POST")
        guard let name = method.stringValue, methods.contains(name) else {
            throw ProbeError(.badAdapter, "\(file): '\(at).method' must be one of \(methods.joined(separator: ", ")).")
        }
        if name != "POST" && value["body"] != nil {
            throw ProbeError(.badAdapter, "\(file): '\(at)' is a \(name): it carries no body (drop 'body', or use POST).")
        }
        return Step(path: path, body: body, method: name)
    }

    // MARK: Filling and reading documents

    /// `template` with each `{name}` in its strings replaced.
    static func fill(_ template: JSONValue, _ values: [String: String]) -> JSONValue {
        switch template {
        case .string(var s):
            for (key, value) in values { s = s.replacingOccurrences(of: "{\(key)}", with: value) }
            return .string(s)
        case .array(let items): return .array(items.map { fill($0, values) })
        case .object(let members): return .object(members.map { ($0.0, fill($0.1, values)) })
        default: return template
        }
    }

    /// The value at a dotted path ("" is the document).
    static func read(_ document: JSONValue, at path: String) -> JSONValue? {
        var value: JSONValue? = document
        for part in path.split(separator: ".") { value = value?[String(part)] }
        return value
    }

    /// `document` with `value` put at a dotted path ("" replaces the document, keeping its other members).
    static func write(_ value: JSONValue, into document: JSONValue, at path: String) -> JSONValue {
        let parts = path.split(separator: ".").map(String.init)
        guard let first = parts.first else {
            guard case .object(let extra) = document, case .object(var members) = value else { return value }
            for (k, v) in extra where !members.contains(where: { $0.0 == k }) { members.append((k, v)) }
            return .object(members)
        }
        let inner = document[first] ?? .object([])
        return document.setting(first, write(value, into: inner, at: parts.dropFirst().joined(separator: ".")))
    }
}
