@testable import CredemuProbe
import CredemuEngine
import WebAuthn
import XCTest

/// The traits of what a security key and a phone send, read from the response itself.
final class ProbeRoamingTraitsTests: XCTestCase {
    /// A registration response carrying these authenticator-data flags and this attestation statement.
    func registration(flags: UInt8, fmt: String, x5c: Bool, attachment: String = "platform", transports: [String] = ["internal"]) -> JSONValue {
        var authData = [UInt8](repeating: 0, count: 32) + [flags, 0, 0, 0, 0] + [UInt8](repeating: 0x2f, count: 16) + [0, 0]
        let statement: CBOR = x5c ? .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes([1])), (.text("x5c"), .array([.bytes([2])]))]) : .map([])
        let object = CBOR.map([(.text("fmt"), .text(fmt)), (.text("attStmt"), statement), (.text("authData"), .bytes(authData))])
        return .object([
            ("id", "x"), ("authenticatorAttachment", .string(attachment)),
            ("response", .object([("authenticatorData", .string(Base64URL.encode(authData))), ("attestationObject", .string(Base64URL.encode(object.encoded()))),
                                  ("transports", .array(transports.map(JSONValue.string))), ("publicKeyAlgorithm", -7)])),
        ])
    }

    func testASecurityKeysRegistrationIsDeviceBoundWithABatchCertificate() {
        let (traits, sent) = Prober.registrationTraits(registration(flags: 0x45, fmt: "packed", x5c: true, attachment: "cross-platform", transports: ["usb"]))
        XCTAssertEqual(traits, [.notBackupEligible, .packedBatchAttestation])
        XCTAssertTrue(sent.contains("BE=0 BS=0 fmt=packed+x5c"), sent)
        XCTAssertEqual(Prober.registrationTraits(registration(flags: 0x45, fmt: "fido-u2f", x5c: true)).0, [.notBackupEligible, .packedBatchAttestation])
        XCTAssertEqual(Prober.registrationTraits(registration(flags: 0x5d, fmt: "packed", x5c: false)).0, [.backedUp, .packedSelfAttestation])
    }

    /// Only a cross-platform response with the hybrid transport is a phone's: GPM on a desktop lists hybrid too.
    func testAPhoneOverHybridIsCrossPlatformWithTheHybridTransport() {
        let phone = registration(flags: 0x5d, fmt: "none", x5c: false, attachment: "cross-platform", transports: ["hybrid", "internal"])
        XCTAssertEqual(Prober.registrationTraits(phone).0, [.backedUp, .hybridTransport])
        let desktop = registration(flags: 0x5d, fmt: "none", x5c: false, attachment: "platform", transports: ["hybrid", "internal"])
        XCTAssertEqual(Prober.registrationTraits(desktop).0, [.backedUp])
    }

    func testAGrowingCounterIsATraitOfItsOwn() {
        func assertion(_ counter: UInt8) -> JSONValue {
            let data = [UInt8](repeating: 0, count: 32) + [0x05, 0, 0, 0, counter]
            return .object([("response", .object([("authenticatorData", .string(Base64URL.encode(data)))]))])
        }
        XCTAssertEqual(Prober.assertionTraits(assertion(2), again: true).0, [.signCountGrowing])
        XCTAssertEqual(Prober.assertionTraits(assertion(0), again: true).0, [.signCountNotGrowing])
    }
}
