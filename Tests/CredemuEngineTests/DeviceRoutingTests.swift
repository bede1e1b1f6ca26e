import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Where a device's platform sends ceremonies among its providers, by each pack's `device.integration`.
final class DeviceRoutingTests: XCTestCase {
    typealias Account = DeviceRouting.Account
    let gpm = Account(name: "gpm", integration: .builtIn, offersInAutofill: true)
    let bitwarden = Account(name: "bw", integration: .extension, offersInAutofill: true)
    let keepass = Account(name: "kp", integration: .extension, offersInAutofill: false)
    let other = Account(name: "other", integration: .osProvider, offersInAutofill: true)

    func routing(_ platform: Platform, _ accounts: [Account], preferred: String? = nil, os: String? = nil) throws -> DeviceRouting {
        var device = Device(name: "d", platform: platform, providers: accounts.map(\.name), preferred: preferred)
        if let os { try device.set("osVersion", .string(os)) }
        return DeviceRouting(device: device, accounts: accounts)
    }

    func testAnExtensionTakesDesktopCreatesWhateverThePreferredProvider() throws {
        let r = try routing(.chromeDesktop, [gpm, bitwarden], preferred: "gpm")
        XCTAssertEqual(r.createTarget()?.account.name, "bw")
        XCTAssertEqual(r.getOrder().map(\.name), ["bw", "gpm"], "the extension answers first, the browser's manager after it")
        XCTAssertEqual(r.signalTargets().map(\.name), ["gpm"], "an extension never overrides the signal methods")
    }

    func testDesktopChromeWithoutAnExtensionUsesItsOwnManager() throws {
        let r = try routing(.chromeDesktop, [gpm])
        XCTAssertEqual(r.createTarget()?.account.name, "gpm")
        XCTAssertEqual(r.createTarget()?.rule, "the platform's own manager")
    }

    func testAndroidGivesCreatesToThePreferredProviderAndSignalsToAllFromAndroid14() throws {
        let r = try routing(.android, [gpm, other], preferred: "other")
        XCTAssertEqual(r.createTarget()?.account.name, "other")
        XCTAssertEqual(r.getOrder().map(\.name), ["other", "gpm"], "the preferred provider's passkeys first")
        XCTAssertEqual(r.signalTargets().map(\.name), ["gpm", "other"])
    }

    func testBelowAndroid14OnlyGooglePasswordManagerIsReachable() throws {
        let r = try routing(.chromeAndroid, [gpm, other], preferred: "other", os: "13")
        XCTAssertEqual(r.createTarget()?.account.name, "gpm")
        XCTAssertEqual(r.reachable.map(\.name), ["gpm"])
        XCTAssertEqual(r.unreachable(other), "an OS credential provider, which Android 13 does not have (from 14)")
        XCTAssertEqual(r.signalTargets().map(\.name), ["gpm"])
    }

    func testAppsRunNoBrowserExtensions() throws {
        let r = try routing(.android, [bitwarden])
        XCTAssertNil(r.createTarget())
        XCTAssertEqual(r.unreachable(bitwarden), "a browser extension, and android runs no extensions")
    }

    func testTheDropdownListsOnlyProvidersThatOfferInAutofill() throws {
        let r = try routing(.firefox, [gpm, keepass])
        XCTAssertEqual(r.getOrder().map(\.name), ["kp", "gpm"])
        XCTAssertEqual(r.autofillOrder().map(\.name), ["gpm"], "keepassxc-browser passes conditional gets to the browser")
    }

    func testAThirdPartyAppleProviderGetsSignalsFromThe26ReleasesOnly() throws {
        XCTAssertEqual(try routing(.ios, [gpm, other], os: "18").signalTargets().map(\.name), ["gpm"])
        XCTAssertEqual(try routing(.ios, [gpm, other], os: "26").signalTargets().map(\.name), ["gpm", "other"])
        XCTAssertEqual(try routing(.ios, [gpm, other], os: "16").reachable.map(\.name), ["gpm"], "third-party passkey providers from iOS 17")
    }

    func testEveryShippedPackSaysHowItPlugsIn() throws {
        let registry = try PolicyRegistry()
        var seen: [String: PolicyKnobs.Integration] = [:]
        for policy in registry.all {
            for platform in policy.platforms {
                let knobs = policy.knobs(for: platform)
                if policy.id != "webauthn-spec" {
                    XCTAssertNotNil(knobs.provenance["device.integration"], "\(policy.id)@\(platform.rawValue) cites its source")
                }
                seen["\(policy.id)@\(platform.rawValue)"] = knobs.integration
            }
        }
        XCTAssertEqual(seen["gpm@chrome-desktop"], .builtIn)
        XCTAssertEqual(seen["gpm@android"], .builtIn)
        XCTAssertEqual(seen["bitwarden@chrome-desktop"], .extension)
        XCTAssertEqual(seen["keepassxc@firefox"], .extension)
        XCTAssertEqual(seen["generic-third-party@android"], .osProvider)
        XCTAssertEqual(seen["generic-third-party@firefox"], .extension)
        XCTAssertEqual(seen["apple@ios"], .builtIn)
    }

    func testDeviceSettingsAreReadStrictly() throws {
        var device = Device(name: "d")
        XCTAssertThrowsError(try device.set("providers", .array([]))) { XCTAssertEqual(($0 as? InvalidConfiguration)?.kind, .deviceSetting) }
        XCTAssertThrowsError(try device.set("providers", .string("a,a")), "distinct")
        XCTAssertThrowsError(try device.set("providers", .array(Array(repeating: .string("x"), count: 9))))
        XCTAssertThrowsError(try device.set("providers", .array([.string("a/b")])))
        XCTAssertThrowsError(try device.set("pack", .string("gpm")), "an account setting, not the device's")
        XCTAssertThrowsError(try device.set("platform", .string("windows")))
        try device.set("providers", .string("a,b"))
        try device.set("preferred", .string("c"))
        XCTAssertThrowsError(try device.checked(), "the preferred account must be one of the providers")
        try device.set("preferred", .string("b"))
        XCTAssertNoThrow(try device.checked())
        XCTAssertEqual(try Device(name: "d", json: device.json), device, "the stored form reads back")
        XCTAssertThrowsError(try Device(name: "d", json: .object([("providers", .array([.string("a")])), ("preferred", .string("z"))])))
    }
}
