import CredemuEngine
import CredemuTestSupport
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// WebAuthn L3 §11's virtual-authenticator commands over the operations layer: a key is a security-key profile.
final class VirtualAuthenticatorTests: XCTestCase {
    let origin = "https://example.com"

    func makeOperations(held: Bool = false) throws -> (Operations, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault(held: held)
        return (try Operations(vault: vault, registry: try PolicyRegistry()), directory)
    }

    func refusal(_ body: () throws -> Void) -> OperationError? {
        do { try body() } catch let error as OperationError { return error } catch { return nil }
        return nil
    }

    func config(_ json: String) throws -> JSONValue { try JSONValue.parse(Array(json.utf8)) }

    func testAConfigurationIsReadAsAddVirtualAuthenticatorSays() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let before = try ops.listProfiles().count
        let invalid = [
            "[]", #"{"transport":"usb"}"#, #"{"protocol":"ctap2"}"#, #"{"protocol":"ctap3","transport":"usb"}"#,
            #"{"protocol":"ctap2","transport":"carrier-pigeon"}"#, #"{"protocol":"ctap2","transport":"usb","hasResidentKey":"yes"}"#,
            #"{"protocol":"ctap2","transport":"usb","hasResidentKey":null}"#, #"{"protocol":"ctap2","transport":"usb","extensions":"prf"}"#,
            #"{"protocol":"ctap2_1","transport":"usb","extensions":["largeBlob"]}"#,
            #"{"protocol":"ctap2","transport":"usb","hasHMACSecret":"yes"}"#, #"{"protocol":"ctap2","transport":"usb","hasLargeBlob":true,"hasResidentKey":true}"#,
            #"{"protocol":"ctap2_1","transport":"usb","hasLargeBlob":true}"#, #"{"protocol":"ctap2","transport":"usb","hasCredBlob":true}"#,
            #"{"protocol":"ctap2_1","transport":"usb","extensions":["prf","prf"]}"#,
        ]
        for text in invalid {
            let error = refusal { _ = try ops.addVirtualAuthenticator(try config(text)) }
            XCTAssertEqual(error?.name, .invalidArgument, text)
            XCTAssertEqual(error?.code, .invalidInput, text)
        }
        for text in [#"{"protocol":"ctap2_1","transport":"usb","extensions":["credProtect"]}"#,
                     #"{"protocol":"ctap2_1","transport":"usb","extensions":["uvm"]}"#] {
            XCTAssertEqual(refusal { _ = try ops.addVirtualAuthenticator(try config(text)) }?.name, .unsupportedOperation, text)
        }
        XCTAssertEqual(try ops.listProfiles().count, before, "no refused configuration made a profile")

