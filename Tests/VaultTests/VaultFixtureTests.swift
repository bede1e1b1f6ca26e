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
