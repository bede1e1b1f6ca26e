import CredemuTestSupport
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Each forgery, made from a response the engine really made, fails an RP-side verifier with every check on, and
/// on exactly its own fault: everything else (signatures included) still verifies.
final class ForgeryTests: XCTestCase {
    var vault: Vault!
    var directory: TemporaryDirectory!
    var engine: Engine!
    let origin = "https://login.example.com"
    let challenge = Array(repeating: UInt8(3), count: 32)

    override func setUpWithError() throws {
        (vault, directory) = try makeTestVault()
        engine = Engine(vault: vault, clock: VirtualClock())
    }

    func register(_ attestation: AttestationCapability, user: String = "alice") throws -> (RegistrationResponse, any SigningKey) {
        let options = try CreationOptions(json: creationOptionsJSON(userID: Array(user.utf8), userName: user, challenge: challenge,
                                                                    algorithms: [-7], attestation: "direct"))
        let response = try engine.create(options, caller: try Caller(origin: origin), settings: PasskeySettings(attestation: attestation))
        return (response, try SigningKeys.importPKCS8(try vault.privateKey(for: response.credentialID)))
    }

    func checkRegistration(_ json: JSONValue) throws {
        let response = try RegistrationResponse(answer: json)
        _ = try RPCheck.registration(response, challenge: challenge, origin: origin, rpID: "example.com",
                                     requireUserVerification: true, offeredAlgorithms: [.es256])
    }

    /// The verifier's one complaint about `json` (nil: it verifies).
    func registrationFault(_ json: JSONValue) -> String? {
        do { try checkRegistration(json); return nil } catch { return "\(error)" }
    }

    /// Whether the forged response's signature (an assertion's, or a packed statement's) verifies over its own bytes,
    /// under the credential key the response names (the key given where its authData carries none that parses).
    func signed(_ json: JSONValue, _ member: String, key: any SigningKey) -> Bool {
        func bytes(_ name: String) -> [UInt8] { Base64URL.decode(json["response"]?[name]?.stringValue ?? "") ?? [] }
        var authData = bytes("authenticatorData"), sig = bytes("signature")
        if member == "attestationObject" {
            guard let object = try? CBOR.decode(bytes("attestationObject"), options: .lenient) else { return false }
            authData = object["authData"]?.bytesValue ?? []
            sig = object["attStmt"]?["sig"]?.bytesValue ?? []
        }
        let publicKey = (try? AuthenticatorData(bytes: authData))?.attestedCredentialData?.publicKey ?? key.publicKey
        return publicKey.verify(signature: sig, message: authData + Digest.sha256(bytes("clientDataJSON")))
    }

    func testEveryRegistrationForgeryFailsAVerifierOnItsOwnFaultOnlyAndStaysSignedOtherwise() throws {
        let expected: [Forgery: String] = [
            .otherChallenge: "challenge", .otherOrigin: "origin", .crossOrigin: "cross origin", .swappedType: "type",
            .otherRPIDHash: "rpIdHash", .badAttestation: "packed self-attestation signature", .unofferedAlgorithm: "algorithm not offered",
            .noUserPresence: "UP not set", .noUserVerification: "UV not set", .backedUpNotEligible: "BS without BE",
            .noAttestedCredentialData: "attested credential data", .emptyExtensionData: "authenticator data",
            .trailingBytes: "authenticator data", .clientDataNotJSON: "client data not JSON",
        ]
        XCTAssertEqual(Set(expected.keys), Set(Forgery.allCases.filter { $0.ceremonies.contains(.registration) }))
        // A packed self attestation signs authData and client data: a forgery not signed again would fail its signature too.
        for attestation in [AttestationCapability.none, .packed] {
            let (response, key) = try register(attestation)
            XCTAssertNil(registrationFault(response.json), "the real response verifies")
            for (forgery, fault) in expected {
                let forged = try forgery.apply(to: response.json, ForgeryContext(key: key, offeredAlgorithms: [.es256]))
                XCTAssertEqual(registrationFault(forged), fault, "\(forgery) from fmt \(attestation)")
                if attestation == .packed && forgery != .badAttestation {
                    XCTAssertTrue(signed(forged, "attestationObject", key: key), "\(forgery): the self attestation is signed again")
                }
            }
        }
    }

