import CredemuTestSupport
import Foundation
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// FIDO AppID (WebAuthn L3 §10.1.1, §10.1.2) on a security key: a U2F-era credential, stored under its AppID URL
/// (as a `vault import` or the WebDriver add-credential path stores one), is asserted with the AppID's hash; Chromium's
/// checks of the AppID (webauth_request_security_checker.cc `ValidateAppIdExtension`) and its outputs.
final class AppIDTests: XCTestCase {
    let appID = "https://example.com/u2f/app-id.json"

    /// A key holding one non-discoverable ES256 credential registered by the legacy U2F API under `appID`.
    func keyWithU2FCredential() throws -> (ProviderScenario, [UInt8], any SigningKey) {
        let key = try ProviderScenario(pack: "security-key")
        let signing = try SigningKeys.generate(.es256)
        let id = SecureRandom.bytes(32)
        let record = PasskeyRecord(credentialID: id, rpID: appID, userHandle: [], userName: "", displayName: "", algorithm: .es256,
                                   publicKey: signing.publicKey,
                                   settings: PasskeySettings(backupEligible: false, backupState: false, counter: .increment, discoverable: false),
                                   createdAt: key.clock.now())
        try key.vault.scoped(to: "user").insertPasskey(record, privateKey: signing.pkcs8)
        return (key, id, signing)
    }

    func get(_ key: ProviderScenario, allow: [[UInt8]], appid: String?, origin: String? = nil) throws -> AuthenticationResponse {
        let extensions: JSONValue? = appid.map { .object([("appid", .string($0))]) }
        return try key.engine().get(try RequestOptions(json: requestOptionsJSON(rpID: "example.com", allow: allow, extensions: extensions)),
                                    caller: try Caller(origin: origin ?? key.origin))
    }

    func testAU2FCredentialIsAssertedWithTheAppIDsHashAndAppIDTrue() throws {
        let (key, id, signing) = try keyWithU2FCredential()
        let response = try get(key, allow: [id], appid: appID)
        XCTAssertEqual(JSONValue.object(response.clientExtensionResults), .object([("appid", true)]))
        let data = try AuthenticatorData(bytes: response.authenticatorData)
        XCTAssertEqual(data.rpIDHash, Digest.sha256(Array(appID.utf8)), "§10.1.1: the AppID's hash, not the RP ID's")
        XCTAssertEqual(data.signCount, 1)
        let signed = response.authenticatorData + Digest.sha256(response.clientDataJSON)
        XCTAssertTrue(signing.publicKey.verify(signature: response.signature, message: signed))
    }

    func testWithoutTheAppIDTheU2FCredentialIsNotFound() throws {
        let (key, id, _) = try keyWithU2FCredential()
        let failure = key.failure { try self.get(key, allow: [id], appid: nil) }
        XCTAssertEqual(failure?.reason, .noCredential)
    }

    func testACredentialUnderTheRPIDWinsAndAppIDIsFalse() throws {
        let (key, _, _) = try keyWithU2FCredential()
        let made = try key.modalCreate()
        let response = try get(key, allow: [made.credentialID], appid: appID)
        XCTAssertEqual(JSONValue.object(response.clientExtensionResults), .object([("appid", false)]))
        XCTAssertEqual(try AuthenticatorData(bytes: response.authenticatorData).rpIDHash, Digest.sha256(Array("example.com".utf8)))
    }

    func testAnAppIDOfAnotherSiteOrNotHTTPSIsASecurityError() throws {
        let (key, id, _) = try keyWithU2FCredential()
        for bad in ["https://evil.example.org/app-id.json", "http://example.com/app-id.json", "not a url"] {
            let failure = key.failure { try self.get(key, allow: [id], appid: bad) }
            XCTAssertEqual(failure?.error.name, .securityError, bad)
            XCTAssertEqual(failure?.error.message, "This is an invalid domain.", bad)
        }
        // The registrable domain decides: another subdomain's AppID is the site's, accepted (and holds no credential here).
        XCTAssertEqual(key.failure { try self.get(key, allow: [id], appid: "https://login.example.com/app-id.json") }?.reason, .noCredential)
    }

    func testAnEmptyAppIDIsTheCallersOrigin() throws {
        let key = try ProviderScenario(pack: "security-key")
        let response = try get(key, allow: [SecureRandom.bytes(16)] + [try key.modalCreate().credentialID], appid: "")
        XCTAssertEqual(JSONValue.object(response.clientExtensionResults), .object([("appid", false)]))
    }

    func testAppIDAtCreationIsNotSupported() throws {
        let key = try ProviderScenario(pack: "security-key")
        let failure = key.failure { try key.modalCreate(extensions: .object([("appid", .string(self.appID))])) }
        XCTAssertEqual(failure?.error.name, .notSupportedError)
        XCTAssertEqual(failure?.reason, .invalidExtensionInput)
    }

    func testAppIDExcludeExcludesTheU2FCredential() throws {
        let (key, id, _) = try keyWithU2FCredential()
        let options = try CreationOptions(json: creationOptionsJSON(exclude: [id], extensions: .object([("appidExclude", .string(appID))])))
        let failure = key.failure { try key.engine().create(options, caller: try Caller(origin: key.origin)) }
        XCTAssertEqual(failure?.error.name, .invalidStateError)
        XCTAssertEqual(failure?.reason, .excludedCredential)
        // Without appidExclude the U2F credential is another RP ID's: the create goes ahead, with no appidExclude output.
        let made = try key.engine().create(try CreationOptions(json: creationOptionsJSON(exclude: [id])), caller: try Caller(origin: key.origin))
        XCTAssertNil(JSONValue.object(made.clientExtensionResults)["appidExclude"])
        let bad = try CreationOptions(json: creationOptionsJSON(extensions: .object([("appidExclude", "neither")])))
        XCTAssertEqual(key.failure { try key.engine().create(bad, caller: try Caller(origin: key.origin)) }?.error.name, .syntaxError)
    }

    func testGPMEchoesAppIDFalseAndBitwardenIgnoresIt() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let made = try gpm.modalCreate()
        let response = try get(gpm, allow: [made.credentialID], appid: appID)
        XCTAssertEqual(JSONValue.object(response.clientExtensionResults), .object([("appid", false)]))
        let bitwarden = try ProviderScenario(pack: "bitwarden")
        let other = try bitwarden.modalCreate()
        XCTAssertEqual(try get(bitwarden, allow: [other.credentialID], appid: appID).clientExtensionResults.count, 0)
    }
}
