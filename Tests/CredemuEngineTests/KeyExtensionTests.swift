import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// hmacCreateSecret (CTAP 2.1 §12.5) and minPinLength (§12.4) on a security key, and a key's §11.1 `extensions`
/// option and protocol deciding which extensions it answers (Chromium still echoes false outputs for the others).
final class KeyExtensionTests: XCTestCase {
    func key(_ configure: (inout AuthenticatorOptions) -> Void = { _ in }) throws -> ProviderScenario {
        var options = AuthenticatorOptions()
        configure(&options)
        return try ProviderScenario(pack: "security-key") { $0.authenticator = options }
    }

    func testHMACCreateSecretIsTrueWithHMACSecretInTheAuthenticatorData() throws {
        let made = try key().modalCreate(extensions: .object([("hmacCreateSecret", true)]))
        XCTAssertEqual(JSONValue.object(made.clientExtensionResults), .object([("hmacCreateSecret", true)]))
        XCTAssertEqual(try AuthenticatorData(bytes: made.authenticatorData).extensions?["hmac-secret"], .bool(true))
        XCTAssertTrue(try AuthenticatorData(bytes: made.authenticatorData).flags.contains(.extensionData))
    }

    func testGPMReportsHMACCreateSecretWithoutTouchingItsAuthenticatorData() throws {
        let made = try ProviderScenario(pack: "gpm").modalCreate(extensions: .object([("hmacCreateSecret", true)]))
        XCTAssertEqual(JSONValue.object(made.clientExtensionResults), .object([("hmacCreateSecret", true)]))
        XCTAssertNil(try AuthenticatorData(bytes: made.authenticatorData).extensions)
    }

    func testAKeyWithoutAnExtensionInItsListAnswersFalse() throws {
        let limited = try key { $0.extensions = ["credBlob"] }
        let made = try limited.modalCreate(extensions: .object([("hmacCreateSecret", true), ("credBlob", "AQ"), ("largeBlob", .object([("support", "preferred")]))]))
        XCTAssertEqual(JSONValue.object(made.clientExtensionResults),
                       .object([("credBlob", true), ("hmacCreateSecret", false), ("largeBlob", .object([("supported", false)]))]))
    }

    func testAU2FKeyAnswersNoCTAP2Extension() throws {
        let u2f = try key { $0.protocol = .u2f; $0.hasResidentKey = false }
        let json = creationOptionsJSON(algorithms: [-7], extensions: .object([("hmacCreateSecret", true), ("credBlob", "AQ"), ("minPinLength", true)]))
            .replacingOccurrences(of: "\"residentKey\":\"preferred\"", with: "\"residentKey\":\"discouraged\"")
        let made = try u2f.engine().create(try CreationOptions(json: json), caller: try Caller(origin: u2f.origin))
        XCTAssertEqual(JSONValue.object(made.clientExtensionResults), .object([("credBlob", false), ("hmacCreateSecret", false)]))
        XCTAssertNil(try AuthenticatorData(bytes: made.authenticatorData).extensions)
    }

    func testMinPinLengthGoesToTheRPIDsTheKeyIsConfiguredFor() throws {
        let everyone = try key { $0.minPinLength = 6 }
        let made = try everyone.modalCreate(extensions: .object([("minPinLength", true)]))
        XCTAssertTrue(made.clientExtensionResults.isEmpty, "no client output in Chromium")
        XCTAssertEqual(try AuthenticatorData(bytes: made.authenticatorData).extensions?["minPinLength"], .unsigned(6))
        let listed = try key { $0.minPinLengthRPIDs = ["other.example"] }
        XCTAssertNil(try AuthenticatorData(bytes: listed.modalCreate(extensions: .object([("minPinLength", true)])).authenticatorData).extensions?["minPinLength"])
    }

    func testTheMinPinLengthOptionsAreRead() throws {
        var options = AuthenticatorOptions()
        try options.apply(.object([("minPinLength", 8), ("minPinLengthRPIDs", .array(["example.com"]))]), at: "authenticator")
        XCTAssertEqual(options.minPinLength, 8)
        XCTAssertEqual(options.minPinLengthRPIDs, ["example.com"])
        XCTAssertThrowsError(try options.apply(.object([("minPinLength", 3)]), at: "authenticator"))
        XCTAssertThrowsError(try options.apply(.object([("minPinLengthRPIDs", .array(["not a domain"]))]), at: "authenticator"))
    }
}