    func testEveryAssertionForgeryFailsAVerifierOnItsOwnFaultOnly() throws {
        let (registration, key) = try register(.none)
        let other = try register(.none, user: "bob").0
        let options = try RequestOptions(json: requestOptionsJSON(allow: [registration.credentialID], userVerification: "required"))
        let assertion = try engine.get(options, caller: try Caller(origin: origin), pick: Pick(registration.credentialID)).json
        func fault(_ json: JSONValue, stored: UInt32 = 5) -> String? {
            do {
                _ = try RPCheck.assertion(try AuthenticationResponse(answer: json), publicKey: key.publicKey, challenge: Array(repeating: 2, count: 32),
                                          origin: origin, rpID: "example.com", requireUserVerification: true,
                                          userHandle: Array("alice".utf8), storedSignCount: stored)
                return nil
            } catch { return "\(error)" }
        }
        XCTAssertNil(fault(assertion, stored: 0), "the real assertion verifies")
        let expected: [Forgery: String] = [
            .otherChallenge: "challenge", .otherOrigin: "origin", .crossOrigin: "cross origin", .swappedType: "type",
            .otherRPIDHash: "rpIdHash", .badSignature: "signature", .noUserPresence: "UP not set", .noUserVerification: "UV not set",
            .backedUpNotEligible: "BS without BE", .emptyExtensionData: "authenticator data", .trailingBytes: "authenticator data",
            .clientDataNotJSON: "client data not JSON", .otherUsersCredential: "user handle",
        ]
        XCTAssertEqual(Set(expected.keys).union([.replayed, .counterRegression]), Set(Forgery.allCases.filter { $0.ceremonies.contains(.assertion) }))
        let context = ForgeryContext(key: key, userHandle: Array("bob".utf8))
        for (forgery, wanted) in expected {
            let forged = try forgery.apply(to: assertion, context)
            XCTAssertEqual(fault(forged, stored: 0), wanted, "\(forgery)")
            XCTAssertEqual(signed(forged, "signature", key: key), forgery != .badSignature, "\(forgery): signed again, unless the signature is the fault")
        }
        // The counter: signed at 3 where the server stored 5, and nothing else wrong (stored 2: it verifies).
        let regressed = try Forgery.counterRegression.apply(to: assertion, ForgeryContext(key: key, signCount: 3))
        XCTAssertEqual(fault(regressed, stored: 5), "counter")
        XCTAssertNil(fault(regressed, stored: 2))
        // A replay is the response itself: its fault is being sent again.
        XCTAssertEqual(try Forgery.replayed.apply(to: assertion, context), assertion)
        XCTAssertNotEqual(other.credentialID, registration.credentialID)
    }

    func testAForgeryRefusesWhatItCannotMakeWithANamedError() throws {
        let (response, _) = try register(.packed)
        XCTAssertThrowsError(try Forgery.otherChallenge.apply(to: response.json)) { XCTAssertEqual(($0 as? ForgeryError)?.code, .cannotResign) }
        XCTAssertThrowsError(try Forgery.badSignature.apply(to: response.json)) { XCTAssertEqual(($0 as? ForgeryError)?.code, .notForThisCeremony) }
        XCTAssertThrowsError(try Forgery.unofferedAlgorithm.apply(to: response.json, ForgeryContext(key: nil))) {
            XCTAssertEqual(($0 as? ForgeryError)?.code, .noUnofferedAlgorithm)
        }
        XCTAssertThrowsError(try Forgery.otherOrigin.apply(to: .object([("response", .object([]))]))) { XCTAssertEqual(($0 as? ForgeryError)?.code, .malformedResponse) }
        XCTAssertThrowsError(try Forgery.named("nope")) { XCTAssertEqual(($0 as? ForgeryError)?.name, "UnknownForgery") }
    }
}
