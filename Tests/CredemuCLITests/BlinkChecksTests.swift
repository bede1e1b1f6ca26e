import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuCLI

/// Chrome's checks before any provider is asked (Blink's authentication_credentials_container.cc), through the CLI:
/// made for every provider Chrome asks itself (the default profile: GPM on Chrome desktop; Apple in Safari is no
/// Chrome), never for an extension pack whose page script runs first (Bitwarden), and in Blink's order.
final class BlinkChecksTests: XCTestCase {
    let origin = "https://shop.example.com"

    /// The CLI's error for a refused run: name, message, reason.
    func error(_ run: CLIRun, file: StaticString = #filePath, line: UInt = #line) throws -> [String?] {
        XCTAssertEqual(run.status, .webAuthnError, run.output + run.errors, file: file, line: line)
        let e = try JSONValue.parse(run.output)["error"]
        return [e?["name"]?.stringValue, e?["message"]?.stringValue, e?["reason"]?.stringValue]
    }

    func created(_ run: CLIRun, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        XCTAssertEqual(run.status, .success, run.output + run.errors, file: file, line: line)
        return try XCTUnwrap(try JSONValue.parse(run.output)["rawId"]?.stringValue.flatMap(Base64URL.decode))
    }

    func harness() throws -> CLIHarness {
        let cli = CLIHarness()
        XCTAssertEqual(cli.run(["profile", "create", "bw", "--pack", "bitwarden"]).status, .success)
        return cli
    }

    func passkeys(_ cli: CLIHarness, _ profile: String = "default") throws -> Int {
        try JSONValue.parse(cli.run(["--profile", profile, "vault", "list"]).output).arrayValue?.count ?? -1
    }

    func ext(_ text: String) -> JSONValue { try! JSONValue.parse(text) }

    let tooManyIDs: [[UInt8]] = (0..<65).map { [0xEE, UInt8($0)] }

