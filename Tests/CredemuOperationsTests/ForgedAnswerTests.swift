import CredemuEngine
import CredemuTestSupport
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// Forged answers a test arms (issue 35, item 3): `forge-next` on a target, once, and a WebDriver key's response
/// override bits, on every answer, each failing a real verifier (`RPCheck`) on its own fault.
final class ForgedAnswerTests: XCTestCase {
    let origin = "https://example.com"
    let challenge = Array(repeating: UInt8(2), count: 32)
    var directory: TemporaryDirectory!

    func makeOperations() throws -> Operations {
        let (vault, directory) = try makeTestVault()
        self.directory = directory
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        _ = try ops.createProfile("p1", settings: [("pack", "gpm")], allowPackPath: false)
        return ops
    }

    func creation(user: String = "user-1", name: String = "alice", uv: String = "preferred", algorithms: [Int] = [-7, -8, -257]) -> CeremonyRequest {
        CeremonyRequest(options: .text(creationOptionsJSON(userID: Array(user.utf8), userName: name, challenge: challenge, algorithms: algorithms,
                                                           userVerification: uv)), origin: origin)
    }

    func assertion(uv: String = "preferred") -> CeremonyRequest {
        CeremonyRequest(options: .text(requestOptionsJSON(challenge: challenge, userVerification: uv)), origin: origin)
    }

    func register(_ ops: Operations, _ target: CeremonyTarget, uv: String = "preferred") throws -> COSEKey {
        let answer = try ops.create(target, creation(uv: uv))
        let authData = try RPCheck.registration(try RegistrationResponse(answer: answer.response), challenge: challenge, origin: origin, rpID: "example.com")
        return try XCTUnwrap(authData.attestedCredentialData?.publicKey)
    }

    func verify(_ answer: Answer, _ key: COSEKey, uv: Bool = false, stored: UInt32 = 0) throws -> AuthenticatorData {
        try RPCheck.assertion(try AuthenticationResponse(answer: answer.response), publicKey: key, challenge: challenge, origin: origin,
                              rpID: "example.com", requireUserVerification: uv, storedSignCount: stored)
    }

    func failure(_ body: () throws -> Any) -> String? {
        do { _ = try body() } catch let error as RPCheck.Failure { return error.description } catch { return "\(error)" }
        return nil
    }

    func counter(_ ops: Operations, _ profile: String) throws -> Double? {
        try ops.listPasskeys(profile).first?["signCount"]?.numberValue
    }

    func testAForgedSignInFailsTheVerifierOnItsFaultOnceAndIsLoggedAsForged() throws {
        let ops = try makeOperations()
        let key = try register(ops, .profile("p1"))
        let state = try ops.forgeNext(.profile("p1"), "badSignature")
        XCTAssertEqual(state["forgery"], "badSignature")
        XCTAssertEqual(try ops.forgeryState(.profile("p1"))["forgery"], "badSignature", "GET shows what is pending")

        let forged = try ops.get(.profile("p1"), assertion())
        XCTAssertEqual(failure { try self.verify(forged, key) }, "signature", "refused for the signature alone")
        XCTAssertEqual(try ops.forgeryState(.profile("p1"))["forgery"], .null, "used once")
        XCTAssertNil(failure { try self.verify(try ops.get(.profile("p1"), self.assertion()), key) }, "the next answer is honest")

        let events = try ops.events("p1", kind: "get")
        let logged = try XCTUnwrap(events.first { $0["outcome"]?.stringValue == "forged" })
        XCTAssertEqual(logged["detail"]?["forgeries"]?.arrayValue?.first?["forgery"], "badSignature")
        XCTAssertEqual(logged["detail"]?["forgeries"]?.arrayValue?.first?["by"], "forgeNext")
        XCTAssertEqual(logged["detail"]?["credentialId"], forged.response["id"])
    }

