import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import CredemuCLI

/// Whole commands in-process on a temporary vault, their output checked as a caller reads it.
final class CLIEndToEndTests: XCTestCase {
    let origin = "https://shop.example.com"

    func json(_ run: CLIRun, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        XCTAssertEqual(run.status, .success, run.output + run.errors, file: file, line: line)
        return try JSONValue.parse(run.output)
    }

    func bytes(_ value: JSONValue?) throws -> [UInt8] { try XCTUnwrap(value?.stringValue.flatMap(Base64URL.decode)) }

    func testARegistrationAndASignInVerifyAsAnRPChecksThem() throws {
        let cli = CLIHarness()
        let created = try json(cli.run(["create", "--origin", origin], input: creationOptionsJSON(challenge: Array(repeating: 1, count: 32))))
        let clientData = try JSONValue.parse(try bytes(created["response"]?["clientDataJSON"]))
        XCTAssertEqual(clientData["type"], "webauthn.create")
        XCTAssertEqual(clientData["origin"], .string(origin))
        XCTAssertEqual(clientData["challenge"], .string(Base64URL.encode(Array(repeating: 1, count: 32))))
        let attestation = try CBOR.decode(try bytes(created["response"]?["attestationObject"]))
        let authData = try AuthenticatorData(bytes: try XCTUnwrap(attestation["authData"]?.bytesValue))
        XCTAssertEqual(authData.rpIDHash, Digest.sha256("example.com".utf8))
        let credential = try XCTUnwrap(authData.attestedCredentialData)
        XCTAssertEqual(Base64URL.encode(credential.credentialID), created["id"]?.stringValue)

        let options = cli.directory.file("get.json")
        try requestOptionsJSON(challenge: Array(repeating: 2, count: 32), allow: [credential.credentialID]).write(toFile: options, atomically: true, encoding: .utf8)
        let got = try json(cli.run(["get", "--origin", origin, "--options", options]))
        XCTAssertEqual(got["id"], created["id"])
        let signedData = try bytes(got["response"]?["authenticatorData"])
        let signedClientData = try bytes(got["response"]?["clientDataJSON"])
        XCTAssertEqual(try JSONValue.parse(signedClientData)["type"], "webauthn.get")
        XCTAssertTrue(credential.publicKey.verify(signature: try bytes(got["response"]?["signature"]),
                                                  message: signedData + Digest.sha256(signedClientData)), "the assertion verifies under the registered key")

        let listed = try json(cli.run(["vault", "list"]))
        XCTAssertEqual(listed.arrayValue?.count, 1)
    }

    func testARefusedCeremonyPrintsItsWebAuthnErrorAndLeavesTheVaultAsItWas() throws {
        let cli = CLIHarness()
        let created = try json(cli.run(["create", "--origin", origin], input: creationOptionsJSON()))
        let id = try bytes(created["id"])
        let before = try XCTUnwrap(cli.run(["vault", "export", "--include-secrets"]).output)
        let refused = cli.run(["create", "--origin", origin], input: creationOptionsJSON(userID: Array("user-2".utf8), exclude: [id]))
        XCTAssertEqual(refused.status, .webAuthnError)
        XCTAssertEqual(try JSONValue.parse(refused.output)["error"]?["name"], "InvalidStateError")
        XCTAssertEqual(cli.run(["vault", "export", "--include-secrets"]).output, before)
    }

    func testAWrongKeyIsAVaultErrorWithItsCode() throws {
        let cli = CLIHarness()
        _ = try json(cli.run(["vault", "list"]))
        try Data(repeating: 0, count: 32).write(to: URL(fileURLWithPath: cli.vault + ".key"))
        let run = cli.run(["vault", "list"])
        XCTAssertEqual(run.status, .vaultError)
        XCTAssertEqual(try JSONValue.parse(run.output)["error"]?["code"], "wrongKey")
    }

    func testProfileSettingsGoThroughAndABadOneIsAConfigurationError() throws {
        let cli = CLIHarness()
        let made = try json(cli.run(["profile", "create", "alice", "--pack", "apple", "--platform", "ios", "--osVersion", "18.2",
                                     "--relatedOrigins", #"{"example.com": ["https://example.co.uk"]}"#]))
        XCTAssertEqual(made["pack"], "apple")
        XCTAssertEqual(made["relatedOrigins"]?["example.com"], .array(["https://example.co.uk"]))
        let bad = cli.run(["profile", "set", "alice", "--passcodeSet", "maybe"])
        XCTAssertEqual(bad.status, .usage)
        XCTAssertEqual(try JSONValue.parse(bad.output)["error"]?["name"], "InvalidProfileSetting")
        XCTAssertEqual(bad.errors, "credemu: profile.passcodeSet must be true or false, not \"maybe\".\n")
        let unset = try json(cli.run(["profile", "set", "alice", "--osVersion", "null"]))
        XCTAssertEqual(unset["osVersion"] ?? .null, .null)
        XCTAssertEqual(try json(cli.run(["--profile", "alice", "profile", "show"]))["platform"], "ios")
    }

    func testVaultExportLeavesSecretsOutUnlessAsked() throws {
        let cli = CLIHarness()
        _ = try json(cli.run(["password", "save", "--origin", origin, "--username", "alice"], input: "s3cret\n"))
        let plain = cli.run(["vault", "export"])
        XCTAssertEqual(plain.status, .success)
        XCTAssertFalse(plain.output.contains("s3cret"))
        XCTAssertTrue(plain.errors.contains("--include-secrets"))
        let full = try json(cli.run(["vault", "export", "--include-secrets"]))
        XCTAssertEqual(full["passwords"]?.arrayValue?.first?["password"], "s3cret")
    }

    func testTheClockAndTheUsersDecisionsTakeTheirDefaultSubcommands() throws {
        let cli = CLIHarness()
        XCTAssertEqual(try json(cli.run(["clock", "set", "2026-11-29T10:00:00Z"]))["now"], "2026-11-29T10:00:00Z")
        XCTAssertEqual(try json(cli.run(["clock", "advance", "90s"]))["now"], "2026-11-29T10:01:30Z")
        XCTAssertEqual(try json(cli.run(["clock"]))["now"], "2026-11-29T10:01:30Z")
        _ = try json(cli.run(["user", "next", "cancel", "accept"]))
        XCTAssertEqual(try json(cli.run(["user"])), try json(cli.run(["user", "pending"])))
        let refused = cli.run(["create", "--origin", origin], input: creationOptionsJSON())
        XCTAssertEqual(refused.status, .webAuthnError, "the queued cancel answers the prompt")
        XCTAssertEqual(try JSONValue.parse(refused.output)["error"]?["name"], "NotAllowedError")
    }
}
