import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// CTAP 2.1 §12.2 credBlob on a security key: up to 32 bytes stored sealed with the credential at creation
/// (`{credBlob: true}`, false beyond), read back by `getCredBlob` (base64url in the JSON form) and in the
/// authenticator data; Chromium echoes `{credBlob: false}` for an authenticator without it.
final class CredBlobTests: XCTestCase {
    let blob = Array("thirty-two bytes at the very most".utf8.prefix(32))

    func testABlobIsStoredAndReadBackByGetCredBlob() throws {
        let key = try ProviderScenario(pack: "security-key")
        let made = try key.modalCreate(extensions: .object([("credBlob", .string(Base64URL.encode(blob)))]))
        XCTAssertEqual(JSONValue.object(made.clientExtensionResults)["credBlob"], true)
        XCTAssertEqual(try AuthenticatorData(bytes: made.authenticatorData).extensions?["credBlob"], .bool(true))
        let got = try key.signIn(allow: [made.credentialID], extensions: .object([("getCredBlob", true)]))
        XCTAssertEqual(JSONValue.object(got.clientExtensionResults), .object([("getCredBlob", .string(Base64URL.encode(blob)))]))
        XCTAssertEqual(try AuthenticatorData(bytes: got.authenticatorData).extensions?["credBlob"], .bytes(blob))
        XCTAssertEqual(try key.vault.scoped(to: "user").credentialExtensions(made.credentialID).credBlob, blob)
    }

    func testABlobOverThirtyTwoBytesIsNotStoredAndNoneReadsEmpty() throws {
        let key = try ProviderScenario(pack: "security-key")
        let made = try key.modalCreate(extensions: .object([("credBlob", .string(Base64URL.encode(blob + [0])))]))
        XCTAssertEqual(JSONValue.object(made.clientExtensionResults)["credBlob"], false)
        let got = try key.signIn(allow: [made.credentialID], extensions: .object([("getCredBlob", true)]))
        XCTAssertEqual(JSONValue.object(got.clientExtensionResults)["getCredBlob"], "", "CTAP 2.1 §12.2: an empty byte string")
    }

    func testGPMEchoesCredBlobFalseAndAnEmptyGetCredBlob() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let made = try gpm.modalCreate(extensions: .object([("credBlob", .string(Base64URL.encode(blob)))]))
        XCTAssertEqual(JSONValue.object(made.clientExtensionResults)["credBlob"], false)
        XCTAssertNil(try AuthenticatorData(bytes: made.authenticatorData).extensions)
        let got = try gpm.signIn(allow: [made.credentialID], extensions: .object([("getCredBlob", true)]))
        XCTAssertEqual(JSONValue.object(got.clientExtensionResults), .object([("getCredBlob", "")]), "Chromium's empty buffer")
        XCTAssertNil(try AuthenticatorData(bytes: got.authenticatorData).extensions)
        let bitwarden = try ProviderScenario(pack: "bitwarden")
        let other = try bitwarden.modalCreate(extensions: .object([("credBlob", "AQ")]))
        XCTAssertTrue(other.clientExtensionResults.isEmpty)
        XCTAssertTrue(try bitwarden.signIn(allow: [other.credentialID], extensions: .object([("getCredBlob", true)])).clientExtensionResults.isEmpty)
    }

    func testTheBlobIsSealedToItsCredential() throws {
        let key = try ProviderScenario(pack: "security-key")
        let a = try key.modalCreate(user: "a@example.com", extensions: .object([("credBlob", .string(Base64URL.encode(blob)))]))
        let b = try key.modalCreate(user: "b@example.com", extensions: .object([("credBlob", .string(Base64URL.encode(Array("other".utf8))))]))
        let vault = key.vault.scoped(to: "user")
        XCTAssertEqual(try vault.credentialExtensions(b.credentialID).credBlob, Array("other".utf8))
        XCTAssertEqual(try vault.credentialExtensions(a.credentialID).credBlob, blob)
        XCTAssertThrowsError(try vault.setCredentialExtensions(a.credentialID, credProtect: nil, credBlob: blob + [1])) { error in
            XCTAssertEqual((error as? VaultError)?.code, .invalidInput)
        }
    }
}
