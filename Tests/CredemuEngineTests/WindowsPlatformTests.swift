import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Chrome (and Edge) on Windows: Windows Hello through webauthn.dll (Chromium `device/fido/win/authenticator.cc`), its
/// signals behind `kWebAuthnHelloSignal` (disabled by default), PRF at creation from M147, Microsoft Password Manager in
/// Edge, and a third-party plugin authenticator (`webauthnplugin.h`) that has no conditional-create or signal entry point.
final class WindowsPlatformTests: XCTestCase {
    /// Windows Hello's pack with `kWebAuthnHelloSignal` on, as a user runs it: a copy with `signals.forwarded` true.
    func helloWithSignalFlag() throws -> (Engine, TemporaryDirectory) {
        let text = try String(contentsOfFile: providersDirectory + "/windows-hello.json", encoding: .utf8)
        let flagged = text.replacingOccurrences(of: "\"signals.forwarded\": {\n      \"value\": false", with: "\"signals.forwarded\": {\n      \"value\": true")
        XCTAssertNotEqual(flagged, text)
        let (vault, directory) = try makeTestVault()
        let path = directory.file("hello-signal.json")
        try flagged.write(toFile: path, atomically: true, encoding: .utf8)
        let policy = try PolicyPack.load(path: path)
        let profile = Profile(name: "user", pack: "windows-hello", packPath: path, platform: .chromeWindows)
        return (Engine(vault: vault, profile: profile, policy: policy), directory)
    }

    func register(_ engine: Engine, user: String = "alice@example.com") throws -> RegistrationResponse {
        try engine.create(try CreationOptions(json: creationOptionsJSON(rpID: "example.com", userID: Array(user.utf8), userName: user)),
                          caller: try Caller(origin: "https://shop.example.com"))
    }

    func testHelloGetsNoSignalWhileTheFlagIsOffAsItIsByDefault() throws {
        let hello = try ProviderScenario(pack: "windows-hello")
        XCTAssertEqual(hello.profile.platform, .chromeWindows)
        let created = try hello.modalCreate()
        try hello.signal(.unknownCredential(rpId: hello.rpID, credentialId: Base64URL.encode(created.credentialID)))
        try hello.signal(.allAcceptedCredentials(rpId: hello.rpID, userId: Base64URL.encode(Array("alice@example.com".utf8)), allAcceptedCredentialIds: []))
        XCTAssertEqual(try hello.passkeys().map(\.credentialID), [created.credentialID])
        let knob = try XCTUnwrap(hello.events("signal").first?.detail["knob"]?.stringValue)
        XCTAssertTrue(knob.hasPrefix("signals.forwarded = false (chromium device/fido/public/features.cc: BASE_FEATURE(kWebAuthnHelloSignal"), knob)
    }

    func testWithTheFlagOnAnUnknownCredentialIsDeletedNeverHiddenAndTheDetailsSignalDoesNothing() throws {
        let (hello, _) = try helloWithSignalFlag()
        let caller = try Caller(origin: "https://shop.example.com")
        let kept = try register(hello)
        let revoked = try register(hello, user: "bob@example.com")
        try hello.signal(.unknownCredential(rpId: "example.com", credentialId: Base64URL.encode(revoked.credentialID)), caller: caller)
        XCTAssertNil(try hello.vault.passkey(id: revoked.credentialID, includeShadowed: true), "deleted, not kept hidden")
        try hello.signal(.currentUserDetails(rpId: "example.com", userId: Base64URL.encode(Array("alice@example.com".utf8)), name: "renamed", displayName: "Renamed"), caller: caller)
        XCTAssertEqual(try hello.vault.passkey(id: kept.credentialID, includeShadowed: true)?.userName, "alice@example.com")
        try hello.signal(.allAcceptedCredentials(rpId: "example.com", userId: Base64URL.encode(Array("alice@example.com".utf8)), allAcceptedCredentialIds: []), caller: caller)
        XCTAssertNil(try hello.vault.passkey(id: kept.credentialID, includeShadowed: true), "a passkey missing from the accepted list is deleted")
    }

    func testHelloEvaluatesPRFAtCreationFromM147Only() throws {
        let eval: JSONValue = .object([("prf", .object([("eval", .object([("first", .string(Base64URL.encode(Array("salt".utf8))))]))]))])
        for (version, atCreation) in [("146", false), ("147", true)] {
            let hello = try ProviderScenario(pack: "windows-hello") { $0.browserVersion = version }
            let created = try hello.modalCreate(extensions: eval)
            let prf = try XCTUnwrap(created.clientExtensionResults.first { $0.0 == "prf" }?.1, version)
            XCTAssertEqual(prf["enabled"], true, version)
            XCTAssertEqual(prf["results"] != nil, atCreation, version)
        }
    }

