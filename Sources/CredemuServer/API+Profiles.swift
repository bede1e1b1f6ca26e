import CredemuEngine
import Foundation
import Vault
import WebAuthn

extension APIServer {
    func listProfiles() throws(APIError) -> JSONValue {
        .object([("profiles", .array(try stored { () throws(VaultError) in try vault.allProfiles() }.map(\.settings)))])
    }

    func createProfile(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try Body(request)
        let name = try body.requiredString("name")
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw .badRequest("A profile name uses letters, digits, '-', '_' and '.'.")
        }
        if try stored({ () throws(VaultError) in try vault.profileSettings(name) }) != nil {
            throw APIError(409, "Conflict", "The profile '\(name)' exists already.")
        }
        var profile = Profile(name: name)
        let changed = try apply(body, to: &profile)
        try save(profile, outcome: "created", changed: changed)
        return json(201, profile.json)
    }

    func updateProfile(_ name: String, _ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        var profile = try loadProfile(name)
        let changed = try apply(try Body(request), to: &profile)
        try save(profile, outcome: "changed", changed: changed)
        return json(200, profile.json)
    }

    func removeProfile(_ name: String) throws(APIError) -> HTTPResponse {
        guard try stored({ () throws(VaultError) in try vault.removeProfile(name) }) else { throw .notFound("No profile '\(name)'.") }
        forgetEngines(name)
        return json(200, .object([("removed", .string(name))]))
    }

    /// Applies the body's settings; an unknown setting or a wrong value is a 400 naming it.
    private func apply(_ body: Body, to profile: inout Profile) throws(APIError) -> [(String, JSONValue)] {
        var changed: [(String, JSONValue)] = []
        for (key, value) in body.value.objectValue ?? [] where key != "name" {
            do {
                try profile.set(key, value)
            } catch {
                throw .badRequest(error.message)
            }
            changed.append((key, value))
        }
        return changed
    }

    private func save(_ profile: Profile, outcome: String, changed: [(String, JSONValue)]) throws(APIError) {
        do {
            _ = try registry.policy(for: profile)
        } catch {
            throw .badRequest(error.message)
        }
        let now = clock.now()
        try stored { () throws(VaultError) in
            try vault.saveProfile(profile.name, settings: profile.json, at: now)
            try vault.scoped(to: profile.name).appendEvent(kind: "setting", outcome: outcome, reason: "success", detail: .object(changed), at: now)
        }
        forgetEngines(profile.name)
    }
}
