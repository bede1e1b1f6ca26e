import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

/// The vault's attestation CA (migration 7): one root a vault, one batch a model, kept across opens, shared by
/// racing openers, sealed at rest.
final class AttestationVaultTests: XCTestCase {
    /// "YubiKey 5 Series with NFC" in FIDO MDS3 (Yubico's AAGUID list,
    /// https://support.yubico.com/hc/en-us/articles/360016648959).
    static let yubiKey = AAGUID.parse("2fc0579f-8113-47ea-b116-bb5a8db9202a")!
    static let other = AAGUID.parse("00112233-4455-6677-8899-aabbccddeeff")!

    func testOneRootPerVaultAndEveryModelsBatchChainsToIt() throws {
        try XCTSkipIf(OpenSSLCommand.path == nil, "the openssl tool is not installed")
        let (vault, _) = try makeTestVault()
        defer { vault.close() }
        let a = try vault.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB", transports: [.usb, .nfc])
        let b = try vault.attestationBatch(aaguid: Self.other, vendor: "Example")
        XCTAssertNotEqual(a.certificate, b.certificate)
        XCTAssertNotEqual(a.key.pkcs8, b.key.pkcs8)
        let root = try vault.attestationRoot()
        let openssl = OpenSSLCommand()
        for batch in [a, b] {
            let result = try openssl.verifies(batch.certificate, root: root, at: 1_800_000_000)
            XCTAssertTrue(result.ok, result.output)
        }
        XCTAssertEqual(try rowCount(vault, "attestation_root"), 1)
        XCTAssertEqual(try rowCount(vault, "attestation_batches"), 2)
    }

    func testTheSameModelGetsTheSameBatchAndRootAcrossReopen() throws {
        let directory = TemporaryDirectory()
        let (first, _) = try makeTestVault(in: directory)
        let batch = try first.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB")
        let root = try first.attestationRoot()
        first.close()
        for held in [false, true] {
            let (vault, _) = try makeTestVault(in: directory, held: held)
            // The root is asked for after the batch in one open and before it in the other.
            if held { XCTAssertEqual(try vault.attestationRoot(), root) }
            // Another vendor does not make another batch: the model's first one stays.
            let again = try vault.attestationBatch(aaguid: Self.yubiKey, vendor: "Someone Else")
            XCTAssertEqual(again.certificate, batch.certificate)
            XCTAssertEqual(again.key.pkcs8, batch.key.pkcs8)
            XCTAssertEqual(try vault.attestationRoot(), root)
            vault.close()
        }
    }