    func testHelloOffersConditionalMediationAndNoAutomaticUpgrade() throws {
        let hello = try ProviderScenario(pack: "windows-hello")
        XCTAssertTrue(hello.engine().knobs.conditionalMediation, "webauthn.dll with silent discovery")
        try hello.savePassword()
        try hello.autofillAndSignIn()
        XCTAssertEqual(hello.failure { try hello.conditionalCreate() }?.reason, .conditionalCreateUnsupported)
        XCTAssertFalse(try flagsOf(hello.modalCreate()).contains(.backupEligible), "device-bound")
    }

    func flagsOf(_ response: RegistrationResponse) throws -> AuthenticatorData.Flags {
        try AuthenticatorData(bytes: response.authenticatorData).flags
    }

    func testEdgeSavesInMicrosoftPasswordManagerWithItsAAGUID() throws {
        let edge = try ProviderScenario(pack: "edge")
        XCTAssertEqual(edge.profile.platform, .chromeWindows)
        let created = try edge.modalCreate()
        let data = try AuthenticatorData(bytes: created.authenticatorData)
        XCTAssertEqual(AAGUID.format(try XCTUnwrap(data.attestedCredentialData).aaguid), "d3452668-01fd-4c12-926c-83a4204853aa")
        XCTAssertTrue(data.flags.contains(.backupEligible), "synced with the Microsoft account")
        let pack = try PolicyPack.load(path: providersDirectory + "/edge.json")
        for knob in ["conditionalCreate.mode", "signals.unknownCredential", "signals.allAcceptedCredentials", "signals.currentUserDetails",
                     "exclusion.outcome", "exclusion.excludeCredentials"] {
            XCTAssertNotNil(pack.describe(.chromeWindows).first { $0.0 == knob }?.3, "\(knob) is unsourced and says so")
        }
    }

    /// The same pack (`generic-third-party`), on Android a provider with conditional creates and signals, gets neither as
    /// a Windows 11 plugin authenticator: the platform's data decides, not the pack's name.
    func testAThirdPartyProviderOnWindowsGetsNoConditionalCreateAndNoSignal() throws {
        for (platform, upgrades) in [(Platform.android, true), (.chromeWindows, false)] {
            let provider = try ProviderScenario(pack: "generic-third-party", platform: platform) { $0.osVersion = "15" }
            try provider.savePassword()
            try provider.autofillAndSignIn()
            let failure = provider.failure { try provider.conditionalCreate() }
            XCTAssertEqual(failure == nil, upgrades, "\(platform): \(String(describing: failure))")
            if !upgrades { XCTAssertEqual(failure?.reason, .conditionalCreateUnsupported) }
            let created = try provider.modalCreate(user: "bob@example.com")
            try provider.signal(.unknownCredential(rpId: provider.rpID, credentialId: Base64URL.encode(created.credentialID)))
            let hidden = try provider.passkeys(includeHidden: false).contains { $0.credentialID == created.credentialID }
            XCTAssertEqual(hidden, !upgrades, "\(platform): the signal reaches the provider only where the OS has an entry point for it")
        }
        let windows = try ProviderScenario(pack: "generic-third-party", platform: .chromeWindows)
        XCTAssertTrue(windows.engine().knobs.cite("signals.forwarded", "false").contains("webauthnplugin.h"))
    }

    func testOnAWindowsDeviceNoSignalIsRoutedToAPluginAuthenticator() throws {
        var device = Device(name: "pc", platform: .chromeWindows)
        device.providers = ["hello", "plugin", "ext"]
        let routing = DeviceRouting(device: device, accounts: [
            .init(name: "hello", integration: .builtIn, offersInAutofill: true),
            .init(name: "plugin", integration: .osProvider, offersInAutofill: true),
            .init(name: "ext", integration: .extension, offersInAutofill: true),
        ])
        XCTAssertEqual(routing.reachable.map(\.name), ["hello", "plugin", "ext"])
        XCTAssertEqual(routing.signalTargets().map(\.name), ["hello"])
        XCTAssertEqual(routing.createTarget()?.account.name, "ext", "an extension's page script still takes the create")
    }
}
