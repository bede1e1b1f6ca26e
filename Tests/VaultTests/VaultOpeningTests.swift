import CredemuTestSupport
import Foundation
import Signing
import WebAuthn
import XCTest
@testable import Vault

final class VaultOpeningTests: XCTestCase {
    func testKeyFileIsCreatedWithMode0600AndReopens() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("v/vault.db")
        let keyFile = Vault.defaultKeyFile(forVault: path)
        let vault = try Vault.open(path: path, key: .keyFile(path: keyFile))
        try vault.savePassword(origin: "https://example.com", username: "alice", password: "s3cret", at: Date())
        vault.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let reopened = try Vault.open(path: path, key: .keyFile(path: keyFile))
        XCTAssertEqual(try reopened.password(for: try reopened.allPasswords()[0]), "s3cret")
    }

    func testAKeyFileOthersCanReadIsRefused() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("vault.db")
        try Vault.open(path: path, key: .keyFile(path: dir.file("vault.key"))).close()
        chmod(dir.file("vault.key"), 0o644)
        XCTAssertThrowsError(try Vault.open(path: path, key: .keyFile(path: dir.file("vault.key")))) { error in
            XCTAssertEqual((error as? VaultError)?.code, .keyUnavailable)
            XCTAssertTrue("\(error)".contains("chmod 600"))
        }
        chmod(dir.file("vault.key"), 0o600)
        XCTAssertNoThrow(try Vault.open(path: path, key: .keyFile(path: dir.file("vault.key"))).close())
    }

    func testWrongKeyFailsCleanlyAndLeavesTheFileUntouched() throws {
        let (vault, dir) = try makeTestVault()
        try vault.savePassword(origin: "https://example.com", username: "alice", password: "pw", at: Date())
        vault.close()
        let before = fileBytes(dir.file("vault.db"))
        XCTAssertThrowsError(try Vault.open(path: dir.file("vault.db"), key: .raw(Array(repeating: 8, count: 32)))) { error in
            XCTAssertEqual((error as? VaultError)?.code, .wrongKey)
        }
        XCTAssertEqual(fileBytes(dir.file("vault.db")), before)
    }

    func testWrongPassphraseFailsAndTheRightOneOpens() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("vault.db")
        try Vault.open(path: path, key: .passphrase("correct horse")).close()
        let before = fileBytes(path)
        XCTAssertThrowsError(try Vault.open(path: path, key: .passphrase("battery staple"))) {
            XCTAssertEqual(($0 as? VaultError)?.code, .wrongKey)
        }
        XCTAssertThrowsError(try Vault.open(path: path, key: .keyFile(path: dir.file("k")))) {
            XCTAssertEqual(($0 as? VaultError)?.code, .keyUnavailable)
        }
        XCTAssertEqual(fileBytes(path), before)
        XCTAssertNoThrow(try Vault.open(path: path, key: .passphrase("correct horse")).close())
    }

    func testMissingKeyFileIsNotReplacedForAnExistingVault() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("vault.db")
        try Vault.open(path: path, key: .keyFile(path: dir.file("vault.key"))).close()
        try FileManager.default.removeItem(atPath: dir.file("vault.key"))
        XCTAssertThrowsError(try Vault.open(path: path, key: .keyFile(path: dir.file("vault.key")))) {
            XCTAssertEqual(($0 as? VaultError)?.code, .keyUnavailable)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("vault.key")))
    }

    func testCorruptFileIsAClearErrorAndStaysAsItWas() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("vault.db")
        let garbage = Array("this is not a database, just some text that is long enough to look like a header".utf8)
        FileManager.default.createFile(atPath: path, contents: Data(garbage))
        XCTAssertThrowsError(try Vault.open(path: path, key: .raw(Array(repeating: 7, count: 32)))) {
            XCTAssertEqual(($0 as? VaultError)?.code, .corrupt)
        }
        XCTAssertEqual(fileBytes(path), garbage)
    }

    func testNewerSchemaIsRefusedWithoutWriting() throws {
        let (vault, dir) = try makeTestVault()
        try vault.locked { () throws(VaultError) in try vault.db.execute("PRAGMA user_version = 99") }
        vault.close()
        let before = fileBytes(dir.file("vault.db"))
        XCTAssertThrowsError(try Vault.open(path: dir.file("vault.db"), key: .raw(Array(repeating: 7, count: 32)))) { error in
            XCTAssertEqual((error as? VaultError)?.code, .newerSchema)
            XCTAssertTrue("\(error)".contains("99"))
        }
        XCTAssertEqual(fileBytes(dir.file("vault.db")), before)
    }

    func testSecretsAreEncryptedAtRest() throws {
        let (vault, dir) = try makeTestVault()
        let key = try SigningKeys.generate(.es256)
        try vault.savePassword(origin: "https://example.com", username: "alice", password: "PLAINTEXT-PASSWORD-123", at: Date())
        let record = PasskeyRecord(credentialID: Array(repeating: 5, count: 16), rpID: "example.com", userHandle: [1],
                                   userName: "alice", displayName: "Alice", algorithm: .es256, publicKey: key.publicKey, createdAt: Date())
        try vault.insertPasskey(record, privateKey: key.pkcs8)
        vault.close()
        let bytes = fileBytes(dir.file("vault.db")) + fileBytes(dir.file("vault.db-wal"))
        XCTAssertNil(bytes.firstRange(of: Array("PLAINTEXT-PASSWORD-123".utf8)))
        XCTAssertNil(bytes.firstRange(of: Array(key.pkcs8.suffix(40))))
        XCTAssertNotNil(bytes.firstRange(of: Array("alice".utf8)), "metadata stays readable")
    }

    func testSecretMovedToAnotherRowDoesNotDecrypt() throws {
        let (vault, _) = try makeTestVault()
        try vault.savePassword(origin: "https://a.example", username: "alice", password: "one", at: Date())
        try vault.savePassword(origin: "https://b.example", username: "bob", password: "two", at: Date())
        try vault.locked { () throws(VaultError) in
            try vault.db.execute("UPDATE passwords SET password = (SELECT password FROM passwords WHERE username = 'alice') WHERE username = 'bob'")
        }
        let bob = try vault.allPasswords().first { $0.username == "bob" }!
        XCTAssertThrowsError(try vault.password(for: bob)) { XCTAssertEqual(($0 as? VaultError)?.code, .corrupt) }
    }
}
