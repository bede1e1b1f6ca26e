import CredemuEngine
import CredemuTestSupport
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// Security keys plugged into a profile or device and phones reached over hybrid, through the browser's sheet
/// (`Sheet`), as both front ends run them.
final class SecurityKeyTests: XCTestCase {
    let origin = "https://www.example.com"
    var directory: TemporaryDirectory!

    func makeOperations(key: [(String, JSONValue)] = []) throws -> Operations {
        let (vault, directory) = try makeTestVault()
        self.directory = directory
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        _ = try ops.createProfile("key1", settings: [("pack", "security-key")] + key, allowPackPath: false)
        _ = try ops.createProfile("gpm1", settings: [("pack", "gpm"), ("authenticators", "key1")], allowPackPath: false)
        return ops
    }

    func creation(attachment: String? = "cross-platform", residentKey: String = "discouraged", uv: String = "preferred",
                  attestation: String = "direct", timeout: Int? = nil) -> CeremonyRequest {
        let selection = (attachment.map { #""authenticatorAttachment": "\#($0)", "# } ?? "") + #""residentKey": "\#(residentKey)", "userVerification": "\#(uv)""#
        let options = """
            {"rp": {"id": "example.com", "name": "Example"}, "user": {"id": "dXNlcjE", "name": "alice", "displayName": "Alice"},
             "challenge": "AAAAAAAAAAAAAAAAAAAAAA", "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
             "authenticatorSelection": {\(selection)}, "attestation": "\(attestation)"\(timeout.map { #", "timeout": \#($0)"# } ?? "")}
            """
        return CeremonyRequest(options: .text(options), origin: origin)
    }

    func assertion(allow: [String] = [], uv: String = "preferred") -> CeremonyRequest {
        let list = allow.map { #"{"type": "public-key", "id": "\#($0)"}"# }.joined(separator: ", ")
        return CeremonyRequest(options: .text(#"{"challenge": "AQIDBA", "rpId": "example.com", "allowCredentials": [\#(list)], "userVerification": "\#(uv)"}"#),
                               origin: origin)
    }

    func authData(_ response: JSONValue) throws -> [UInt8] {
        try XCTUnwrap(response["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
    }

    func refusal(_ body: () throws -> Answer) -> CeremonyError? {
        do { _ = try body() } catch let error as OperationError { return error.ceremony } catch { return nil }
        return nil
    }

    func testACrossPlatformCreateOnAGPMProfileGoesToThePluggedKey() throws {
        let ops = try makeOperations()
        let answer = try ops.create(.profile("gpm1"), creation())
        XCTAssertEqual(answer.account, "key1")
        XCTAssertEqual(answer.response["authenticatorAttachment"]?.stringValue, "cross-platform")
        XCTAssertEqual(answer.response["response"]?["transports"], .array(["nfc", "usb"]))
        let data = try authData(answer.response)
        XCTAssertEqual(data[32] & 0x18, 0, "BE=0 BS=0: a key's credential is not synced")
        XCTAssertEqual(AAGUID.format(Array(data[37..<53])), "2fc0579f-8113-47ea-b116-bb5a8db9202a")
        XCTAssertEqual(try ops.listPasskeys("gpm1").count, 0)
        XCTAssertEqual(try ops.listPasskeys("key1").count, 1)
    }

    func testAPlatformCreateStaysWithTheManagerAndUseChoosesTheKey() throws {
        let ops = try makeOperations()
        XCTAssertEqual(try ops.create(.profile("gpm1"), creation(attachment: nil)).account, "gpm1")
        _ = try ops.queueDecisions(.profile("gpm1"), ["use:key1"])
        XCTAssertEqual(try ops.create(.profile("gpm1"), creation(attachment: nil)).account, "key1")
        _ = try ops.queueDecisions(.profile("gpm1"), ["use:key1"])
        let failure = refusal { try ops.create(.profile("gpm1"), creation(attachment: "platform")) }
        XCTAssertEqual(failure?.reason, .notInSheet, "a platform request is not dispatched to a key")
    }

    func testWithoutAKeyTheSheetSettlesAtTheTimeoutOrAtTheUsersCancel() throws {
        let ops = try makeOperations()
        _ = try ops.updateProfile("gpm1", settings: [("authenticators", .null)], allowPackPath: false)
        let left = refusal { try ops.create(.profile("gpm1"), creation(timeout: 45_000)) }
        XCTAssertEqual(left?.error.name, .notAllowedError)
        XCTAssertEqual(left?.settlesAfterMillis, 45_000, "nobody used a key or phone: the request settles at its timeout")
        _ = try ops.queueDecisions(.profile("gpm1"), ["cancel"])
        let cancelled = refusal { try ops.create(.profile("gpm1"), creation(timeout: 45_000)) }
        XCTAssertEqual(cancelled?.reason, .userCancelled)
        XCTAssertNil(cancelled?.settlesAfterMillis, "the user's cancel settles at once")
    }

    func testAKeysCounterGrowsAndAGetGoesToTheKeyHoldingTheCredential() throws {
        let ops = try makeOperations()
        let id = try XCTUnwrap(try ops.create(.profile("gpm1"), creation()).response["id"]?.stringValue)
        var counts: [UInt32] = []
        for _ in 0..<3 {
            let answer = try ops.get(.profile("gpm1"), assertion(allow: [id]))
            XCTAssertEqual(answer.account, "key1")
            let data = try authData(answer.response)
            counts.append(data[33..<37].reduce(0) { $0 << 8 | UInt32($1) })
            XCTAssertEqual(data[32] & 0x05, 0x05, "UP and UV (the key's PIN)")
        }
        XCTAssertEqual(counts, [1, 2, 3])
    }

    func testAU2FKeyMakesOnlyNonDiscoverableCredentialsWithFidoU2FAttestation() throws {
        let ops = try makeOperations(key: [("authenticator", .object([("protocol", "ctap1/u2f")]))])
        let answer = try ops.create(.profile("gpm1"), creation(residentKey: "preferred"))
        let object = try XCTUnwrap(answer.response["response"]?["attestationObject"]?.stringValue.flatMap(Base64URL.decode))
        let decoded = try CBOR.decode(object)
        XCTAssertEqual(decoded["fmt"]?.textValue, "fido-u2f")
        guard case .array(let x5c)? = decoded["attStmt"]?["x5c"] else { return XCTFail("no x5c") }
        XCTAssertEqual(x5c.count, 1)
        let data = try authData(answer.response)
        XCTAssertEqual(Array(data[37..<53]), [UInt8](repeating: 0, count: 16), "a U2F key has no AAGUID")
        XCTAssertEqual(data[32] & 0x04, 0, "no user verification")
        XCTAssertEqual(try ops.listPasskeys("key1").first?["discoverable"], .bool(false))
        XCTAssertEqual(refusal { try ops.create(.profile("gpm1"), self.creation(residentKey: "required")) }?.reason, .residentKeyUnsupported)
        XCTAssertEqual(refusal { try ops.create(.profile("gpm1"), self.creation(uv: "required")) }?.reason, .userVerificationUnavailable)
    }

    func testAKeyWithoutAPinCannotVerifyAndAWrongPinFails() throws {
        let ops = try makeOperations(key: [("authenticator", .object([("hasUserVerification", false)]))])
        XCTAssertEqual(refusal { try ops.create(.profile("gpm1"), self.creation(uv: "required")) }?.reason, .userVerificationUnavailable)
        let data = try authData(try ops.create(.profile("gpm1"), creation(uv: "preferred")).response)
        XCTAssertEqual(data[32] & 0x04, 0, "preferred: the key answers without verifying")
        _ = try ops.updateProfile("key1", settings: [("authenticator", .object([("hasUserVerification", true), ("isUserVerified", false)]))],
                                  allowPackPath: false)
        XCTAssertEqual(refusal { try ops.create(.profile("gpm1"), self.creation(uv: "required")) }?.reason, .userVerificationFailed)
        XCTAssertEqual(try ops.listPasskeys("key1").count, 1, "refusals store nothing")
    }

    func testAKeyNobodyTouchesSettlesAtTheTimeout() throws {
        let ops = try makeOperations(key: [("authenticator", .object([("isUserConsenting", false)]))])
        let failure = refusal { try ops.create(.profile("gpm1"), self.creation(timeout: 30_000)) }
        XCTAssertEqual(failure?.reason, .userNotPresent)
        XCTAssertEqual(failure?.settlesAfterMillis, 30_000)
    }

    func testAFullKeyRefusesADiscoverableCredentialAndStillMakesOthers() throws {
        let ops = try makeOperations(key: [("authenticator", .object([("residentKeyCapacity", 1)]))])
        _ = try ops.create(.profile("gpm1"), creation(residentKey: "required"))
        XCTAssertEqual(refusal { try ops.create(.profile("gpm1"), self.creation(residentKey: "required")) }?.reason, .keyStoreFull)
        let answer = try ops.create(.profile("gpm1"), creation(residentKey: "preferred"))
        XCTAssertEqual(answer.account, "key1")
        let discoverable = try ops.listPasskeys("key1").compactMap { $0["discoverable"]?.boolValue }
        XCTAssertEqual(discoverable.sorted { !$0 && $1 }, [false, true], "preferred on a full key: a non-discoverable credential")
    }

    func testAPhoneOverHybridAnswersWithItsOwnProviderAsACrossPlatformAuthenticator() throws {
        let ops = try makeOperations()
        _ = try ops.createProfile("phone-gpm", settings: [("pack", "gpm"), ("platform", "chrome-android")], allowPackPath: false)
        _ = try ops.createDevice("pixel", settings: [("platform", "chrome-android"), ("providers", "phone-gpm")])
        _ = try ops.createDevice("laptop", settings: [("platform", "chrome-desktop"), ("providers", "gpm1"), ("phones", "pixel")])
        _ = try ops.queueDecisions(.device("laptop"), ["use:pixel"])
        let answer = try ops.create(.device("laptop"), creation())
        XCTAssertEqual(answer.account, "phone-gpm")
        XCTAssertEqual(answer.response["authenticatorAttachment"]?.stringValue, "cross-platform")
        XCTAssertEqual(answer.response["response"]?["transports"], .array(["hybrid", "internal"]))
        let data = try authData(answer.response)
        XCTAssertEqual(data[32] & 0x18, 0x18, "the phone's GPM passkey is synced: BE=1 BS=1")
        XCTAssertEqual(AAGUID.format(Array(data[37..<53])), "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4")
        let hybrid = try ops.events("gpm1", kind: "hybrid")
        XCTAssertEqual(hybrid.first?["detail"]?["phone"]?.stringValue, "pixel")
        XCTAssertEqual(hybrid.first?["detail"]?["reachedBy"]?.stringValue, "linked phone")
        _ = try ops.queueDecisions(.device("laptop"), ["use:pixel"])
        let id = try XCTUnwrap(answer.response["id"]?.stringValue)
        XCTAssertEqual(try ops.get(.device("laptop"), assertion(allow: [id])).account, "phone-gpm")
    }

    func testPluggingInWhatIsNotAKeyOrAPhoneIsRefused() throws {
        let ops = try makeOperations()
        XCTAssertThrowsError(try ops.updateProfile("gpm1", settings: [("authenticators", "gpm1")], allowPackPath: false))
        XCTAssertThrowsError(try ops.createDevice("laptop", settings: [("providers", "gpm1"), ("phones", "nowhere")]))
        XCTAssertThrowsError(try ops.updateProfile("gpm1", settings: [("authenticator", .object([("protocol", "ctap3")]))], allowPackPath: false))
        XCTAssertThrowsError(try ops.updateProfile("key1", settings: [("authenticator", .object([("pin", "1234")]))], allowPackPath: false),
                             "a member outside §11.1's is named")
        XCTAssertEqual(try ops.profile("gpm1").authenticators, ["key1"], "refused settings change nothing")
    }

    func testAKeyOnTheInternalTransportIsAPlatformAuthenticator() throws {
        let ops = try makeOperations(key: [("authenticator", .object([("transport", "internal")]))])
        let answer = try ops.create(.profile("key1"), creation(attachment: "platform"))
        XCTAssertEqual(answer.response["authenticatorAttachment"]?.stringValue, "platform")
        XCTAssertEqual(answer.response["response"]?["transports"], .array(["internal"]))
        XCTAssertEqual(refusal { try ops.create(.profile("key1"), self.creation(attachment: "cross-platform")) }?.reason, .attachmentNotOffered)
    }
}
