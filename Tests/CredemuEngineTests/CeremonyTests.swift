import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

final class CeremonyTests: XCTestCase {
    var vault: Vault!
    var directory: TemporaryDirectory!
    var engine: Engine!
    let caller = try! Caller(origin: "https://login.example.com")

    override func setUpWithError() throws {
        (vault, directory) = try makeTestVault()
        engine = Engine(vault: vault, clock: VirtualClock())
    }

    func register(algorithms: [Int] = [-7], user: String = "alice", userID: [UInt8]? = nil, attestation: String = "none",
                  settings: PasskeySettings? = nil) throws -> (RegistrationResponse, AuthenticatorData) {
        let challenge = Array(repeating: UInt8(3), count: 32)
        let options = try CreationOptions(json: creationOptionsJSON(userID: userID ?? Array(user.utf8), userName: user,
                                                                    challenge: challenge, algorithms: algorithms, attestation: attestation))
        let response = try engine.create(options, caller: caller, settings: settings)
        let authData = try RPCheck.registration(response, challenge: challenge, origin: "https://login.example.com", rpID: "example.com")
        return (response, authData)
    }

    func signIn(allow: [[UInt8]] = [], userVerification: String = "preferred", pick: [UInt8]? = nil) throws -> AuthenticationResponse {
        try engine.get(try RequestOptions(json: requestOptionsJSON(allow: allow, userVerification: userVerification)), caller: caller, pick: pick.map { Pick($0) })
    }

    func assertError(_ name: WebAuthnError.Name, _ fragment: String = "", _ body: () throws -> Void, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { error in
            XCTAssertEqual((error as? CeremonyError)?.error.name, name, "\(error)", line: line)
            XCTAssertTrue(fragment.isEmpty || "\(error)".contains(fragment), "\(error) lacks \(fragment)", line: line)
        }
    }

    func testRegistrationThenAssertionForEveryAlgorithm() throws {
        for (alg, name) in [(-7, "es256"), (-8, "eddsa"), (-257, "rs256")] {
            let (registration, authData) = try register(algorithms: [alg], user: name)
            XCTAssertEqual(registration.publicKeyAlgorithm.rawValue, alg)
            let assertion = try signIn(allow: [registration.credentialID])
            XCTAssertEqual(assertion.userHandle, Array(name.utf8))
            let checked = try RPCheck.assertion(assertion, publicKey: authData.attestedCredentialData!.publicKey,
                                                challenge: Array(repeating: 2, count: 32), origin: "https://login.example.com", rpID: "example.com")
            XCTAssertEqual(checked.signCount, 0)
        }
    }

    func testDefaultsAreASyncedPasskey() throws {
        let (registration, authData) = try register()
        XCTAssertEqual(authData.flags, [.userPresent, .userVerified, .backupEligible, .backedUp, .attestedCredentialData])
        XCTAssertEqual(authData.signCount, 0)
        XCTAssertEqual(try CBOR.decode(registration.attestationObject)["fmt"], .text("none"))
        XCTAssertEqual(registration.transports, ["internal", "hybrid"])
        XCTAssertEqual(registration.authenticatorAttachment, "platform")
    }

    func testAlgorithmNegotiationFollowsTheRPsOrder() throws {
        XCTAssertEqual(try register(algorithms: [-8, -7]).0.publicKeyAlgorithm, .edDSA)
        XCTAssertEqual(try register(algorithms: [-35, -257, -7], user: "b").0.publicKeyAlgorithm, .rs256)
        XCTAssertEqual(try register(algorithms: [], user: "c").0.publicKeyAlgorithm, .es256, "an empty list means ES256, RS256")
    }

    func testUnsupportedAlgorithmIsNotSupportedErrorAndStoresNothing() throws {
        assertError(.notSupportedError, "-35") { _ = try self.register(algorithms: [-35, -36]) }
        XCTAssertEqual(try vault.allPasskeys(), [])
    }

    func testExcludedCredentialIsInvalidStateErrorAndStoresNothing() throws {
        let (first, _) = try register()
        let options = try CreationOptions(json: creationOptionsJSON(userID: Array("other".utf8), exclude: [[9, 9], first.credentialID]))
        assertError(.invalidStateError, "already registered") { _ = try self.engine.create(options, caller: self.caller) }
        XCTAssertEqual(try vault.allPasskeys().count, 1)
    }

    func testExclusionOfAnUnknownIDDoesNotStopCreation() throws {
        _ = try register()
        let options = try CreationOptions(json: creationOptionsJSON(exclude: [[1, 2, 3]]))
        XCTAssertNoThrow(try engine.create(options, caller: caller))
    }

    func testRPIDThatIsNotASuffixOfTheOriginIsSecurityError() throws {
        let options = try CreationOptions(json: creationOptionsJSON(rpID: "example.org"))
        assertError(.securityError, "example.org") { _ = try self.engine.create(options, caller: self.caller) }
        let request = try RequestOptions(json: requestOptionsJSON(rpID: "co.uk"))
        assertError(.securityError) { _ = try self.engine.get(request, caller: try Caller(origin: "https://shop.example.co.uk")) }
        XCTAssertEqual(try vault.allPasskeys(), [])
    }

