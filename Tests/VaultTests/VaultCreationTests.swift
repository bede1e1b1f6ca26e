import CredemuTestSupport
import Foundation
import XCTest
@testable import Vault

/// A new vault made by several openers at once, and the modes of the files and directories it makes.
final class VaultCreationTests: XCTestCase {
    /// Runs `body(i)` on `count` threads released together; returns each one's outcome.
    private func race<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) -> [Result<T, Error>] {
        let results = ResultBox<T>(count)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for i in 0..<count {
            done.enter()
            Thread {
                start.wait()
                results.set(i, Result { try body(i) })
                done.leave()
            }.start()
        }
        for _ in 0..<count { start.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 120), .success, "the openers finished")
        return results.all
    }

    private static func savesOne(path: String, key: VaultKeySource, user: String) throws {
        let vault = try Vault.open(path: path, key: key)
        defer { vault.close() }
        try vault.savePassword(origin: "https://example.com", username: user, password: "pw-" + user, at: Date())
    }

    func testOpenersRacingToCreateOneVaultAllUseTheSameFileAndKeepEveryWrite() throws {
        for trial in 0..<12 {
            let dir = TemporaryDirectory()
            let path = dir.file("new/.credemu/vault.db")
            let key = VaultKeySource.keyFile(path: Vault.defaultKeyFile(forVault: path))
            let outcomes = race(6) { i in try Self.savesOne(path: path, key: key, user: "user-\(i)") }
            for case .failure(let error) in outcomes { XCTFail("trial \(trial): an opener failed: \(error)") }
            let vault = try Vault.open(path: path, key: key)
            defer { vault.close() }
            XCTAssertEqual(Set(try vault.allPasswords().map(\.username)), Set((0..<6).map { "user-\($0)" }), "trial \(trial)")
            for record in try vault.allPasswords() {
                XCTAssertEqual(try vault.password(for: record), "pw-" + record.username)
            }
        }
    }

    func testOpenersRacingWithOnePassphraseShareTheWinnersSalt() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("vault.db")
        let outcomes = race(3) { i in try Self.savesOne(path: path, key: .passphrase("correct horse"), user: "user-\(i)") }
        for case .failure(let error) in outcomes { XCTFail("an opener failed: \(error)") }
        let vault = try Vault.open(path: path, key: .passphrase("correct horse"))
        defer { vault.close() }
        XCTAssertEqual(try vault.allPasswords().count, 3)
    }

    func testAnOpenerThatLosesWithAnotherKeyFailsAndLeavesTheWinnersVault() throws {
        for trial in 0..<12 {
            let dir = TemporaryDirectory()
            let path = dir.file("vault.db")
            let keys = [[UInt8](repeating: 1, count: 32), [UInt8](repeating: 2, count: 32)]
            let outcomes = race(2) { i in try Self.savesOne(path: path, key: .raw(keys[i]), user: "user-\(i)") }
            let winners = outcomes.indices.filter { if case .success = outcomes[$0] { return true } else { return false } }
            XCTAssertEqual(winners.count, 1, "trial \(trial): exactly one key made the vault")
            for case .failure(let error) in outcomes { XCTAssertEqual((error as? VaultError)?.code, .wrongKey, "trial \(trial)") }
            guard let winner = winners.first else { continue }
            let vault = try Vault.open(path: path, key: .raw(keys[winner]))
            defer { vault.close() }
            XCTAssertEqual(try vault.allPasswords().map(\.username), ["user-\(winner)"], "trial \(trial)")
        }
    }

    func testCreatingLeavesOnlyTheVaultAndItsKeyFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("vault.db")
        let key = VaultKeySource.keyFile(path: Vault.defaultKeyFile(forVault: path))
        _ = race(4) { i in try Self.savesOne(path: path, key: key, user: "user-\(i)") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["vault.db", "vault.db.key"])
    }

    func testAFailedOpenRemovesNothing() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("vault.db")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        XCTAssertThrowsError(try Vault.open(path: path, key: .raw(Array(repeating: 1, count: 32)))) { error in
            XCTAssertEqual((error as? VaultError)?.code, .corrupt)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "an empty file another process is about to fill stays")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["vault.db"])
    }

    func testTheVaultItsWALSHMStagingLogAndTheKeyFileAre0600AndItsNewDirectories0700WhateverTheUmask() throws {
        for mask: mode_t in [0o022, 0o000, 0o277] {
            let dir = TemporaryDirectory()
            chmod(dir.path, 0o755)
            let path = dir.file("a/b/vault.db")
            let previous = umask(mask)
            defer { umask(previous) }
            let vault = try Vault.open(path: path, key: .keyFile(path: Vault.defaultKeyFile(forVault: path)))
            try vault.savePassword(origin: "https://example.com", username: "alice", password: "pw", at: Date())
            for file in [path, path + "-wal", path + "-shm", path + ".key"] {
                XCTAssertEqual(mode(file), 0o600, "\(file) under umask \(String(mask, radix: 8))")
            }
            vault.close()
            // A held vault's staging log too, made by this process under the same umask.
            let held = try Vault.open(path: path, key: .keyFile(path: Vault.defaultKeyFile(forVault: path)), exclusive: true)
            XCTAssertEqual(mode(path + "-staged"), 0o600, "the staging log under umask \(String(mask, radix: 8))")
            held.close()
            for made in [dir.file("a"), dir.file("a/b")] {
                XCTAssertEqual(mode(made), 0o700, "\(made) under umask \(String(mask, radix: 8))")
            }
            XCTAssertEqual(mode(dir.path), 0o755, "a directory credemu did not make keeps its mode")
        }
    }

    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : nil
    }
}

/// Per-thread results, written under a lock.
private final class ResultBox<T>: @unchecked Sendable {
    private var results: [Result<T, Error>?]
    private let lock = NSLock()

    init(_ count: Int) { results = Array(repeating: nil, count: count) }

    func set(_ i: Int, _ result: Result<T, Error>) {
        lock.lock()
        defer { lock.unlock() }
        results[i] = result
    }

    var all: [Result<T, Error>] {
        lock.lock()
        defer { lock.unlock() }
        return results.map { $0 ?? .failure(VaultError(.storage, "did not finish")) }
    }
}
