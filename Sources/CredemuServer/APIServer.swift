import CredemuEngine
import Foundation
import Vault
import WebAuthn

/// The JSON API over one vault: routing, bearer-token and CORS checks, and an engine per profile and
/// platform. Every route is in `Resources/openapi.json`.
public final class APIServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var token: String?
        /// Origins allowed to call the API from a page (CORS); "*" allows any.
        public var allowedOrigins: Set<String>
        public var maxBodyBytes: Int

        public init(token: String? = nil, allowedOrigins: Set<String> = [], maxBodyBytes: Int = 256 * 1024) {
            self.token = token
            self.allowedOrigins = allowedOrigins
            self.maxBodyBytes = maxBodyBytes
        }
    }

    let vault: Vault
    let registry: PolicyRegistry
    let clock: AdjustableClock
    let configuration: Configuration
    let holds = HoldBoard()
    private let engineLock = NSLock()
    private var engines: [String: Engine] = [:]
    /// Profiles as last read, valid while no other process has written to the vault (`PRAGMA data_version`).
    private var profiles: [String: Profile] = [:]
    private var profilesVersion: Int64 = -1

    public init(vault: Vault, registry: PolicyRegistry, configuration: Configuration) throws {
        self.vault = vault
        self.registry = registry
        self.configuration = configuration
        // The vault's clock carries over: a virtual time set from the CLI holds for the server too.
        clock = AdjustableClock(virtual: try vault.storedClockTime())
        if try vault.profileSettings(Vault.defaultProfile) == nil {
            try vault.saveProfile(Vault.defaultProfile, settings: Profile(name: Vault.defaultProfile).json, at: clock.now())
        }
    }

    /// Whether the request is a ceremony that an armed hold will make wait.
    public func mayBlock(_ request: HTTPRequest) -> Bool {
        let parts = request.segments
        guard request.method == "POST", parts.count == 4, parts[0] == "profiles", parts[2] == "credentials" else { return false }
        return holds.isArmed(profile: parts[1])
    }

    /// Answers one request. Never throws: every failure is a JSON error with its status.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let cors = corsHeaders(request)
        if request.method == "OPTIONS" {
            guard cors != nil else { return json(403, error("Forbidden", "This origin is not allowed; start the server with --allow-origin.")) }
            return HTTPResponse(status: 204, headers: cors! + [("Access-Control-Max-Age", "600")])
        }
        var response: HTTPResponse
        do {
            if request.bodyTooLarge {
                throw APIError(413, "PayloadTooLarge", "The request body exceeds \(configuration.maxBodyBytes) bytes.")
            }
            try authorize(request)
            response = try route(request)
        } catch let failure as APIError {
            response = HTTPResponse(status: failure.status, headers: failure.headers, body: Array(failure.body.serialized().utf8))
        } catch {
            response = json(500, self.error("InternalError", "\(error)"))
        }
        if !response.headers.contains(where: { $0.0 == "Content-Type" }) {
            response.headers.append(("Content-Type", "application/json"))
        }
        response.headers += cors ?? []
        return response
    }

    private func authorize(_ request: HTTPRequest) throws(APIError) {
        guard let token = configuration.token else { return }
        let open = request.method == "GET" && (request.path == "/shim.js" || request.path == "/health")
        if open { return }
        guard request.headers["authorization"] == "Bearer \(token)" else {
            throw APIError(status: 401, body: error("Unauthorized", "A valid 'Authorization: Bearer TOKEN' header is required."),
                           headers: [("WWW-Authenticate", "Bearer")])
        }
    }

    private func corsHeaders(_ request: HTTPRequest) -> [(String, String)]? {
        guard let origin = request.headers["origin"],
              configuration.allowedOrigins.contains(origin) || configuration.allowedOrigins.contains("*") else { return nil }
        var headers = [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                       ("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS"),
                       ("Access-Control-Allow-Headers", "Content-Type, Authorization")]
        if request.method == "OPTIONS" { headers.append(("Access-Control-Allow-Private-Network", "true")) }
        return headers
    }

    private func route(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let parts = request.segments
        let m = request.method
        switch (m, parts.count, parts.first) {
        case ("GET", 1, "health"): return json(200, health())
        case ("GET", 1, "openapi.json"): return resource("openapi.json", type: "application/json")
        case ("GET", 1, "shim.js"): return shim(request)
        case ("GET", 1, "providers"): return json(200, providers())
        case (_, 1, "clock"): return try clockRoute(request)
        case ("GET", 1, "holds"): return json(200, .object([("holds", .array(holds.all.map(\.json)))]))
        case ("POST", 3, "holds") where parts[2] == "release": return try releaseHold(parts[1], request)
        case (_, _, "profiles"): return try profileRoute(request, Array(parts.dropFirst()))
        default:
            if ["health", "openapi.json", "shim.js", "providers", "holds", "clock"].contains(parts.first ?? "") {
                throw APIError(405, "MethodNotAllowed", "\(m) is not allowed on \(request.path).")
            }
            throw .notFound("No route \(m) \(request.path); the API is described at /openapi.json.")
        }
    }

    private func profileRoute(_ request: HTTPRequest, _ parts: [String]) throws(APIError) -> HTTPResponse {
        let m = request.method
        if parts.isEmpty {
            switch m {
            case "GET": return json(200, try listProfiles())
            case "POST": return try createProfile(request)
            default: throw APIError(405, "MethodNotAllowed", "\(m) is not allowed on /profiles.")
            }
        }
        let name = parts[0]
        let rest = Array(parts.dropFirst())
        switch (m, rest.first, rest.count) {
        case ("GET", nil, 0): return json(200, try loadProfile(name).json)
        case ("PATCH", nil, 0): return try updateProfile(name, request)
        case ("DELETE", nil, 0): return try removeProfile(name)
        case ("POST", "credentials", 2) where rest[1] == "create": return try create(name, request)
        case ("POST", "credentials", 2) where rest[1] == "get": return try get(name, request)
        case ("POST", "signals", 2): return try signal(name, kind: rest[1], request)
        case ("GET", "capabilities", 1): return try capabilities(name, request)
        case ("GET", "passwords", 1): return try listPasswords(name)
        case ("POST", "passwords", 1): return try savePassword(name, request)
        case ("POST", "passwords", 2) where rest[1] == "use": return try usePassword(name, request)
        case ("POST", "autofill", 1): return try autofill(name, request)
        case ("GET", "passkeys", 1): return try listPasskeys(name)
        case ("GET", "passkeys", 2): return try showPasskey(name, rest[1])
        case ("DELETE", "passkeys", 2): return try removePasskey(name, rest[1])
        case ("GET", "events", 1): return try events(name, request)
        case ("GET", "findings", 1): return try findings(name)
        case (_, "user", 1): return try userRoute(name, request)
        case ("POST", "holds", 1): return try armHold(name, request)
        default:
            throw .notFound("No route \(m) \(request.path); the API is described at /openapi.json.")
        }
    }

    // MARK: Engines and profiles

    func loadProfile(_ name: String) throws(APIError) -> Profile {
        let version = try stored { () throws(VaultError) in try vault.dataVersion() }
        engineLock.lock()
        if version != profilesVersion {
            profiles = [:]
            profilesVersion = version
        }
        let cached = profiles[name]
        engineLock.unlock()
        if let cached { return cached }
        let settings = try stored { () throws(VaultError) in try vault.profileSettings(name) }
        guard let settings else { throw .notFound("No profile '\(name)'.") }
        let profile: Profile
        do {
            profile = try Profile(name: name, json: settings)
        } catch {
            throw APIError(500, "VaultError", "The settings of profile \(name) are unreadable: \(error.message)")
        }
        engineLock.lock()
        if version == profilesVersion { profiles[name] = profile }
        engineLock.unlock()
        return profile
    }

    /// The engine of a profile on a platform (its own, or another of the account's), kept between requests so
    /// parsed keys stay cached.
    func engine(_ name: String, platform: String? = nil) throws(APIError) -> Engine {
        var profile = try loadProfile(name)
        if let platform {
            guard let p = Platform(rawValue: platform) else {
                throw .badRequest("'\(platform)' is not a platform: \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            profile.platform = p
        }
        let key = "\(name)|\(profile.platform.rawValue)"
        engineLock.lock()
        defer { engineLock.unlock() }
        if let cached = engines[key], cached.profile == profile { return cached }
        let policy: any ProviderPolicy
        do {
            policy = try registry.policy(for: profile)
        } catch {
            throw APIError(422, "InvalidPolicyPack", error.message)
        }
        let engine = Engine(vault: vault.scoped(to: name), profile: profile, policy: policy, clock: clock)
        engines[key] = engine
        return engine
    }

    func forgetEngines(_ name: String) {
        engineLock.lock()
        engines = engines.filter { !$0.key.hasPrefix(name + "|") }
        profiles[name] = nil
        engineLock.unlock()
    }

    /// Runs a vault call, mapping its failure to a response.
    func stored<T>(_ body: () throws(VaultError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            switch error.code {
            case .notFound: throw .notFound(error.message)
            case .duplicate: throw APIError(409, "Conflict", error.message)
            case .invalidInput: throw .badRequest(error.message)
            default: throw APIError(500, "VaultError", error.message)
            }
        }
    }

    // MARK: Responses

    func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(value.serialized().utf8))
    }

    func error(_ name: String, _ message: String) -> JSONValue {
        .object([("error", .object([("name", .string(name)), ("message", .string(message))]))])
    }

    func resource(_ name: String, type: String) -> HTTPResponse {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil), let data = try? Data(contentsOf: url) else {
            return json(500, error("InternalError", "The resource \(name) is missing from this build."))
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", type)], body: Array(data))
    }
}