    func testEachForgeryOfTheNextAnswerFailsTheVerifierOnItsOwnFault() throws {
        let ops = try makeOperations()
        let key = try register(ops, .profile("p1"))
        let expected: [(String, String)] = [("otherChallenge", "challenge"), ("otherOrigin", "origin"), ("crossOrigin", "cross origin"),
                                            ("swappedType", "type"), ("otherRPIDHash", "rpIdHash"), ("noUserPresence", "UP not set"),
                                            ("backedUpNotEligible", "BS without BE"), ("trailingBytes", "authenticator data"),
                                            ("emptyExtensionData", "authenticator data"), ("clientDataNotJSON", "client data not JSON")]
        for (name, fault) in expected {
            _ = try ops.forgeNext(.profile("p1"), name)
            let forged = try ops.get(.profile("p1"), assertion())
            XCTAssertEqual(failure { try self.verify(forged, key) }, fault, name)
        }
        _ = try ops.forgeNext(.profile("p1"), "noUserVerification")
        XCTAssertEqual(failure { try self.verify(try ops.get(.profile("p1"), self.assertion(uv: "required")), key, uv: true) }, "UV not set")
        // Registrations: the forged answer fails the registration check on its fault.
        for (name, fault) in [("unofferedAlgorithm", "algorithm not offered"), ("noAttestedCredentialData", "attested credential data"), ("otherOrigin", "origin")] {
            _ = try ops.forgeNext(.profile("p1"), name)
            let forged = try ops.create(.profile("p1"), creation(user: "user-\(name)", name: name, algorithms: [-7]))
            XCTAssertEqual(failure { try RPCheck.registration(try RegistrationResponse(answer: forged.response), challenge: self.challenge, origin: self.origin,
                                                              rpID: "example.com", offeredAlgorithms: [.es256]) }, fault, name)
        }
    }

    func testAForgeryForTheOtherCeremonyWaitsForTheNextOneItAppliesTo() throws {
        let ops = try makeOperations()
        _ = try ops.forgeNext(.profile("p1"), "badSignature")
        let key = try register(ops, .profile("p1"))
        XCTAssertEqual(try ops.forgeryState(.profile("p1"))["forgery"], "badSignature", "a registration leaves an assertion's forgery armed")
        XCTAssertEqual(failure { try self.verify(try ops.get(.profile("p1"), self.assertion()), key) }, "signature")
        _ = try ops.forgeNext(.profile("p1"), "badAttestation")
        _ = try ops.forgeNext(.profile("p1"), nil)
        XCTAssertEqual(try ops.forgeryState(.profile("p1"))["forgery"], .null, "null disarms")
    }

    func testTheVaultKeepsWhatTheProviderDidAndTheNextHonestSignInIsAccepted() throws {
        let ops = try makeOperations()
        _ = try ops.createProfile("key1", settings: [("pack", "security-key")], allowPackPath: false)
        let key = try register(ops, .profile("key1"))
        XCTAssertEqual(try counter(ops, "key1"), 0)
        let first = try verify(try ops.get(.profile("key1"), assertion()), key)
        _ = try ops.forgeNext(.profile("key1"), "badSignature")
        XCTAssertNotNil(failure { try self.verify(try ops.get(.profile("key1"), self.assertion()), key, stored: first.signCount) })
        XCTAssertEqual(try counter(ops, "key1"), Double(first.signCount + 1), "the key counted the sign-in it made, as Chromium's does")
        XCTAssertEqual(try ops.listPasskeys("key1").count, 1)
        // The RP refused the forged one and kept its counter: the next honest sign-in is still above it.
        XCTAssertNil(failure { try self.verify(try ops.get(.profile("key1"), self.assertion()), key, stored: first.signCount) })
    }

    func testACounterRegressionAndAnotherUsersCredentialAreMadeFromTheVault() throws {
        let ops = try makeOperations()
        _ = try ops.createProfile("key1", settings: [("pack", "security-key")], allowPackPath: false)
        let key = try register(ops, .profile("key1"))
        let first = try verify(try ops.get(.profile("key1"), assertion()), key)
        _ = try ops.forgeNext(.profile("key1"), "counterRegression")
        XCTAssertEqual(failure { try self.verify(try ops.get(.profile("key1"), self.assertion()), key, stored: first.signCount) }, "counter",
                       "below the counter the RP stored at the first sign-in")

        let aliceKey = try register(ops, .profile("p1"))
        _ = try ops.create(.profile("p1"), creation(user: "user-2", name: "bob"))
        let alice = try XCTUnwrap(try ops.listPasskeys("p1").first { $0["userName"]?.stringValue == "alice" }?["credentialId"]?.stringValue.flatMap(Base64URL.decode))
        _ = try ops.forgeNext(.profile("p1"), "otherUsersCredential")
        let request = CeremonyRequest(options: .text(requestOptionsJSON(challenge: challenge, allow: [alice])), origin: origin)
        let swapped = try ops.get(.profile("p1"), request)
        XCTAssertEqual(failure { try RPCheck.assertion(try AuthenticationResponse(answer: swapped.response), publicKey: aliceKey, challenge: self.challenge,
                                                       origin: self.origin, rpID: "example.com", userHandle: Array("user-1".utf8)) }, "user handle",
                       "alice's credential carrying bob's handle, signed by alice's key")
    }

