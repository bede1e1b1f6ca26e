import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Modal create and get with the simulated user, and exclusion as each provider handles it.
final class ModalCreateTests: XCTestCase {
    func testExclusionFollowsThePack() throws {
        let expected: [(String, WebAuthnError.Name, Reason)] = [
            ("gpm", .invalidStateError, .excludedCredential), ("apple", .invalidStateError, .excludedCredential),
            ("bitwarden", .notAllowedError, .excludedCredential), ("keepassxc", .notAllowedError, .noAnswerUntilTimeout),
            ("1password", .invalidStateError, .excludedCredential),
        ]
        for (pack, name, reason) in expected {
            let scenario = try ProviderScenario(pack: pack)
            let first = try scenario.modalCreate()
            let failure = scenario.failure { try scenario.modalCreate(exclude: [first.credentialID]) }
            XCTAssertEqual(failure?.error.name, name, pack)
            XCTAssertEqual(failure?.reason, reason, pack)
            XCTAssertEqual(try scenario.passkeys().count, 1, pack)
            if reason == .noAnswerUntilTimeout { XCTAssertEqual(failure?.settlesAfterMillis, 60000, "settles at the RP's timeout") }
        }
    }

    func testSameUserExclusionScopeIgnoresAnotherUsersCredential() throws {
        let scenario = try ProviderScenario(pack: "1password")
        let bobs = try scenario.modalCreate(user: "bob@example.com")
        XCTAssertNil(scenario.failure { try scenario.modalCreate(user: "alice@example.com", exclude: [bobs.credentialID]) },
                     "passkey-rs matches excluded IDs for the same user handle only")
        let gpm = try ProviderScenario(pack: "gpm")
        let bobsGPM = try gpm.modalCreate(user: "bob@example.com")
        XCTAssertEqual(gpm.failure { try gpm.modalCreate(user: "alice@example.com", exclude: [bobsGPM.credentialID]) }?.error.name,
                       .invalidStateError)
    }

    func testUserCancelAndTimeoutAreNotAllowedAndCreateNothing() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        let engine = scenario.engine()
        try engine.queue(.cancel)
        try engine.queue(.timeout)
        XCTAssertEqual(scenario.failure { try scenario.modalCreate() }?.reason, .userCancelled)
        XCTAssertEqual(scenario.failure { try scenario.modalCreate() }?.reason, .timedOut)
        XCTAssertEqual(try scenario.passkeys(), [])
        XCTAssertNil(scenario.failure { try scenario.modalCreate() }, "then the user accepts again")
    }

    func testAHugeTimeoutOrAClockFarInTheFutureDoesNotTrap() throws {
        let scenario = try ProviderScenario(pack: "keepassxc")
        let first = try scenario.modalCreate()
        var options = try scenario.creationOptions(exclude: [first.credentialID], conditional: false)
        options.timeout = 1e300
        let engine = scenario.engine()
        XCTAssertEqual(scenario.failure { try engine.create(options, caller: try Caller(origin: scenario.origin)) }?.settlesAfterMillis, Int.max,
                       "the no-answer timeout saturates")
        options.excludeCredentials = []
        try engine.queue(.timeout)
        options.timeout = -1e300
        XCTAssertEqual(scenario.failure { try engine.create(options, caller: try Caller(origin: scenario.origin)) }?.settlesAfterMillis, Int.min)
        scenario.advance(1e300)
        XCTAssertNil(scenario.failure { try scenario.signIn() }, "times past 9999 are stored as 9999-12-31T23:59:59.999Z")
        XCTAssertEqual(try scenario.passkeys().first?.lastUsedAt, Timestamp.latest)
    }

    func testUserPicksACredentialInTheAccountChooser() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        let alice = try scenario.modalCreate(user: "alice@example.com")
        scenario.advance(10)
        _ = try scenario.modalCreate(user: "bob@example.com")
        try scenario.engine().queue(.pick(Pick(alice.credentialID)))
        XCTAssertEqual(try scenario.signIn().credentialID, alice.credentialID)
    }

    func testProvidersThatClaimUVReportItEvenWhenDiscouraged() throws {
        for (pack, claimed) in [("keepassxc", true), ("bitwarden", true), ("gpm", false)] {
            let scenario = try ProviderScenario(pack: pack)
            let options = try CreationOptions(json: creationOptionsJSON(rpID: scenario.rpID, userVerification: "discouraged"))
            let response = try scenario.engine().create(options, caller: try Caller(origin: scenario.origin))
            XCTAssertEqual(try AuthenticatorData(bytes: response.authenticatorData).flags.contains(.userVerified), claimed, pack)
        }
    }

    func testPackAlgorithmsLimitNegotiation() throws {
        let scenario = try ProviderScenario(pack: "gpm")
        let options = try CreationOptions(json: creationOptionsJSON(rpID: scenario.rpID, algorithms: [-8, -257]))
        let failure = scenario.failure { try scenario.engine().create(options, caller: try Caller(origin: scenario.origin)) }
        XCTAssertEqual(failure?.error.name, .notSupportedError)
        let keepass = try ProviderScenario(pack: "keepassxc")
        XCTAssertEqual(try keepass.engine().create(options, caller: try Caller(origin: keepass.origin)).publicKeyAlgorithm, .edDSA)
    }

    func testPasskeysDisabledRefusesModalCreate() throws {
        let scenario = try ProviderScenario(pack: "gpm") { $0.passkeysEnabled = false }
        XCTAssertEqual(scenario.failure { try scenario.modalCreate() }?.reason, .passkeysDisabled)
    }

    /// keepassxc-browser's response object: `getPublicKey: () => null`, `getTransports: () => ['internal']`.
    func testKeePassXCGivesNoPublicKeyAndTheInternalTransportOnly() throws {
        let keepass = try ProviderScenario(pack: "keepassxc")
        let response = try keepass.modalCreate()
        XCTAssertNil(response.publicKey)
        XCTAssertNil(response.json["response"]?["publicKey"])
        XCTAssertEqual(response.transports, ["internal"])
        XCTAssertNoThrow(try RPCheck.registration(response, challenge: Array(repeating: 1, count: 32), origin: keepass.origin, rpID: keepass.rpID),
                         "an RP reads the key from the attestation object")
        let gpm = try ProviderScenario(pack: "gpm").modalCreate()
        XCTAssertNotNil(gpm.json["response"]?["publicKey"])
        XCTAssertEqual(gpm.transports, ["internal", "hybrid"])
    }
}
