import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import Vault

final class VaultFixtureTests: XCTestCase {
    static var fixturesDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("vault-fixtures").path
    }

    func shippedFixtures() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixturesDirectory)
            .filter { $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 3, "the shipped fixtures")
        return names.map { Self.fixturesDirectory + "/" + $0 }
    }

    func testShippedFixturesRoundTripByteForByte() throws {
        for path in try shippedFixtures() {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let (vault, _) = try makeTestVault()
            try VaultFixture.importFixture(text, into: vault)
            XCTAssertEqual(try VaultFixture.export(vault, includeSecrets: true), text, path)
        }
    }

    func testExportOfAnEngineMadeVaultReimportsToTheSameExport() throws {
        let (vault, _) = try makeTestVault()
        let text = try String(contentsOfFile: try shippedFixtures().last!, encoding: .utf8)
        try VaultFixture.importFixture(text, into: vault)
        try vault.savePassword(origin: "https://new.example", username: "zoe", password: "p\"w\n", at: Date(vaultMillis: 1_800_000_000_123))
        let exported = try VaultFixture.export(vault, includeSecrets: true)
        let (copy, _) = try makeTestVault()
        try VaultFixture.importFixture(exported, into: copy)
        XCTAssertEqual(try VaultFixture.export(copy, includeSecrets: true), exported)
    }

    /// A fixture with a key's CTAP 2.1 state and a U2F-era credential under its AppID: its passkey members replaced.
    func ctapFixture(_ change: (inout [(String, JSONValue)], inout [(String, JSONValue)]) -> Void) throws -> String {
        let text = try String(contentsOfFile: try shippedFixtures().last!, encoding: .utf8)
        let document = try JSONValue.parse(text)
        let first = try XCTUnwrap(document["passkeys"]?.arrayValue?.first?.objectValue)
        var protected = first + [("credProtect", 2), ("credBlob", .string(Base64URL.encode(Array("blob".utf8))))]
        var u2f = first.filter { !["credentialId", "rpId", "userHandle", "discoverable"].contains($0.0) } + [
            ("credentialId", .string(Base64URL.encode(Array(repeating: 7, count: 32)))), ("rpId", "https://example.com/app-id.json"),
            ("userHandle", ""), ("discoverable", false)]
        change(&protected, &u2f)
        return JSONValue.object([("format", "credemu-vault"), ("version", 1), ("passwords", .array([])),
                                 ("passkeys", .array([.object(protected), .object(u2f)]))]).serialized()
    }

    func testAKeysCredProtectCredBlobAndAU2FCredentialUnderItsAppIDRoundTrip() throws {
        let (vault, _) = try makeTestVault()
        try VaultFixture.importFixture(try ctapFixture { _, _ in }, into: vault)
        let exported = try VaultFixture.export(vault, includeSecrets: true)
        let passkeys = try XCTUnwrap(try JSONValue.parse(exported)["passkeys"]?.arrayValue)
        XCTAssertEqual(passkeys.compactMap { $0["credProtect"] }, [2])
        XCTAssertEqual(passkeys.compactMap { $0["credBlob"]?.stringValue }, [Base64URL.encode(Array("blob".utf8))])
        XCTAssertTrue(passkeys.contains { $0["rpId"] == "https://example.com/app-id.json" && $0["userHandle"] == "" })
        let (copy, _) = try makeTestVault()
        try VaultFixture.importFixture(exported, into: copy)
        XCTAssertEqual(try VaultFixture.export(copy, includeSecrets: true), exported)
    }

    func testAnAppIDCredentialMustBeNonDiscoverableAndTheCTAPStateInBounds() throws {
        let cases: [(String, (inout [(String, JSONValue)], inout [(String, JSONValue)]) -> Void)] = [
            ("discoverable", { _, u2f in u2f = u2f.filter { $0.0 != "discoverable" } + [("discoverable", true)] }),
            ("rpId", { _, u2f in u2f = u2f.filter { $0.0 != "rpId" } + [("rpId", "http://example.com/app-id.json")] }),
            ("credProtect", { p, _ in p = p.filter { $0.0 != "credProtect" } + [("credProtect", 4)] }),
            ("credBlob", { p, _ in p = p.filter { $0.0 != "credBlob" } + [("credBlob", .string(Base64URL.encode(Array(repeating: 1, count: 33))))] }),
            ("userHandle", { p, _ in p = p.filter { $0.0 != "userHandle" } + [("userHandle", "")] }),
        ]
        for (fragment, change) in cases {
            let (vault, _) = try makeTestVault()
            XCTAssertThrowsError(try VaultFixture.importFixture(try ctapFixture(change), into: vault)) {
                XCTAssertTrue("\($0)".contains(fragment), "\($0)")
            }
            XCTAssertTrue(try vault.allPasskeys().isEmpty, fragment)
        }
    }

    func testABadRecordImportsNothing() throws {
        let (vault, _) = try makeTestVault()
        let good = try String(contentsOfFile: try shippedFixtures().last!, encoding: .utf8)
        let bad = good.replacingOccurrences(of: "\"algorithm\": \"ES256\"", with: "\"algorithm\": \"EdDSA\"")
        XCTAssertNotEqual(bad, good)
        XCTAssertThrowsError(try VaultFixture.importFixture(bad, into: vault)) { error in
            XCTAssertEqual((error as? VaultError)?.code, .invalidInput)
            XCTAssertTrue("\(error)".contains("privateKey"), "\(error)")
        }
        XCTAssertEqual(try vault.allPasskeys(), [])
        XCTAssertEqual(try vault.allPasswords(), [])
    }

    func testImportingTwiceCollidesAndLeavesTheFirstImport() throws {
        let (vault, _) = try makeTestVault()
        let text = try String(contentsOfFile: try shippedFixtures().last!, encoding: .utf8)
        try VaultFixture.importFixture(text, into: vault)
        let before = try VaultFixture.export(vault, includeSecrets: true)
        XCTAssertThrowsError(try VaultFixture.importFixture(text, into: vault)) { XCTAssertEqual(($0 as? VaultError)?.code, .duplicate) }
        XCTAssertEqual(try VaultFixture.export(vault, includeSecrets: true), before)
    }

    func testMalformedFixturesNameTheirFault() throws {
        let (vault, _) = try makeTestVault()
        let cases: [(String, String)] = [
            ("{", "not valid JSON"),
            (#"{"format": "other", "version": 1}"#, "fixture.format"),
            (#"{"format": "credemu-vault", "version": 2}"#, "fixture.version"),
            (#"{"format": "credemu-vault", "version": 1, "extra": 1}"#, "unknown member"),
            (#"{"format": "credemu-vault", "version": 1, "passwords": [{"origin": "https://x", "username": "a", "password": "b", "created": "yesterday"}]}"#, "passwords[0].created"),
        ]
        for (text, fragment) in cases {
            XCTAssertThrowsError(try VaultFixture.importFixture(text, into: vault)) { XCTAssertTrue("\($0)".contains(fragment), "\($0)") }
        }
    }

    func testAAGUIDsReadOnlyInTheSchemaForm() {
        XCTAssertEqual(AAGUID.parse("EA9B8D66-4D01-1D21-3CE4-B6B48CB575D4").map(AAGUID.format), "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4")
        for bad in ["ea9b8d664d011d213ce4b6b48cb575d4", "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d", "ea9b8d66-4d01-1d21-3ce4b-6b48cb575d4",
                    "ea9b8d66-4d01-1d21-3ce4-b6b48cb575dg", "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d\u{FF11}", ""] {
            XCTAssertNil(AAGUID.parse(bad), bad)
        }
    }

    func testHexRoundTripsAndRefusesNonHex() {
        XCTAssertEqual(Hex.encode([0x00, 0x7F, 0xAB, 0xFF]), "007fabff")
        XCTAssertEqual(Hex.decode("007FabFF"), [0x00, 0x7F, 0xAB, 0xFF])
        for bad in ["0", "0g", "\u{FF10}\u{FF10}", "0 "] { XCTAssertNil(Hex.decode(bad), bad) }
    }
}
