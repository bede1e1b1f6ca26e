import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// Issue 31: a fixture's private key passes Signing's import check (`SigningKeys.publicKey(pkcs8:)`); a key a library
/// would refuse is refused by the record's path, and the import stores nothing.
final class FixtureKeyCheckTests: XCTestCase {
    /// several-rps.json with passkeys[index]'s private key changed by `change`.
    func fixture(changing index: Int, _ change: ([UInt8]) throws -> [UInt8]) throws -> String {
        let path = VaultFixtureTests.fixturesDirectory + "/several-rps.json"
        guard case var .object(root) = try JSONValue.parse(String(contentsOfFile: path, encoding: .utf8)),
              let at = root.firstIndex(where: { $0.0 == "passkeys" }), case var .array(passkeys) = root[at].1,
              case var .object(record) = passkeys[index], let key = record.firstIndex(where: { $0.0 == "privateKey" }),
              let encoded = record[key].1.stringValue, let der = Base64URL.decode(encoded) else { throw XCTSkip("several-rps.json's layout") }
        record[key].1 = .string(Base64URL.encode(try change(der)))
        passkeys[index] = .object(record)
        root[at].1 = .array(passkeys)
        return JSONValue.object(root).serialized()
    }

    func assertRefused(_ text: String, naming path: String, _ fragment: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (vault, _d) = try makeTestVault()
        _ = _d
        XCTAssertThrowsError(try VaultFixture.importFixture(text, into: vault), file: file, line: line) { error in
            XCTAssertEqual((error as? VaultError)?.code, .invalidInput, file: file, line: line)
            XCTAssertTrue("\(error)".contains(path) && "\(error)".contains(fragment), "\(error)", file: file, line: line)
        }
        XCTAssertEqual(try vault.allPasskeys(), [], file: file, line: line)
        XCTAssertEqual(try vault.allPasswords(), [], file: file, line: line)
    }

    func testAFixtureP256KeyWhosePointIsAnotherKeysIsRefusedByItsRecord() throws {
        // passkeys[1] is ES256.
        try assertRefused(try fixture(changing: 1) { _ in try HostileKeys.p256WithAnotherKeysPoint() },
                          naming: "passkeys[1].privateKey", "not its scalar")
    }

    func testAFixtureRSAKeyWithExponentZeroOrEvenIsRefusedByItsRecord() throws {
        // passkeys[0] is RS256.
        for e: [UInt8] in [[0], [0x01, 0x00, 0x00]] {
            try assertRefused(try fixture(changing: 0) { try HostileKeys.rsa($0, replacing: [2: e]) }, naming: "passkeys[0].privateKey", "exponent")
        }
    }

    func testTheUnchangedFixtureStillImports() throws {
        let (vault, _d) = try makeTestVault()
        _ = _d
        try VaultFixture.importFixture(try fixture(changing: 0) { $0 }, into: vault)
        XCTAssertEqual(try vault.allPasskeys().count, 5)
    }
}