    func testAnExcludeListOver64IsBlinksRangeErrorWhereChromeAsksTheProviderAndNotForAnExtension() throws {
        let cli = try harness()
        let options = creationOptionsJSON(exclude: tooManyIDs)
        XCTAssertEqual(try error(cli.run(["create", "--origin", origin], input: options)),
                       ["RangeError", "The `excludeCredentials` attribute exceeds the maximum allowed size (64).", "refusedByBrowser"])
        XCTAssertEqual(try passkeys(cli), 0, "nothing stored")
        XCTAssertEqual(try error(cli.run(["create", "--origin", origin], input: creationOptionsJSON(exclude: Array(tooManyIDs.prefix(64)), extensions: ext(#"{"largeBlob": {"read": true}}"#)))).first,
                       "NotSupportedError", "64 pass")
        _ = try created(cli.run(["--profile", "bw", "create", "--origin", origin], input: options))
    }

    func testAnAllowListOver64IsBlinksRangeError() throws {
        let cli = try harness()
        let id = try created(cli.run(["create", "--origin", origin], input: creationOptionsJSON()))
        let bw = try created(cli.run(["--profile", "bw", "create", "--origin", origin], input: creationOptionsJSON()))
        XCTAssertEqual(try error(cli.run(["get", "--origin", origin], input: requestOptionsJSON(allow: Array(tooManyIDs.prefix(64)) + [id]))),
                       ["RangeError", "The `allowCredentials` attribute exceeds the maximum allowed size (64).", "refusedByBrowser"])
        XCTAssertEqual(cli.run(["--profile", "bw", "get", "--origin", origin], input: requestOptionsJSON(allow: Array(tooManyIDs.prefix(64)) + [bw])).status, .success)
    }

    func testCredPropsOnAGetIsNotSupportedWhereChromeAsksTheProvider() throws {
        let cli = try harness()
        let id = try created(cli.run(["create", "--origin", origin], input: creationOptionsJSON()))
        let bw = try created(cli.run(["--profile", "bw", "create", "--origin", origin], input: creationOptionsJSON()))
        XCTAssertEqual(try error(cli.run(["get", "--origin", origin], input: requestOptionsJSON(allow: [id], extensions: ext(#"{"credProps": true}"#)))),
                       ["NotSupportedError", "The 'credProps' extension is only valid when creating a credential", "invalidExtensionInput"])
        XCTAssertEqual(cli.run(["get", "--origin", origin], input: requestOptionsJSON(allow: [id], extensions: ext(#"{"credProps": false}"#))).status, .success,
                       "Blink reads the member's value")
        XCTAssertEqual(cli.run(["--profile", "bw", "get", "--origin", origin], input: requestOptionsJSON(allow: [bw], extensions: ext(#"{"credProps": true}"#))).status, .success)
    }

    func testALargeBlobWriteOver2KiBIsNotSupportedInChromeWhileSafariKeepsTheVaultsBound() throws {
        let cli = try harness()
        let id = try created(cli.run(["create", "--origin", origin], input: creationOptionsJSON()))
        func write(_ count: Int, allow: [[UInt8]]) -> String {
            requestOptionsJSON(allow: allow, extensions: .object([("largeBlob", .object([("write", .string(Base64URL.encode(Array(repeating: 7, count: count))))]))]))
        }
        XCTAssertEqual(try error(cli.run(["get", "--origin", origin], input: write(2049, allow: [id]))),
                       ["NotSupportedError", "The 'largeBlob' extension's 'write' parameter exceeds the maximum allowed size (2kb)", "invalidExtensionInput"])
        // Blink's bound comes before the browser's one-credential rule.
        XCTAssertEqual(try error(cli.run(["get", "--origin", origin], input: write(2049, allow: [id, [1, 2]])))[1],
                       "The 'largeBlob' extension's 'write' parameter exceeds the maximum allowed size (2kb)")
        let written = try JSONValue.parse(cli.run(["get", "--origin", origin], input: write(2048, allow: [id])).output)
        XCTAssertEqual(written["clientExtensionResults"]?["largeBlob"]?["written"], true)
        // Apple in Safari: no Blink, the vault's 8 KiB.
        XCTAssertEqual(cli.run(["profile", "create", "mac", "--pack", "apple", "--platform", "safari"]).status, .success)
        let mac = try created(cli.run(["--profile", "mac", "create", "--origin", origin], input: creationOptionsJSON()))
        let safari = try JSONValue.parse(cli.run(["--profile", "mac", "get", "--origin", origin], input: write(8192, allow: [mac])).output)
        XCTAssertEqual(safari["clientExtensionResults"]?["largeBlob"]?["written"], true)
    }

    func testAnImmediateGetWithAnAllowListOrWithoutUserActivationIsNotAllowedInBlinksOrder() throws {
        let cli = try harness()
        let id = try created(cli.run(["create", "--origin", origin], input: creationOptionsJSON(extensions: ext(#"{"credProps": true}"#))))
        let allowList = ["get", "--origin", origin, "--mediation", "immediate"]
        XCTAssertEqual(try error(cli.run(allowList, input: requestOptionsJSON(allow: tooManyIDs))),
                       ["NotAllowedError", "An allowCredentials is not allowed with immediate mediation.", "refusedByBrowser"],
                       "before the list's bound")
        XCTAssertEqual(try error(cli.run(allowList + ["--no-user-activation"], input: requestOptionsJSON(allow: [id])))[1],
                       "An allowCredentials is not allowed with immediate mediation.", "before the activation")
        XCTAssertEqual(try error(cli.run(allowList + ["--no-user-activation"], input: requestOptionsJSON(extensions: ext(#"{"credProps": true}"#)))),
                       ["NotAllowedError", "A user activation is required to request immediate credentials.", "userActivationRequired"],
                       "before the extensions")
        XCTAssertEqual(cli.run(allowList, input: requestOptionsJSON()).status, .success, "with the activation it signs in")
    }

    func testAUserHandleOver64BytesIsBlinksTypeErrorAfterTheListAndExtensionChecks() throws {
        let cli = try harness()
        let long = Array(repeating: UInt8(3), count: 65)
        XCTAssertEqual(try error(cli.run(["create", "--origin", origin], input: creationOptionsJSON(userID: long))),
                       ["TypeError", "User handle exceeds 64 bytes.", "malformedRequest"])
        XCTAssertEqual(try error(cli.run(["create", "--origin", origin], input: creationOptionsJSON(userID: long, exclude: tooManyIDs))).first,
                       "RangeError")
        XCTAssertEqual(try error(cli.run(["create", "--origin", origin], input: creationOptionsJSON(userID: long, extensions: ext(#"{"largeBlob": {"read": true}}"#))))[1],
                       "The 'largeBlob' extension's 'read' parameter is only valid when requesting an assertion")
        XCTAssertEqual(try error(cli.run(["--profile", "bw", "create", "--origin", origin], input: creationOptionsJSON(userID: long))),
                       ["TypeError", "publicKey.user.id must be between 1 and 64 bytes long; it is 65.", "malformedRequest"])
        XCTAssertEqual(try passkeys(cli) + passkeys(cli, "bw"), 0)
    }

    func testChromeOnWindowsMakesBlinksChecksForWindowsHelloAndEdgeAndNotForProtonPassAnExtension() throws {
        let cli = CLIHarness()
        for (name, pack) in [("hello", "windows-hello"), ("edge", "edge"), ("proton", "proton-pass")] {
            XCTAssertEqual(cli.run(["profile", "create", name, "--pack", pack]).status, .success)
        }
        let options = creationOptionsJSON(exclude: tooManyIDs)
        for name in ["hello", "edge"] {
            XCTAssertEqual(try error(cli.run(["--profile", name, "create", "--origin", origin], input: options)),
                           ["RangeError", "The `excludeCredentials` attribute exceeds the maximum allowed size (64).", "refusedByBrowser"], name)
            XCTAssertEqual(try passkeys(cli, name), 0, name)
        }
        _ = try created(cli.run(["--profile", "proton", "create", "--origin", origin], input: options))
    }
}
