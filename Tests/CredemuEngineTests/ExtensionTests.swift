import CredemuTestSupport
import Foundation
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// The prf and largeBlob extensions (WebAuthn L3 §10.1.4, §10.1.5), answered as each pack's knobs say, in
/// Chromium's output forms; `Tests/interop/test_extensions.py` checks the PRF values against Python's hmac.
final class ExtensionTests: XCTestCase {
    func outputs(_ results: [(String, JSONValue)]) -> JSONValue { .object(results) }
    let salt = Base64URL.encode(Array("salt one".utf8))
    let salt2 = Base64URL.encode(Array("salt two".utf8))

    func testGPMEvaluatesThePRFAtCreationAndGivesTheSameResultsAtAssertion() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let created = try gpm.modalCreate(extensions: .object([("prf", .object([("eval", .object([("first", .string(salt))]))]))]))
        let prf = try XCTUnwrap(outputs(created.clientExtensionResults)["prf"])
        XCTAssertEqual(prf["enabled"], true)
        let first = try XCTUnwrap(prf["results"]?["first"]?.stringValue.flatMap(Base64URL.decode))
        XCTAssertEqual(first.count, 32)
        XCTAssertNil(prf["results"]?["second"])
        let got = try gpm.signIn(allow: [created.credentialID], extensions: .object([("prf", .object([
            ("eval", .object([("first", .string(salt)), ("second", .string(salt2))]))]))]))
        let results = try XCTUnwrap(outputs(got.clientExtensionResults)["prf"]?["results"])
        XCTAssertEqual(results["first"]?.stringValue, Base64URL.encode(first), "the PRF is a function of the credential and the input")
        XCTAssertNotEqual(results["second"], results["first"])
        XCTAssertNil(outputs(got.clientExtensionResults)["prf"]?["enabled"], "enabled is reported only at creation")
        // The value is HMAC-SHA-256 of the passkey's sealed secret over SHA-256("WebAuthn PRF" || 0x00 || salt).
        let secret = try XCTUnwrap(gpm.vault.scoped(to: "user").prfSecret(for: created.credentialID))
        XCTAssertEqual(Digest.hmacSHA256(key: secret, Digest.sha256(Array("WebAuthn PRF".utf8) + [0] + Array("salt one".utf8))), first)
    }

    func testEvalByCredentialWinsOverEvalAndEachCredentialHasItsOwnPRF() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let a = try gpm.modalCreate(user: "a@example.com", extensions: .object([("prf", .object([]))]))
        let b = try gpm.modalCreate(user: "b@example.com", extensions: .object([("prf", .object([]))]))
        XCTAssertEqual(outputs(a.clientExtensionResults)["prf"], .object([("enabled", true)]), "no eval, no results")
        func evaluate(_ allow: [[UInt8]], _ inputs: JSONValue) throws -> String? {
            try outputs(gpm.signIn(allow: allow, extensions: .object([("prf", inputs)])).clientExtensionResults)["prf"]?["results"]?["first"]?.stringValue
        }
        let onA = try evaluate([a.credentialID], .object([("eval", .object([("first", .string(salt))]))]))
        let onB = try evaluate([b.credentialID], .object([("eval", .object([("first", .string(salt))]))]))
        XCTAssertNotEqual(onA, onB)
        let byCredential = try evaluate([a.credentialID], .object([("eval", .object([("first", .string(salt2))])),
                                                                   ("evalByCredential", .object([(a.credentialID.base64url, .object([("first", .string(salt))]))]))]))
        XCTAssertEqual(byCredential, onA, "the entry for the credential returned is used, not eval")
        let got = try gpm.signIn(allow: [a.credentialID], extensions: .object([("prf", .object([]))]))
        XCTAssertEqual(outputs(got.clientExtensionResults)["prf"], .object([]), "prf without inputs: an empty output, as Chromium")
    }

    func testProvidersAnswerThePRFAsTheirPacksSay() throws {
        let inputs: JSONValue = .object([("prf", .object([("eval", .object([("first", .string(salt))]))]))])
        // Bitwarden's client answers credProps only; the generic provider evaluates at assertion only.
        for (pack, created, asserted) in [("bitwarden", nil, nil), ("keepassxc", nil, nil),
                                          ("generic-third-party", JSONValue.object([("enabled", true)]), "results")] as [(String, JSONValue?, String?)] {
            let scenario = try ProviderScenario(pack: pack)
            let response = try scenario.modalCreate(extensions: inputs)
            XCTAssertEqual(outputs(response.clientExtensionResults)["prf"], created, pack)
            let got = try scenario.signIn(allow: [response.credentialID], extensions: inputs)
            XCTAssertEqual(outputs(got.clientExtensionResults)["prf"]?.objectValue?.first?.0, asserted, pack)
        }
    }

    func testLargeBlobIsWrittenAndReadBackWhereTheProviderStoresThem() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let created = try gpm.modalCreate(extensions: .object([("largeBlob", .object([("support", "required")]))]))
        XCTAssertEqual(outputs(created.clientExtensionResults)["largeBlob"], .object([("supported", true)]))
        let id = [created.credentialID]
        let nothing = try gpm.signIn(allow: id, extensions: .object([("largeBlob", .object([("read", true)]))]))
        XCTAssertEqual(outputs(nothing.clientExtensionResults)["largeBlob"], .object([]), "nothing written yet: no blob, as Chromium")
        let blob = Base64URL.encode(Array("a certificate".utf8))
        let write = try gpm.signIn(allow: id, extensions: .object([("largeBlob", .object([("write", .string(blob))]))]))
        XCTAssertEqual(outputs(write.clientExtensionResults)["largeBlob"], .object([("written", true)]))
        let read = try gpm.signIn(allow: id, extensions: .object([("largeBlob", .object([("read", true)]))]))
        XCTAssertEqual(outputs(read.clientExtensionResults)["largeBlob"], .object([("blob", .string(blob))]))
        // Chrome's renderer refuses a blob over kMaxLargeBlobSize before GPM is asked (Engine+BlinkChecks).
        let overBlink = Base64URL.encode(Array(repeating: 7, count: 2049))
        let blink = gpm.failure { try gpm.signIn(allow: id, extensions: .object([("largeBlob", .object([("write", .string(overBlink))]))])) }
        XCTAssertEqual(blink?.error, .notSupported("The 'largeBlob' extension's 'write' parameter exceeds the maximum allowed size (2kb)"))
        XCTAssertEqual(try gpm.vault.scoped(to: "user").largeBlob(for: created.credentialID), Array("a certificate".utf8))
        // Elsewhere (Apple in Safari) the vault's own bound: a blob beyond it is not written.
        let apple = try ProviderScenario(pack: "apple", platform: .safari)
        let stored = try apple.modalCreate(extensions: .object([("largeBlob", .object([("support", "required")]))])).credentialID
        let atLimit = Base64URL.encode(Array(repeating: 8, count: Vault.largeBlobLimit))
        let written = try apple.signIn(allow: [stored], extensions: .object([("largeBlob", .object([("write", .string(atLimit))]))]))
        XCTAssertEqual(outputs(written.clientExtensionResults)["largeBlob"], .object([("written", true)]))
        let tooLarge = Base64URL.encode(Array(repeating: 7, count: Vault.largeBlobLimit + 1))
        let refused = try apple.signIn(allow: [stored], extensions: .object([("largeBlob", .object([("write", .string(tooLarge))]))]))
        XCTAssertEqual(outputs(refused.clientExtensionResults)["largeBlob"], .object([("written", false)]))
        XCTAssertEqual(try apple.vault.scoped(to: "user").largeBlob(for: stored), Array(repeating: 8, count: Vault.largeBlobLimit))
    }

    func testAProviderWithoutLargeBlobsSaysSoAndIsNotUsedWhenTheRPRequiresThem() throws {
        let generic = try ProviderScenario(pack: "generic-third-party")
        let created = try generic.modalCreate(extensions: .object([("largeBlob", .object([("support", "preferred")]))]))
        XCTAssertEqual(outputs(created.clientExtensionResults)["largeBlob"], .object([("supported", false)]))
        let write = try generic.signIn(allow: [created.credentialID], extensions: .object([("largeBlob", .object([("write", "AQID")]))]))
        XCTAssertEqual(outputs(write.clientExtensionResults)["largeBlob"], .object([("written", false)]))
        let required = generic.failure { try generic.modalCreate(user: "b@example.com", extensions: .object([("largeBlob", .object([("support", "required")]))])) }
        XCTAssertEqual(required?.reason, .largeBlobUnsupported)
        XCTAssertEqual(required?.error.name, .notAllowedError)
        XCTAssertEqual(try generic.passkeys().count, 1, "nothing was created")
        let bitwarden = try ProviderScenario(pack: "bitwarden")
        let response = try bitwarden.modalCreate(extensions: .object([("largeBlob", .object([("support", "preferred")])), ("credProps", true)]))
        XCTAssertEqual(response.clientExtensionResults.map(\.0), ["credProps"], "Bitwarden's client answers credProps only")
    }

    func testTheClientRefusesExtensionInputsAsChromiumDoes() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let created = try gpm.modalCreate()
        let cases: [(String, () throws -> Any, WebAuthnError.Name)] = [
            ("read at creation", { try gpm.modalCreate(user: "x@example.com", extensions: .object([("largeBlob", .object([("read", true)]))])) }, .notSupportedError),
            ("evalByCredential at creation", { try gpm.modalCreate(user: "x@example.com", extensions: .object([("prf", .object([("evalByCredential", .object([]))]))])) }, .notSupportedError),
            ("support at assertion", { try gpm.signIn(allow: [created.credentialID], extensions: .object([("largeBlob", .object([("support", "required")]))])) }, .notSupportedError),
            ("read and write", { try gpm.signIn(allow: [created.credentialID], extensions: .object([("largeBlob", .object([("read", true), ("write", "AA")]))])) }, .notSupportedError),
            ("write without one allowed credential", { try gpm.signIn(extensions: .object([("largeBlob", .object([("write", "AA")]))])) }, .notSupportedError),
            ("evalByCredential without an allow list", { try gpm.signIn(extensions: .object([("prf", .object([("evalByCredential", .object([("AQID", .object([("first", "AA")]))]))]))])) }, .notSupportedError),
            ("evalByCredential key not base64url", { try gpm.signIn(allow: [created.credentialID], extensions: .object([("prf", .object([("evalByCredential", .object([("*", .object([("first", "AA")]))]))]))])) }, .syntaxError),
            ("evalByCredential key not allowed", { try gpm.signIn(allow: [created.credentialID], extensions: .object([("prf", .object([("evalByCredential", .object([("AQID", .object([("first", "AA")]))]))]))])) }, .syntaxError),
        ]
        for (label, body, name) in cases {
            XCTAssertEqual(gpm.failure(body)?.error.name, name, label)
        }
        XCTAssertThrowsError(try RequestOptions(json: requestOptionsJSON(extensions: .object([("prf", .object([("eval", .object([("first", "*")]))]))])))) {
            XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError)
            XCTAssertTrue("\($0)".contains("publicKey.extensions.prf.eval.first"), "\($0)")
        }
        XCTAssertEqual(try gpm.passkeys().count, 1)
    }

    func testAPasskeyImportedWithoutAPRFSecretGetsOneAtItsFirstEvaluation() throws {
        let gpm = try ProviderScenario(pack: "gpm")
        let key = try SigningKeys.generate(.es256)
        let record = PasskeyRecord(credentialID: Array(repeating: 4, count: 16), rpID: gpm.rpID, userHandle: [1], userName: "alice@example.com",
                                   displayName: "A", algorithm: .es256, publicKey: key.publicKey, createdAt: gpm.clock.now())
        try gpm.vault.scoped(to: "user").insertPasskey(record, privateKey: key.pkcs8)
        XCTAssertNil(try gpm.vault.scoped(to: "user").prfSecret(for: record.credentialID))
        let inputs: JSONValue = .object([("prf", .object([("eval", .object([("first", .string(salt))]))]))])
        let first = try gpm.signIn(allow: [record.credentialID], extensions: inputs)
        let again = try gpm.signIn(allow: [record.credentialID], extensions: inputs)
        XCTAssertNotNil(try gpm.vault.scoped(to: "user").prfSecret(for: record.credentialID))
        XCTAssertEqual(outputs(first.clientExtensionResults)["prf"], outputs(again.clientExtensionResults)["prf"])
    }
}
