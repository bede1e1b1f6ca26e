import CredemuEngine
import CredemuTestSupport
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// The operations layer's sheet, made by `Sheet.build`: a plugged key answers a profile's or a device's
/// cross-platform create, a phone device answers over hybrid, and a passkey provider plugged in as a key is refused.
final class SheetOperationsTests: XCTestCase {
    let origin = "https://www.example.com"

    func crossPlatform() -> String {
        var document = try! JSONValue.parse(creationOptionsJSON(rpID: "example.com"))
        document = .object((document.objectValue ?? []).map { key, value in
            key == "authenticatorSelection" ? (key, .object([("authenticatorAttachment", "cross-platform"), ("residentKey", "preferred")])) : (key, value)
        })
        return document.serialized()
    }

    func testAPluggedKeyAndAPhoneAnswerThroughTheSheet() throws {
        let (vault, directory) = try makeTestVault()
        defer { _ = directory }
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        _ = try ops.createProfile("key1", settings: [("pack", "security-key")], allowPackPath: false)
        _ = try ops.createProfile("phone-gpm", settings: [("pack", "gpm"), ("platform", "android")], allowPackPath: false)
        _ = try ops.createDevice("pixel", settings: [("platform", "android"), ("providers", "phone-gpm")])
        _ = try ops.createProfile("default", settings: [("pack", "gpm"), ("authenticators", .array(["key1"]))], allowPackPath: false)
        _ = try ops.createDevice("desk", settings: [("platform", "chrome-desktop"), ("providers", "default"), ("authenticators", .array(["key1"]))])
        for target in [CeremonyTarget.profile("default"), .device("desk")] {
            let answer = try ops.create(target, CeremonyRequest(options: .text(crossPlatform()), origin: origin))
            XCTAssertEqual(answer.accounts, ["key1"], "\(target)")
            XCTAssertEqual(answer.response["authenticatorAttachment"]?.stringValue, "cross-platform")
        }
        _ = try ops.queueDecisions(.profile("default"), ["use:pixel"])
        let hybrid = try ops.create(.profile("default"), CeremonyRequest(options: .text(crossPlatform()), origin: origin))
        XCTAssertEqual(hybrid.accounts, ["phone-gpm"])
        XCTAssertTrue(hybrid.response["response"]?["transports"]?.arrayValue?.contains("hybrid") == true)
        XCTAssertThrowsError(try ops.updateProfile("default", settings: [("authenticators", .array(["phone-gpm"]))], allowPackPath: false)) { error in
            XCTAssertTrue("\(error)".contains("'phone-gpm' is plugged in as a security key, but its pack 'gpm' is a passkey provider"), "\(error)")
        }
    }
}