    func testMissingRPIDDefaultsToTheOriginsHost() throws {
        let options = try CreationOptions(json: creationOptionsJSON(rpID: nil))
        let response = try engine.create(options, caller: caller)
        XCTAssertEqual(try vault.passkey(id: response.credentialID)?.rpID, "login.example.com")
    }

    func testPackedSelfAttestationOnlyWhenAskedAndAllowed() throws {
        let packed = PasskeySettings(attestation: .packed)
        XCTAssertEqual(try CBOR.decode(register(attestation: "direct", settings: packed).0.attestationObject)["fmt"], .text("packed"))
        XCTAssertEqual(try CBOR.decode(register(user: "b", attestation: "none", settings: packed).0.attestationObject)["fmt"], .text("none"))
        XCTAssertEqual(try CBOR.decode(register(user: "c", attestation: "direct").0.attestationObject)["fmt"], .text("none"))
    }

    func testCredPropsReportsDiscoverability() throws {
        let options = try CreationOptions(json: creationOptionsJSON(extensions: .object([("credProps", true)])))
        let response = try engine.create(options, caller: caller)
        XCTAssertEqual(response.json["clientExtensionResults"], .object([("credProps", .object([("rk", true)]))]))
    }

    func testUserVerificationDiscouragedLeavesUVUnset() throws {
        let options = try CreationOptions(json: creationOptionsJSON(userVerification: "discouraged"))
        let authData = try AuthenticatorData(bytes: try engine.create(options, caller: caller).authenticatorData)
        XCTAssertFalse(authData.flags.contains(.userVerified))
        XCTAssertTrue(authData.flags.contains(.userPresent))
        let assertion = try AuthenticatorData(bytes: try signIn(userVerification: "discouraged").authenticatorData)
        XCTAssertFalse(assertion.flags.contains(.userVerified))
        XCTAssertTrue(try AuthenticatorData(bytes: try signIn(userVerification: "required").authenticatorData).flags.contains(.userVerified))
    }

    func testHiddenCredentialsAreNeverOffered() throws {
        let (registration, _) = try register()
        try vault.setHidden(credentialID: registration.credentialID, hidden: true, at: Date())
        assertError(.notAllowedError) { _ = try self.signIn() }
        assertError(.notAllowedError) { _ = try self.signIn(allow: [registration.credentialID]) }
    }

    func testNonDiscoverableCredentialsNeedAnAllowList() throws {
        let (registration, _) = try register(settings: PasskeySettings(discoverable: false))
        assertError(.notAllowedError, "no discoverable credential") { _ = try self.signIn() }
        XCTAssertEqual(try signIn(allow: [registration.credentialID]).credentialID, registration.credentialID)
    }

    func testIncrementingCounterCountsAndZeroCounterStaysZero() throws {
        let (counting, _) = try register(settings: PasskeySettings(counter: .increment))
        for expected in 1...3 {
            let data = try AuthenticatorData(bytes: try signIn(allow: [counting.credentialID]).authenticatorData)
            XCTAssertEqual(data.signCount, UInt32(expected))
        }
        XCTAssertEqual(try vault.passkey(id: counting.credentialID)?.signCount, 3)
        let (synced, _) = try register(user: "b")
        XCTAssertEqual(try AuthenticatorData(bytes: try signIn(allow: [synced.credentialID]).authenticatorData).signCount, 0)
    }

    func testUserPicksTheMostRecentlyUsedOrTheOneNamed() throws {
        let clock = engine.clock as! VirtualClock
        let (first, _) = try register(user: "a")
        clock.advance(by: 60)
        let (second, _) = try register(user: "b")
        XCTAssertEqual(try signIn().credentialID, second.credentialID, "newest when none was used")
        clock.advance(by: 60)
        _ = try signIn(allow: [first.credentialID])
        XCTAssertEqual(try signIn().credentialID, first.credentialID, "most recently used")
        XCTAssertEqual(try signIn(pick: second.credentialID).credentialID, second.credentialID)
        assertError(.notAllowedError) { _ = try self.signIn(pick: [1, 2, 3]) }
    }

    func testCrossOriginCallerGetsTopOriginInClientData() throws {
        let framed = try Caller(origin: "https://login.example.com", topOrigin: "https://news.example.org")
        let response = try engine.create(try CreationOptions(json: creationOptionsJSON()), caller: framed)
        let clientData = try JSONValue.parse(response.clientDataJSON)
        XCTAssertEqual(clientData["crossOrigin"], .bool(true))
        XCTAssertEqual(clientData["topOrigin"], .string("https://news.example.org"))
    }

    func testSignInAfterTheVaultIsClosedAndReopened() throws {
        let (registration, authData) = try register(algorithms: [-8])
        vault.close()
        let reopened = try Vault.open(path: directory.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)))
        engine = Engine(vault: reopened)
        let assertion = try signIn(allow: [registration.credentialID])
        XCTAssertNoThrow(try RPCheck.assertion(assertion, publicKey: authData.attestedCredentialData!.publicKey,
                                               challenge: Array(repeating: 2, count: 32), origin: "https://login.example.com", rpID: "example.com"))
    }
}