    func testAForgeryThatCannotBeMadeOfTheAnswerFailsTheCeremonyByNameAndIsUsedUp() throws {
        let ops = try makeOperations()
        _ = try register(ops, .profile("p1"))
        for name in ["counterRegression", "otherUsersCredential"] {
            _ = try ops.forgeNext(.profile("p1"), name)
            do {
                _ = try ops.get(.profile("p1"), assertion())
                XCTFail("\(name): answered")
            } catch let error as OperationError {
                XCTAssertEqual(error.name, .forgeryNotMade, name)
                XCTAssertEqual(error.code, .conflict, name)
            }
            XCTAssertEqual(try ops.forgeryState(.profile("p1"))["forgery"], .null, name)
        }
        XCTAssertEqual(try ops.events("p1", kind: "get").filter { $0["outcome"]?.stringValue == "forgeryNotMade" }.count, 2)
    }

    func testAnUnknownForgeryOrAReplayIsRefusedNamingTheForgeriesAndArmsNothing() throws {
        let ops = try makeOperations()
        for name in ["badSig", "replayed", String(repeating: "x", count: 5000)] {
            do {
                _ = try ops.forgeNext(.profile("p1"), name)
                XCTFail(name)
            } catch let error as OperationError {
                XCTAssertEqual(error.code, .invalidInput)
                XCTAssertTrue(error.message.contains("badSignature") && error.message.contains("otherOrigin"), error.message)
                XCTAssertLessThan(error.message.count, 1000)
            }
        }
        XCTAssertEqual(try ops.forgeryState(.profile("p1"))["forgery"], .null)
        XCTAssertThrowsError(try ops.forgeNext(.profile("nobody"), "badSignature"))
    }

    func testOverrideBitsChangeEveryAnswerOfTheKeyAsChromiumsDoUntilSetAgain() throws {
        let ops = try makeOperations()
        let id = try ops.addVirtualAuthenticator(try JSONValue.parse(Array(#"{"protocol":"ctap2","transport":"usb","hasResidentKey":true,"hasUserVerification":true,"isUserVerified":true}"#.utf8)))
        XCTAssertEqual(try ops.setResponseOverrideBits(id, try JSONValue.parse(Array(#"{"isBadUP":true}"#.utf8))),
                       .object([("isBogusSignature", false), ("isBadUV", false), ("isBadUP", true)]))
        let registered = try ops.create(.profile(id), creation(uv: "required"))
        let response = try RegistrationResponse(answer: registered.response)
        XCTAssertEqual(failure { try RPCheck.registration(response, challenge: self.challenge, origin: self.origin, rpID: "example.com") }, "UP not set")
        let authData = try RPCheck.registration(response, challenge: challenge, origin: origin, rpID: "example.com", requireUserPresence: false,
                                                requireUserVerification: true)
        let key = try XCTUnwrap(authData.attestedCredentialData?.publicKey)
        XCTAssertEqual(try ops.listPasskeys(id).count, 1, "the key stored its credential")

        _ = try ops.setResponseOverrideBits(id, try JSONValue.parse(Array(#"{"isBadUV":true}"#.utf8)))
        for _ in 0..<2 {
            let answer = try ops.get(.profile(id), assertion(uv: "required"))
            XCTAssertEqual(failure { try self.verify(answer, key, uv: true) }, "UV not set", "every answer, signed again over the cleared flag")
            XCTAssertNil(failure { try self.verify(answer, key) }, "UP set again: an omitted bit is cleared")
        }
        _ = try ops.setResponseOverrideBits(id, try JSONValue.parse(Array(#"{"isBogusSignature":true}"#.utf8)))
        XCTAssertEqual(failure { try self.verify(try ops.get(.profile(id), self.assertion()), key) }, "signature")
        XCTAssertEqual(try ops.forgeryState(.profile(id))["overrideBits"]?["isBogusSignature"], true)
        _ = try ops.setResponseOverrideBits(id, .object([]))
        XCTAssertNil(failure { try self.verify(try ops.get(.profile(id), self.assertion(uv: "required")), key, uv: true) })

        for bad in [#"[]"#, #"{"isBadUV":"yes"}"#, #"{"isBadUV":null}"#, #"{"isBadUv":true}"#] {
            XCTAssertThrowsError(try ops.setResponseOverrideBits(id, try JSONValue.parse(Array(bad.utf8))), bad) {
                XCTAssertEqual(($0 as? OperationError)?.name, .invalidArgument, bad)
            }
        }
        XCTAssertThrowsError(try ops.setResponseOverrideBits("p1", .object([])), "a passkey provider's profile is no authenticator") {
            XCTAssertEqual(($0 as? OperationError)?.code, .notFound)
        }
        _ = try ops.setResponseOverrideBits(id, try JSONValue.parse(Array(#"{"isBogusSignature":true}"#.utf8)))
        try ops.removeVirtualAuthenticator(id)
        XCTAssertEqual(ops.forgeries.bits(profile: id), ForgeryBoard.OverrideBits(), "a key made later under the ID inherits nothing")
    }
}
