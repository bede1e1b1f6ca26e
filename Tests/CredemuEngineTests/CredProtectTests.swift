import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// CTAP 2.1 §12.1 credProtect on a security key: Chromium's consistency checks and default levels
/// (authenticator_common_impl.cc `ProtectionPolicyToCredProtect`), the level in the authenticator data and kept per
/// credential, and enforced at assertion.
final class CredProtectTests: XCTestCase {
    func options(residentKey: String = "required", uv: String = "preferred", policy: String? = nil, enforce: Bool = false) throws -> CreationOptions {
        var ext: [(String, JSONValue)] = []
        if let policy { ext.append(("credentialProtectionPolicy", .string(policy))) }
        if enforce { ext.append(("enforceCredentialProtectionPolicy", true)) }
        let json = creationOptionsJSON(userVerification: uv, extensions: ext.isEmpty ? nil : .object(ext))
            .replacingOccurrences(of: "\"residentKey\":\"preferred\"", with: "\"residentKey\":\"\(residentKey)\"")
        return try CreationOptions(json: json)
    }

    func level(_ response: RegistrationResponse) throws -> UInt64? {
        guard case .unsigned(let n)? = try AuthenticatorData(bytes: response.authenticatorData).extensions?["credProtect"] else { return nil }
        return n
    }

    func testChromiumsDefaultLevelsFollowResidentKeyAndUserVerification() throws {
        let key = try ProviderScenario(pack: "security-key")
        let caller = try Caller(origin: key.origin)
        XCTAssertEqual(try level(key.engine().create(try options(residentKey: "required", uv: "preferred"), caller: caller)), 3)
        XCTAssertEqual(try level(key.engine().create(try options(residentKey: "required", uv: "required"), caller: caller)), 2)
        XCTAssertEqual(try level(key.engine().create(try options(residentKey: "preferred"), caller: caller)), 2)
        XCTAssertNil(try level(key.engine().create(try options(residentKey: "discouraged"), caller: caller)), "no request, no output")
        XCTAssertEqual(try level(key.engine().create(try options(residentKey: "discouraged", policy: "userVerificationOptionalWithCredentialIDList"), caller: caller)), 2)
        XCTAssertEqual(try level(key.engine().create(try options(policy: "userVerificationOptional"), caller: caller)), 1)
    }

    func testInconsistentPoliciesAreRefusedAsChromiumDoes() throws {
        let key = try ProviderScenario(pack: "security-key")
        for (opts, why) in [(try options(enforce: true), "enforced without a policy"),
                            (try options(policy: "userVerificationOptional", enforce: true), "enforcing the default"),
                            (try options(residentKey: "discouraged", policy: "userVerificationOptional"), "level 1 for a non-resident key"),
                            (try options(policy: "userVerificationRequired"), "level 3 without UV required")] {
            let failure = key.failure { try key.engine().create(opts, caller: try Caller(origin: key.origin)) }
            XCTAssertEqual(failure?.error.name, .notSupportedError, why)
            XCTAssertEqual(failure?.error.message, "Requested protection policy is inconsistent or incongruent with other requested parameters.", why)
        }
        let unknown = key.failure { try key.engine().create(try self.options(policy: "sometimes"), caller: try Caller(origin: key.origin)) }
        XCTAssertEqual(unknown?.error.message, "Required parameters missing in `options.publicKey`.")
        XCTAssertTrue(try key.passkeys().isEmpty, "nothing stored")
    }

    func testAnEnforcedPolicyFailsOnAKeyWithoutCredProtect() throws {
        let key = try ProviderScenario(pack: "security-key") { $0.authenticator = { var o = AuthenticatorOptions(); o.extensions = ["largeBlob"]; return o }() }
        let enforced = try options(uv: "required", policy: "userVerificationRequired", enforce: true)
        let failure = key.failure { try key.engine().create(enforced, caller: try Caller(origin: key.origin)) }
        XCTAssertEqual(failure?.reason, .credProtectUnsupported)
        XCTAssertEqual(failure?.error.name, .notAllowedError)
        // Not enforced, the key makes the credential without a level.
        XCTAssertNil(try level(key.engine().create(try options(uv: "required", policy: "userVerificationRequired"), caller: try Caller(origin: key.origin))))
    }

    func testLevelThreeNeedsUserVerificationAndLevelTwoIsNotDiscoverableWithoutIt() throws {
        let key = try ProviderScenario(pack: "security-key")
        let caller = try Caller(origin: key.origin)
        let three = try key.engine().create(try options(uv: "required", policy: "userVerificationRequired"), caller: caller)
        func get(_ allow: [[UInt8]], uv: String) throws -> AuthenticationResponse {
            try key.engine().get(try RequestOptions(json: requestOptionsJSON(allow: allow, userVerification: uv)), caller: caller)
        }
        XCTAssertEqual(key.failure { try get([three.credentialID], uv: "discouraged") }?.reason, .noCredential, "level 3 without UV")
        XCTAssertEqual(try get([three.credentialID], uv: "preferred").credentialID, three.credentialID, "the key verifies with its PIN")
        // Level 2: listed, it is usable without UV; unlisted, it is found only after UV.
        _ = try key.vault.scoped(to: "user").removePasskey(credentialID: three.credentialID)
        let two = try key.engine().create(try options(residentKey: "preferred"), caller: caller)
        XCTAssertEqual(try get([two.credentialID], uv: "discouraged").credentialID, two.credentialID)
        XCTAssertEqual(key.failure { try get([], uv: "discouraged") }?.reason, .noCredential)
        XCTAssertEqual(try get([], uv: "preferred").credentialID, two.credentialID)
        // A key without a PIN cannot verify: its level 2 credential is not discoverable at all.
        key.update { $0.authenticator = { var o = AuthenticatorOptions(); o.hasUserVerification = false; return o }() }
        XCTAssertEqual(key.failure { try get([], uv: "preferred") }?.reason, .noCredential)
    }

    func testGPMIgnoresAnUnenforcedPolicyAndRefusesAnEnforcedOne() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let made = try gpm.engine().create(try options(policy: "userVerificationOptionalWithCredentialIDList"), caller: try Caller(origin: gpm.origin))
        XCTAssertNil(try level(made))
        let failure = gpm.failure { try gpm.engine().create(try self.options(policy: "userVerificationOptionalWithCredentialIDList", enforce: true),
                                                            caller: try Caller(origin: gpm.origin)) }
        XCTAssertEqual(failure?.reason, .credProtectUnsupported)
    }
}
