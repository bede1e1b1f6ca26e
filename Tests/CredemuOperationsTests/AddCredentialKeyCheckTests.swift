import CredemuEngine
import CredemuTestSupport
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// Issue 31: WebDriver's Add Credential (WebAuthn L3 §11.5) imports its private key through Signing's check; a key a
/// library would refuse is WebDriver's "invalid argument" naming privateKey, and nothing is stored.
final class AddCredentialKeyCheckTests: XCTestCase {
    func addCredential(_ pkcs8: [UInt8]) throws -> (OperationError?, Int) {
        let (vault, _d) = try makeTestVault()
        _ = _d
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        let id = try ops.addVirtualAuthenticator(try JSONValue.parse(#"{"protocol":"ctap2","transport":"usb"}"#))
        let parameters = JSONValue.object([("credentialId", "AQID"), ("isResidentCredential", false), ("rpId", "example.com"),
                                           ("privateKey", .string(Base64URL.encode(pkcs8))), ("signCount", 0)])
        var refusal: OperationError?
        do { try ops.addVirtualCredential(id, parameters) } catch { refusal = error }
        return (refusal, try ops.virtualCredentials(id).count)
    }

    func assertRefused(_ pkcs8: [UInt8], _ fragment: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (refusal, stored) = try addCredential(pkcs8)
        XCTAssertEqual(refusal?.name, .invalidArgument, "\(String(describing: refusal))", file: file, line: line)
        XCTAssertTrue(refusal.map { "\($0)".contains("privateKey") && "\($0)".contains(fragment) } == true,
                      "\(String(describing: refusal))", file: file, line: line)
        XCTAssertEqual(stored, 0, "nothing stored", file: file, line: line)
    }

    func testAddCredentialRefusesAP256KeyWhosePointIsAnotherKeys() throws {
        try assertRefused(try HostileKeys.p256WithAnotherKeysPoint(), "not its scalar")
    }

    func testAddCredentialRefusesAnRSAKeyWithExponentZeroOrEven() throws {
        let rsa = try SigningKeys.generate(.rs256).pkcs8
        for e: [UInt8] in [[0], [0x01, 0x00, 0x00]] {
            try assertRefused(try HostileKeys.rsa(rsa, replacing: [2: e]), "exponent")
        }
        XCTAssertNil(try addCredential(rsa).0, "the real key is taken")
    }
}
