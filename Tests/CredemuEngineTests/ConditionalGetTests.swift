import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Who answers a conditional get (`conditionalGet.mode`): keepassxc-browser hands `mediation: "conditional"` to the
/// browser's own get, so KeePassXC's passkeys are never in the dropdown; an attached webAuthenticationProxy
/// (`conditionalGet.webAuthenticationProxy`, Chrome 146+) does the same for Bitwarden.
final class ConditionalGetTests: XCTestCase {
    func conditional(_ s: ProviderScenario) throws -> RequestOptions {
        var options = try RequestOptions(json: requestOptionsJSON(rpID: s.rpID))
        options.mediation = "conditional"
        return options
    }

    func register(_ s: ProviderScenario) throws -> RegistrationResponse {
        try s.engine().create(try s.creationOptions(conditional: false), caller: try Caller(origin: s.origin))
    }

    func testKeePassXCNeverOffersNorAnswersAConditionalGetAndItsPageSaysSo() throws {
        let s = try ProviderScenario(pack: "keepassxc")
        let created = try register(s)
        let engine = s.engine()
        XCTAssertEqual(engine.knobs.conditionalGet, .passedToBrowser)
        XCTAssertEqual(try engine.autofillOffer(try conditional(s), caller: try Caller(origin: s.origin)).passkeys, [])
        XCTAssertEqual(try s.events("offer").last?.outcome, "passedToBrowser")
        let failure = s.failure { try engine.get(try self.conditional(s), caller: try Caller(origin: s.origin), pick: Pick(created.credentialID)) }
        XCTAssertEqual(failure?.error.name, .notAllowedError)
        XCTAssertTrue(failure?.error.message.contains("conditionalGet.mode = passedToBrowser") == true, failure?.error.message ?? "")
        XCTAssertFalse(engine.isConditionalMediationAvailable, "isConditionalMediationAvailable() agrees: false")
        XCTAssertNil(try s.passkeys().first?.lastUsedAt, "the passkey was not used")
        // A modal get still reaches KeePassXC.
        XCTAssertEqual(try engine.get(try RequestOptions(json: requestOptionsJSON(rpID: s.rpID)), caller: try Caller(origin: s.origin)).credentialID,
                       created.credentialID)
    }

    func testTheOtherPacksAnswerAConditionalGet() throws {
        for pack in ["gpm", "bitwarden", "1password", "apple"] {
            let s = try ProviderScenario(pack: pack)
            let created = try register(s)
            XCTAssertEqual(try s.engine().autofillOffer(try conditional(s), caller: try Caller(origin: s.origin)).passkeys.map(\.credentialID),
                           [created.credentialID], pack)
            XCTAssertEqual(try s.engine().get(try conditional(s), caller: try Caller(origin: s.origin)).credentialID, created.credentialID, pack)
        }
    }

    func testAPackThatPassesConditionalGetsOnCannotClaimConditionalMediation() throws {
        var text = try String(contentsOfFile: providersDirectory + "/keepassxc.json", encoding: .utf8)
        text = text.replacingOccurrences(of: "\"capabilities.conditionalMediation\": {\n      \"value\": false", with: "\"capabilities.conditionalMediation\": {\n      \"value\": true")
        XCTAssertThrowsError(try PolicyPack(json: text, origin: "kp.json")) { error in
            XCTAssertTrue("\(error)".contains("passedToBrowser needs capabilities.conditionalMediation false"), "\(error)")
        }
    }

    /// On a device, the conditional request goes past KeePassXC to the browser's own manager, which answers it.
    func testOnADeviceTheBrowsersOwnManagerAnswersWhatKeePassXCPassesOn() throws {
        let s = try ProviderScenario(pack: "keepassxc")
        let registry = try PolicyRegistry()
        let gpmProfile = Profile(name: "g", pack: "gpm")
        let device = Device(name: "d", platform: .chromeDesktop, providers: ["user", "g"])
        let kp = Engine(vault: s.vault, profile: s.profile.on(device), policy: s.policy, clock: s.clock)
        let gpm = Engine(vault: s.vault.scoped(to: "g"), profile: gpmProfile.on(device), policy: try registry.policy(for: gpmProfile), clock: s.clock)
        let kpPasskey = try kp.create(try s.creationOptions(conditional: false), caller: try Caller(origin: s.origin))
        let gpmPasskey = try gpm.create(try s.creationOptions(user: "bob@example.com", conditional: false), caller: try Caller(origin: s.origin))
        let session = DeviceSession(device: device, engines: [kp, gpm], sheet: Sheet(queue: s.vault))
        XCTAssertEqual(try session.pageEngine().profile.name, "user", "KeePassXC's page script is the page's API")
        XCTAssertFalse(try session.pageEngine().isConditionalMediationAvailable)
        let offered = try session.autofillOffer(try conditional(s), caller: try Caller(origin: s.origin)).passkeys
        XCTAssertEqual(offered.map(\.credentialID), [gpmPasskey.credentialID])
        XCTAssertEqual(offered.map(\.provider), ["g"])
        XCTAssertEqual(try session.getEngine(try conditional(s), caller: try Caller(origin: s.origin), pick: nil).profile.name, "g")
        XCTAssertNotEqual(kpPasskey.credentialID, gpmPasskey.credentialID)
    }

    /// Bitwarden's flag-gated webAuthenticationProxy (Chrome 146+): with it attached Chrome reports conditional
    /// mediation unavailable and proxies no conditional request. The shipped pack has it off.
    func testAnAttachedWebAuthenticationProxyTurnsConditionalMediationOffFromChrome146() throws {
        let shipped = try ProviderScenario(pack: "bitwarden")
        XCTAssertFalse(shipped.engine().knobs.webAuthenticationProxy)
        XCTAssertTrue(shipped.engine().isConditionalMediationAvailable)
        let text = try String(contentsOfFile: providersDirectory + "/bitwarden.json", encoding: .utf8)
            .replacingOccurrences(of: "\"conditionalGet.webAuthenticationProxy\": {\n      \"value\": false", with: "\"conditionalGet.webAuthenticationProxy\": {\n      \"value\": true")
        let pack = try PolicyPack(json: text, origin: "bw.json")
        for (version, proxied) in [("145.0.1", false), ("146", true), (nil, true)] as [(String?, Bool)] {
            var profile = Profile(name: "user", pack: "bitwarden")
            profile.browserVersion = version
            let engine = Engine(vault: shipped.vault, profile: profile, policy: pack, clock: shipped.clock)
            XCTAssertEqual(engine.isConditionalMediationAvailable, !proxied, version ?? "current")
            XCTAssertEqual(engine.knobs.conditionalGet, proxied ? .passedToBrowser : .answered, version ?? "current")
        }
        let firefox = Engine(vault: shipped.vault, profile: Profile(name: "user", pack: "bitwarden", platform: .firefox), policy: pack, clock: shipped.clock)
        XCTAssertEqual(firefox.knobs.conditionalGet, .answered, "Firefox has no webAuthenticationProxy")
    }
}