        let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2_1","transport":"nfc","hasResidentKey":true,"extensions":["largeBlob","prf"]}"#))
        XCTAssertTrue(id.hasPrefix("wd-") && Profile.isValidName(id), id)
        let key = try XCTUnwrap(try ops.profile(id).authenticator)
        XCTAssertEqual(key.protocol, .ctap2_1)
        XCTAssertEqual(key.transport, "nfc")
        XCTAssertTrue(key.hasResidentKey)
        XCTAssertFalse(key.hasUserVerification, "§11.1's default, not a profile's")
        XCTAssertFalse(key.isUserVerified)
        XCTAssertTrue(key.isUserConsenting)
        XCTAssertEqual(key.extensions, ["largeBlob", "prf"])
        XCTAssertEqual(try ops.profile(id).pack, "security-key")
        let other = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap1/u2f","transport":"usb"}"#))
        XCTAssertNotEqual(id, other)
        XCTAssertEqual(try ops.profile(other).authenticator?.extensions, [], "§11.1: no extensions unless listed")
    }

    func testAConfigurationMeetsNoRefusalChromedriverDoesNotMake() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        // chromedriver drops members outside its table, and DevTools makes prf keys of any protocol (measured).
        for text in [#"{"protocol":"ctap2","transport":"usb","colour":"red"}"#, #"{"protocol":"ctap2","transport":"usb","residentKeyCapacity":5}"#,
                     #"{"protocol":"ctap2","transport":"usb","automaticPresenceSimulation":false}"#,
                     #"{"protocol":"ctap2","transport":"usb","extensions":["prf"]}"#, #"{"protocol":"ctap1/u2f","transport":"usb","extensions":["prf"]}"#] {
            let id = try ops.addVirtualAuthenticator(try config(text))
            let key = try XCTUnwrap(try ops.profile(id).authenticator, text)
            XCTAssertTrue(key.isUserConsenting, text)
            XCTAssertEqual(key.residentKeyCapacity, AuthenticatorOptions().residentKeyCapacity, text)
        }
        let capable = try ops.addVirtualAuthenticator(try config(
            #"{"protocol":"ctap2_1","transport":"usb","hasResidentKey":true,"hasLargeBlob":true,"hasCredBlob":true,"hasMinPinLength":true,"hasPrf":false,"hasUvm":true}"#))
        XCTAssertEqual(try ops.profile(capable).authenticator?.extensions, ["credBlob", "largeBlob", "minPinLength"])
    }

    func testAKeyWithHMACSecretAnswersPRFAtCreationAndAssertion() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        // web-platform-tests' webauthn/extension-prf.https.html: a CTAP 2.0 key, no UV, hasHMACSecret.
        let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2","transport":"usb","hasResidentKey":false,"hasUserVerification":false,"isUserVerified":false,"hasHMACSecret":true}"#))
        XCTAssertEqual(try ops.profile(id).authenticator?.extensions, ["hmac-secret"])
        let made = try ops.create(.profile(id), CeremonyRequest(options: .text(creationOptionsJSON(userVerification: "discouraged",
                                                                                                 extensions: .object([("prf", .object([]))]))
            .replacingOccurrences(of: #""residentKey":"preferred""#, with: #""residentKey":"discouraged""#)), origin: origin)).response
        XCTAssertEqual(made["clientExtensionResults"]?["prf"], JSONValue.object([("enabled", true)]))
        let credentialID = try XCTUnwrap(made["rawId"]?.stringValue)
        let salt = JSONValue.string(Base64URL.encode([UInt8](repeating: 0, count: 8)))
        let asserted = try ops.get(.profile(id), CeremonyRequest(options: .text(requestOptionsJSON(
            allow: [try XCTUnwrap(Base64URL.decode(credentialID))], userVerification: "discouraged",
            extensions: .object([("prf", .object([("eval", .object([("first", salt)]))]))]))), origin: origin)).response
        XCTAssertNotNil(asserted["clientExtensionResults"]?["prf"]?["results"]?["first"]?.stringValue)
    }

    func testAnInjectedCredentialSignsInWithItsKeyAndItsCounterGrows() throws {
        for held in [false, true] {
            let (ops, _d) = try makeOperations(held: held)
            _ = _d
            let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2","transport":"usb","hasResidentKey":true,"hasUserVerification":true,"isUserVerified":true}"#))
            let key = try SigningKeys.generate(.es256)
            let credentialID: [UInt8] = Array("cred1".utf8)
            // Selenium's bindings send padded base64url.
            let padded = Base64URL.encode(credentialID) + "="
            XCTAssertEqual(padded.utf8.count % 4, 0)
            try ops.addVirtualCredential(id, .object([
                ("credentialId", .string(padded)), ("isResidentCredential", true), ("rpId", "example.com"),
                ("privateKey", .string(Base64URL.encode(key.pkcs8))), ("userHandle", .string(Base64URL.encode(Array("user-1".utf8)))),
                ("signCount", 41), ("userName", "alice"),
            ]))
            let answer = try ops.get(.profile(id), CeremonyRequest(options: .text(requestOptionsJSON(userVerification: "required")), origin: origin))
            let response = answer.response["response"]
            let authData = try XCTUnwrap(response?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
            let clientData = try XCTUnwrap(response?["clientDataJSON"]?.stringValue.flatMap(Base64URL.decode))
            let signature = try XCTUnwrap(response?["signature"]?.stringValue.flatMap(Base64URL.decode))
            XCTAssertEqual(answer.response["id"]?.stringValue, Base64URL.encode(credentialID), "discoverable: found without an allow list")
            XCTAssertTrue(key.publicKey.verify(signature: signature, message: authData + Digest.sha256(clientData)), "signed with the injected key")
            XCTAssertEqual(Array(authData[33..<37]), [0, 0, 0, 42], "the counter starts at signCount and grows")
            XCTAssertEqual(authData[32] & 0x04, 0x04, "UV")
            XCTAssertEqual(authData[32] & 0x18, 0, "BE=0 BS=0: the authenticator's defaults")
            let listed = try ops.virtualCredentials(id)
            XCTAssertEqual(listed.count, 1)
            XCTAssertEqual(listed[0]["signCount"], 42)
            XCTAssertEqual(listed[0]["privateKey"]?.stringValue, Base64URL.encode(key.pkcs8), "the PKCS#8 given back")
            XCTAssertEqual(listed[0]["isResidentCredential"], true)
            XCTAssertEqual(listed[0]["userName"], "alice")
            XCTAssertEqual(listed[0]["userDisplayName"], "")
        }
    }

    func testCredentialParametersAreCheckedAndARefusalStoresNothing() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2","transport":"usb"}"#))
        let pkcs8 = Base64URL.encode(try SigningKeys.generate(.es256).pkcs8)
        func params(_ changes: [(String, JSONValue?)]) -> JSONValue {
            var members: [(String, JSONValue)] = [("credentialId", "AQID"), ("isResidentCredential", false), ("rpId", "example.com"),
                                                  ("privateKey", .string(pkcs8)), ("signCount", 0)]
            for (key, value) in changes {
                members.removeAll { $0.0 == key }
                if let value { members.append((key, value)) }
            }
            return .object(members)
        }
        let bad: [[(String, JSONValue?)]] = [
            [("credentialId", nil)], [("credentialId", "not base64url!")], [("credentialId", "")], [("isResidentCredential", nil)],
            [("rpId", "Example.COM")], [("rpId", "https://example.com")], [("privateKey", "AAAA")], [("privateKey", nil)],
            [("signCount", nil)], [("signCount", -1)], [("signCount", 4294967296)], [("signCount", .number(1.5))],
            [("isResidentCredential", true), ("userHandle", "AQ")], // this key has no resident keys
            [("isResidentCredential", true)], [("userHandle", "@@")], [("unknown", 1)],
        ]
        for change in bad {
            XCTAssertEqual(refusal { try ops.addVirtualCredential(id, params(change)) }?.name, .invalidArgument, "\(change)")
        }
        XCTAssertEqual(try ops.virtualCredentials(id).count, 0)
        XCTAssertEqual(refusal { try ops.addVirtualCredential("wd-nope", params([])) }?.code, .notFound)
        XCTAssertEqual(refusal { try ops.addVirtualCredential("default", params([])) }?.code, .notFound, "a provider's profile is no authenticator")
        try ops.addVirtualCredential(id, params([("signCount", .null)]))
        XCTAssertEqual(refusal { try ops.addVirtualCredential(id, params([])) }?.code, .conflict, "one credential ID once")
        let listed = try ops.virtualCredentials(id)
        XCTAssertEqual(listed.map { $0["signCount"] }, [.null], "no signature counter")
        XCTAssertNil(listed[0]["userHandle"], "a server-side credential injected without a user handle")
    }

    func testSetUserVerifiedFalseFailsAUserVerificationRequiredGet() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2","transport":"usb","hasResidentKey":true,"hasUserVerification":true,"isUserVerified":true}"#))
        _ = try ops.create(.profile(id), CeremonyRequest(options: .text(creationOptionsJSON(userVerification: "required")), origin: origin))
        try ops.setVirtualUserVerified(id, .object([("isUserVerified", false)]))
        XCTAssertEqual(try ops.profile(id).authenticator?.isUserVerified, false)
        XCTAssertThrowsError(try ops.get(.profile(id), CeremonyRequest(options: .text(requestOptionsJSON(userVerification: "required")), origin: origin))) { error in
            XCTAssertEqual((error as? OperationError)?.name, .web(.notAllowedError))
        }
        for bad: JSONValue in [.object([]), .object([("isUserVerified", "no")]), .array([]), .object([("isUserVerified", true), ("x", 1)])] {
            XCTAssertEqual(refusal { try ops.setVirtualUserVerified(id, bad) }?.name, .invalidArgument, bad.serialized())
        }
        try ops.setVirtualUserVerified(id, .object([("isUserVerified", true)]))
        _ = try ops.get(.profile(id), CeremonyRequest(options: .text(requestOptionsJSON(userVerification: "required")), origin: origin))
    }

    func testAGetWithNoCredentialOnAWebDriverKeyFailsAtOnceAsChromiumsTestingAPIDoes() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2","transport":"usb","hasResidentKey":true,"hasUserVerification":true,"isUserVerified":true}"#))
        XCTAssertEqual(try ops.profile(id).authenticator?.testingAPI, true)
        let started = Date()
        XCTAssertThrowsError(try ops.get(.profile(id), CeremonyRequest(options: .text(requestOptionsJSON()), origin: origin))) { error in
            XCTAssertEqual((error as? OperationError)?.name, .web(.notAllowedError))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "no sheet: the testing API turns Chrome's UI off")
    }

    func testCredentialPropertiesChangeOneCredentialAndRemovalsRemove() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2","transport":"usb","hasResidentKey":true,"hasUserVerification":true,"isUserVerified":true}"#))
        for n in 1...3 {
            _ = try ops.create(.profile(id), CeremonyRequest(options: .text(creationOptionsJSON(userID: Array("user-\(n)".utf8))), origin: origin))
        }
        let ids = try ops.virtualCredentials(id).compactMap { $0["credentialId"]?.stringValue }
        XCTAssertEqual(ids.count, 3)
        try ops.setVirtualCredentialProperties(id, credentialID: ids[0], .object([("backupEligibility", true), ("backupState", true), ("signCount", 7)]))
        let after = try ops.virtualCredentials(id)
        let changed = try XCTUnwrap(after.first { $0["credentialId"]?.stringValue == ids[0] })
        XCTAssertEqual(changed["backupEligibility"], true)
        XCTAssertEqual(changed["backupState"], true)
        XCTAssertEqual(changed["signCount"], 7)
        XCTAssertTrue(after.filter { $0["credentialId"]?.stringValue != ids[0] }.allSatisfy { $0["backupEligibility"] == false && $0["signCount"] == 0 })
        let response = try ops.get(.profile(id), CeremonyRequest(options: .text(requestOptionsJSON(allow: [Base64URL.decode(ids[0])!])), origin: origin)).response
        let authData = try XCTUnwrap(response["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
        XCTAssertEqual(authData[32] & 0x18, 0x18, "BE=1 BS=1 in the next assertion")
        XCTAssertEqual(Array(authData[33..<37]), [0, 0, 0, 8])
        XCTAssertEqual(refusal { try ops.setVirtualCredentialProperties(id, credentialID: ids[0], .object([("signCount", "7")])) }?.name, .invalidArgument)
        XCTAssertEqual(refusal { try ops.setVirtualCredentialProperties(id, credentialID: "AAAA", .object([])) }?.code, .notFound)

        try ops.removeVirtualCredential(id, credentialID: ids[1])
        XCTAssertEqual(try ops.virtualCredentials(id).count, 2)
        XCTAssertEqual(refusal { try ops.removeVirtualCredential(id, credentialID: ids[1]) }?.code, .notFound)
        try ops.removeAllVirtualCredentials(id)
        XCTAssertEqual(try ops.virtualCredentials(id).count, 0)
    }

    func testRemovingAnAuthenticatorUnplugsItAndDeletesItsCredentials() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try ops.addVirtualAuthenticator(try config(#"{"protocol":"ctap2","transport":"usb","hasResidentKey":true,"hasUserVerification":true,"isUserVerified":true}"#))
        _ = try ops.create(.profile(id), CeremonyRequest(options: .text(creationOptionsJSON()), origin: origin))
        _ = try ops.updateProfile("default", settings: [("authenticators", .array([.string(id)]))], allowPackPath: false)
        _ = try ops.createDevice("desk", settings: [("platform", "chrome-desktop"), ("providers", "default"), ("authenticators", .array([.string(id)]))])
        try ops.removeVirtualAuthenticator(id)
        XCTAssertEqual(try ops.profile("default").authenticators, [])
        XCTAssertEqual(try ops.device("desk").state.authenticators, [])
        XCTAssertThrowsError(try ops.profile(id))
        XCTAssertEqual(try ops.vault.scoped(to: id).allPasskeys().count, 0)
        XCTAssertEqual(refusal { try ops.removeVirtualAuthenticator(id) }?.code, .notFound)
        XCTAssertEqual(refusal { try ops.removeVirtualAuthenticator("default") }?.code, .notFound, "a provider's profile is not removed as an authenticator")
        XCTAssertNoThrow(try ops.profile("default"))
    }
}