    func testDifferentVaultsHaveDifferentRoots() throws {
        let (one, _) = try makeTestVault()
        let (two, _) = try makeTestVault()
        defer { one.close(); two.close() }
        XCTAssertNotEqual(try one.attestationRoot(), try two.attestationRoot())
        XCTAssertNotEqual(try one.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB").certificate,
                          try two.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB").certificate)
    }

    func testPrivateKeysAreSealedAndCertificatesInTheClear() throws {
        let directory = TemporaryDirectory()
        let (vault, _) = try makeTestVault(in: directory)
        let batch = try vault.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB")
        let rootKey = try XCTUnwrap(vault.connection.attestationRoot).key.pkcs8
        let rootCertificate = try vault.attestationRoot()
        vault.close()
        let bytes = ["vault.db", "vault.db-wal"].flatMap { fileBytes(directory.file($0)) }
        XCTAssertTrue(contains(bytes, rootCertificate) && contains(bytes, batch.certificate), "the certificates are stored in the clear")
        for (name, pkcs8) in [("root", rootKey), ("batch", batch.key.pkcs8)] {
            XCTAssertEqual(pkcs8.count, 138)
            XCTAssertFalse(contains(bytes, pkcs8), "\(name)'s PKCS#8 in the clear")
            XCTAssertFalse(contains(bytes, Array(pkcs8[36..<68])), "\(name)'s private scalar in the clear")
        }
    }

    func testOpenersRacingOnOneVaultAllGetOneRootAndOneBatch() throws {
        let directory = TemporaryDirectory()
        try makeTestVault(in: directory).0.close()
        let path = directory.file("vault.db")
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                let vault = try Vault.open(path: path, key: .raw(Array(repeating: 7, count: 32)))
                defer { vault.close() }
                let batch = try vault.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB")
                results.add(batch.certificate + (try vault.attestationRoot()))
            } catch {
                results.add(Array("\(error)".utf8))
            }
        }
        XCTAssertEqual(results.all.count, 6)
        XCTAssertEqual(Set(results.all).count, 1, "every opener saw the same root and batch")
        let (vault, _) = try makeTestVault(in: directory)
        defer { vault.close() }
        XCTAssertEqual(try rowCount(vault, "attestation_root"), 1)
        XCTAssertEqual(try rowCount(vault, "attestation_batches"), 1)
    }

    func testACertificateChangedInTheFileIsReportedAsDamage() throws {
        let directory = TemporaryDirectory()
        let (vault, _) = try makeTestVault(in: directory)
        let batch = try vault.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB")
        // Another certificate of the same vault, in the batch's row.
        let stranger = try vault.attestationBatch(aaguid: Self.other, vendor: "Example")
        try vault.locked { () throws(VaultError) in
            try vault.db.query("UPDATE attestation_batches SET certificate = ? WHERE aaguid = ?", [.blob(stranger.certificate), .blob(batch.aaguid)])
        }
        vault.close()
        let (reopened, _) = try makeTestVault(in: directory)
        defer { reopened.close() }
        XCTAssertThrowsError(try reopened.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB")) { error in
            XCTAssertEqual((error as? VaultError)?.code, .corrupt)
        }
        XCTAssertEqual(try reopened.attestationBatch(aaguid: Self.other, vendor: "Example").certificate, stranger.certificate)
    }

    func testRefusedInputLeavesTheVaultWithoutARoot() throws {
        let (vault, _) = try makeTestVault()
        defer { vault.close() }
        for (aaguid, vendor, country) in [(Array(Self.yubiKey.prefix(8)), "V", "US"), (Self.yubiKey, String(repeating: "v", count: 65), "US"),
                                          (Self.yubiKey, "", "US"), (Self.yubiKey, "V", "Sweden")] {
            XCTAssertThrowsError(try vault.attestationBatch(aaguid: aaguid, vendor: vendor, country: country)) { error in
                XCTAssertEqual((error as? VaultError)?.code, .invalidInput, "\(error)")
            }
        }
        XCTAssertEqual(try rowCount(vault, "attestation_root"), 0, "the root made for a refused batch was rolled back")
        XCTAssertEqual(try rowCount(vault, "attestation_batches"), 0)
        XCTAssertNil(vault.connection.attestationRoot)
    }

    func testABatchMadeInATransactionThatRollsBackIsNotRemembered() throws {
        struct Abandon: Error {}
        let directory = TemporaryDirectory()
        let (vault, _) = try makeTestVault(in: directory)
        XCTAssertThrowsError(try vault.atomically { () throws -> Void in
            _ = try vault.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB")
            throw Abandon()
        })
        XCTAssertEqual(try rowCount(vault, "attestation_batches"), 0)
        let batch = try vault.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB")
        let root = try vault.attestationRoot()
        vault.close()
        let (reopened, _) = try makeTestVault(in: directory)
        defer { reopened.close() }
        XCTAssertEqual(try reopened.attestationBatch(aaguid: Self.yubiKey, vendor: "Yubico AB").certificate, batch.certificate)
        XCTAssertEqual(try reopened.attestationRoot(), root)
    }

    private func rowCount(_ vault: Vault, _ table: String) throws -> Int64 {
        try vault.locked { () throws(VaultError) in
            var count: Int64 = -1
            try vault.db.query("SELECT count(*) FROM \(table)") { count = $0.int(0) }
            return count
        }
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0] == needle[0] && haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}

/// Outcomes gathered from several threads.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [[UInt8]] = []
    func add(_ value: [UInt8]) { lock.lock(); values.append(value); lock.unlock() }
    var all: [[UInt8]] { lock.lock(); defer { lock.unlock() }; return values }
}
