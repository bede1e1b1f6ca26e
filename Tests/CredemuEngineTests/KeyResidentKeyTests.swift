import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Whether a security key makes a discoverable credential, for every protocol × resident keys × user verification ×
/// `residentKey` (or `requireResidentKey` alone), and what `credProps.rk` says: Chromium 156's virtual authenticator
/// through chromedriver, measured on this machine (device/fido/make_credential_request_handler.cc
/// `SpecializeRequestForAuthenticator`, make_credential_task.cc for `rk`).
final class KeyResidentKeyTests: XCTestCase {
    enum Outcome: Equatable {
        case made(rk: Bool?, discoverable: Bool)
        case notAllowed
    }

    static let selections: [(String, JSONValue)] = [
        ("required", .object([("residentKey", "required")])), ("preferred", .object([("residentKey", "preferred")])),
        ("discouraged", .object([("residentKey", "discouraged")])), ("absent, requireResidentKey", .object([("requireResidentKey", true)])),
        ("absent", .object([("requireResidentKey", false)])),
        ("discouraged, requireResidentKey", .object([("residentKey", "discouraged"), ("requireResidentKey", true)])),
    ]

    /// Chromium's answer for a key and one of `selections`.
    static func expected(_ key: AuthenticatorOptions, _ selection: String) -> Outcome {
        let wantsResident = ["required", "absent, requireResidentKey"].contains(selection)
            || (selection == "preferred" && key.hasResidentKey)
        if wantsResident {
            return key.hasResidentKey && key.hasUserVerification ? .made(rk: true, discoverable: true) : .notAllowed
        }
        // A CTAP 2.0 key with resident keys may make any credential resident: Chromium leaves `rk` out.
        return .made(rk: key.protocol == .ctap2 && key.hasResidentKey ? nil : false, discoverable: false)
    }

    func outcome(_ key: AuthenticatorOptions, _ selection: JSONValue, userVerification: String = "discouraged") throws -> (Outcome, RegistrationResponse?) {
        let scenario = try ProviderScenario(pack: "security-key") { $0.authenticator = key }
        var json = creationOptionsJSON(rpID: scenario.rpID, extensions: .object([("credProps", true)]))
        let chosen = JSONValue.object((selection.objectValue ?? []) + [("userVerification", .string(userVerification))]).serialized()
        json = json.replacingOccurrences(of: #"{"residentKey":"preferred","requireResidentKey":false,"userVerification":"preferred"}"#, with: chosen)
        XCTAssertTrue(json.contains(chosen))
        do {
            let made = try scenario.engine().create(try CreationOptions(json: json), caller: try Caller(origin: scenario.origin))
            let props = made.clientExtensionResults.first { $0.0 == "credProps" }?.1.objectValue
            let records = try scenario.passkeys()
            XCTAssertEqual(records.count, 1)
            return (.made(rk: props?.first { $0.0 == "rk" }.map { $0.1 == .bool(true) }, discoverable: records.first?.settings.discoverable == true), made)
        } catch let error as CeremonyError {
            XCTAssertEqual(error.error.name, .notAllowedError)
            XCTAssertNil(error.settlesAfterMillis, "Chromium refuses at once: the key is not a candidate")
            return (.notAllowed, nil)
        }
    }

    func testEveryKeyAndResidentKeyRequirementDecidesAsChromiumsVirtualAuthenticator() throws {
        for proto in [AuthenticatorOptions.CTAPProtocol.ctap2, .ctap2_1] {
            for hasResidentKey in [true, false] {
                for hasUserVerification in [true, false] {
                    var key = AuthenticatorOptions()
                    key.protocol = proto
                    key.hasResidentKey = hasResidentKey
                    key.hasUserVerification = hasUserVerification
                    key.isUserVerified = hasUserVerification
                    for (name, selection) in Self.selections {
                        let (got, _) = try outcome(key, selection)
                        XCTAssertEqual(got, Self.expected(key, name), "\(proto) rk=\(hasResidentKey) uv=\(hasUserVerification) \(name)")
                    }
                }
            }
        }
    }

    func testACTAP20KeyWithResidentKeysAskedDiscouragedMakesANonDiscoverableCredentialAndLeavesRKOut() throws {
        var key = AuthenticatorOptions()
        key.protocol = .ctap2
        let (got, made) = try outcome(key, .object([("residentKey", "discouraged")]))
        XCTAssertEqual(got, .made(rk: nil, discoverable: false))
        XCTAssertEqual(made?.clientExtensionResults.first { $0.0 == "credProps" }?.1, .object([]))
    }

    func testAResidentKeyIsMadeWithUserVerificationEvenWhenTheRPDiscouragesIt() throws {
        let (_, made) = try outcome(AuthenticatorOptions(), .object([("residentKey", "required")]), userVerification: "discouraged")
        XCTAssertTrue(try AuthenticatorData(bytes: XCTUnwrap(made).authenticatorData).flags.contains(.userVerified))
        let (_, plain) = try outcome(AuthenticatorOptions(), .object([("residentKey", "discouraged")]), userVerification: "discouraged")
        XCTAssertFalse(try AuthenticatorData(bytes: XCTUnwrap(plain).authenticatorData).flags.contains(.userVerified))
    }

    func testAKeyWithoutUserVerificationRefusesAPreferredResidentKeyAndSaysWhy() throws {
        var key = AuthenticatorOptions()
        key.hasUserVerification = false
        let scenario = try ProviderScenario(pack: "security-key") { $0.authenticator = key }
        XCTAssertThrowsError(try scenario.modalCreate()) { error in
            let failure = error as? CeremonyError
            XCTAssertEqual(failure?.reason, .userVerificationUnavailable)
            XCTAssertTrue(failure?.error.message.contains("discoverable credential on a security key only with user verification") == true,
                          failure?.error.message ?? "")
        }
        XCTAssertTrue(try scenario.passkeys().isEmpty)
    }
}
