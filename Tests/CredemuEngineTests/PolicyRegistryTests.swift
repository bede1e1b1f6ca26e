import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// The packs a registry holds: the shipped ones, a directory's packs over them.
final class PolicyRegistryTests: XCTestCase {
    private func gpmText() throws -> String {
        try String(contentsOfFile: providersDirectory + "/gpm.json", encoding: .utf8)
    }

    private func write(_ text: String, _ name: String, in directory: TemporaryDirectory) {
        XCTAssertTrue(FileManager.default.createFile(atPath: directory.file(name), contents: Data(text.utf8)))
    }

    func testWithoutADirectoryTheRegistryHoldsTheShippedPacks() throws {
        let registry = try PolicyRegistry()
        XCTAssertEqual(registry.packs.map(\.id), ["1password", "apple", "bitwarden", "edge", "generic-third-party", "gpm-pre-m144", "gpm", "keepassxc",
                                                  "proton-pass", "security-key", "windows-hello"])
        XCTAssertEqual(registry.all.last?.id, "webauthn-spec")
        XCTAssertEqual(Set(registry.origins.values), ["built-in"])
        XCTAssertEqual(registry.json["directory"], .null)
    }

    func testADirectoryPackReplacesTheShippedPackWithItsIDAndOthersAreAdded() throws {
        let directory = TemporaryDirectory()
        let text = try gpmText()
        write(text.replacingOccurrences(of: "\"value\": 300", with: "\"value\": 60"), "my-gpm.json", in: directory)
        write(text.replacingOccurrences(of: "\"id\": \"gpm\"", with: "\"id\": \"gpm-canary\""), "canary.json", in: directory)
        write("not a pack", "notes.txt", in: directory)
        let registry = try PolicyRegistry(directory: directory.path)
        XCTAssertEqual(registry.packs.map(\.id), ["1password", "apple", "bitwarden", "edge", "generic-third-party", "gpm-pre-m144", "gpm", "keepassxc",
                                                  "proton-pass", "security-key", "windows-hello", "gpm-canary"])
        let gpm = try registry.policy(for: Profile(name: "x", pack: "gpm"))
        XCTAssertEqual(gpm.knobs(for: .chromeDesktop).windowSeconds, 60, "the directory's gpm is the one played")
        XCTAssertEqual(registry.origins["gpm"], directory.file("my-gpm.json"))
        XCTAssertEqual(registry.origins["gpm-canary"], directory.file("canary.json"))
        XCTAssertEqual(registry.origins["apple"], "built-in")
        let listed = registry.json["providers"]?.arrayValue ?? []
        XCTAssertEqual(listed.first { $0["id"] == "gpm" }?["origin"], .string(directory.file("my-gpm.json")))
        XCTAssertEqual(listed.first { $0["id"] == "webauthn-spec" }?["origin"], "built-in")
    }

    func testAPackWithTheSpecPolicysIDReplacesIt() throws {
        let directory = TemporaryDirectory()
        write(try gpmText().replacingOccurrences(of: "\"id\": \"gpm\"", with: "\"id\": \"webauthn-spec\""), "spec.json", in: directory)
        let registry = try PolicyRegistry(directory: directory.path)
        XCTAssertEqual(registry.all.filter { $0.id == "webauthn-spec" }.count, 1)
        XCTAssertTrue(try registry.policy(for: Profile(name: "x", pack: "webauthn-spec")) is PolicyPack)
    }

    func testTwoDirectoryPacksWithOneIDAreRefusedNamingBothFiles() throws {
        let directory = TemporaryDirectory()
        write(try gpmText(), "a.json", in: directory)
        write(try gpmText(), "b.json", in: directory)
        XCTAssertThrowsError(try PolicyRegistry(directory: directory.path)) { error in
            XCTAssertEqual(error as? InvalidConfiguration,
                           InvalidConfiguration(.policyPack, "\(directory.file("b.json")): the pack ID 'gpm' is taken by \(directory.file("a.json"))"))
        }
    }

    func testADirectoryThatCannotBeReadIsRefusedRatherThanIgnored() throws {
        XCTAssertThrowsError(try PolicyRegistry(directory: "/nonexistent/providers")) { error in
            XCTAssertEqual(error as? InvalidConfiguration, InvalidConfiguration(.policyPack, "/nonexistent/providers: the providers directory cannot be read"))
        }
    }

    func testAMalformedDirectoryPackIsRefusedNamingItsFile() throws {
        let directory = TemporaryDirectory()
        write("{", "broken.json", in: directory)
        XCTAssertThrowsError(try PolicyRegistry(directory: directory.path)) { error in
            XCTAssertTrue("\(error)".hasPrefix(directory.file("broken.json") + ": not valid JSON"), "\(error)")
        }
    }
}
