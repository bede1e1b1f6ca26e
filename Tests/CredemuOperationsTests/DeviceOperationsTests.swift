import CredemuEngine
import CredemuTestSupport
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// Devices end to end in the operations layer: the checks on a device, and each ceremony routed as its platform does.
final class DeviceOperationsTests: XCTestCase {
    let origin = "https://www.example.com"

    func makeOperations() throws -> (Operations, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        return (try Operations(vault: vault, registry: try PolicyRegistry()), directory)
    }

    func request(_ options: String, mediation: String? = nil, pick: [UInt8]? = nil, restrictedTo: String? = nil) -> CeremonyRequest {
        CeremonyRequest(options: .text(options), origin: origin, mediation: mediation, pick: pick.map(Base64URL.encode), restrictedTo: restrictedTo)
    }

    func credentialID(_ response: JSONValue) throws -> [UInt8] { try XCTUnwrap(response["rawId"]?.stringValue.flatMap(Base64URL.decode)) }

    func code(_ body: () throws -> Void) -> OperationError.Code? {
        do { try body() } catch let error as OperationError { return error.code } catch { return nil }
        return nil
    }

    func testADeviceIsRefusedUnlessEveryProviderIsAProfileThatModelsItsPlatform() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.createProfile("bw", settings: [("pack", "bitwarden")], allowPackPath: false)
        XCTAssertEqual(code { _ = try ops.createDevice("d", settings: [("providers", "missing")]) }, .notFound)
        XCTAssertEqual(code { _ = try ops.createDevice("d", settings: [("platform", "android"), ("providers", "bw")]) }, .invalidInput)
        XCTAssertEqual(code { _ = try ops.createDevice("d", settings: [("providers", "bw"), ("preferred", "default")]) }, .configuration)
        XCTAssertEqual(code { _ = try ops.createDevice("d", settings: [("platform", "chrome-desktop")]) }, .invalidInput, "providers are required")
        XCTAssertEqual(code { _ = try ops.createDevice("a/b", settings: [("providers", "bw")]) }, .invalidInput)
        let saved = try ops.listDevices()
        XCTAssertTrue(saved.isEmpty, "nothing refused was saved")
        let device = try ops.createDevice("d", settings: [("providers", "default,bw")])
        XCTAssertEqual(device.providers, ["default", "bw"])
        XCTAssertEqual(code { _ = try ops.createDevice("d", settings: [("providers", "bw")]) }, .conflict)
        XCTAssertEqual(code { try ops.removeProfile("bw") }, .conflict, "a device still names it")
        try ops.removeDevice("d")
        XCTAssertNoThrow(try ops.removeProfile("bw"))
        XCTAssertEqual(code { try ops.removeDevice("d") }, .notFound)
    }

    func testOnDesktopChromeTheExtensionTakesTheCreateBothAreOfferedAndOnlyGPMGetsTheSignal() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.createProfile("bw", settings: [("pack", "bitwarden")], allowPackPath: false)
        _ = try ops.createDevice("laptop", settings: [("providers", "default,bw")])
        let gpmPasskey = try credentialID(try ops.create(.profile("default"), request(creationOptionsJSON(userID: Array("u-gpm".utf8), userName: "gpm-user"))).response)
        let (created, account) = try ops.create(.device("laptop"), request(creationOptionsJSON())).parts
        XCTAssertEqual(account, "bw", "the extension's page script takes navigator.credentials.create")
        let bwPasskey = try credentialID(created)
        XCTAssertEqual(try ops.listPasskeys("bw").count, 1)
        XCTAssertEqual(try ops.listPasskeys("default").count, 1)

        let offer = try ops.autofillOffer(.device("laptop"), request(requestOptionsJSON()))
        let offered = offer["passkeys"]?.arrayValue?.map { ($0["credentialId"]?.stringValue ?? "", $0["provider"]?.stringValue ?? "") }
        XCTAssertEqual(offered?.map(\.0), [Base64URL.encode(bwPasskey), Base64URL.encode(gpmPasskey)])
        XCTAssertEqual(offered?.map(\.1), ["bw", "default"])

        let (picked, answerer) = try ops.get(.device("laptop"), request(requestOptionsJSON(), pick: gpmPasskey)).parts
        XCTAssertEqual(answerer, "default", "a passkey is answered by the provider that holds it")
        XCTAssertEqual(try credentialID(picked), gpmPasskey)
        XCTAssertEqual(try ops.get(.device("laptop"), request(requestOptionsJSON())).account, "bw", "no pick: the extension's own passkey")

        let unknown = "{\"rpId\":\"example.com\",\"credentialId\":\"\(Base64URL.encode(bwPasskey))\"}"
        XCTAssertEqual(try ops.signal(.device("laptop"), kind: "unknown", request(unknown)), ["default"])
        XCTAssertEqual(try ops.listPasskeys("bw").count, 1, "the signal never reached the extension")
        let event = try XCTUnwrap(try ops.events("default", kind: "signal").last)
        XCTAssertEqual(event["detail"]?["device"]?.stringValue, "laptop", "the account's log names the device")
        XCTAssertEqual(try ops.capabilities(.device("laptop")).response, try ops.capabilities(.profile("bw"), platform: nil).response, "the page's API is the extension's")
    }

    func testTwoDevicesOnOneAccountShareItsPasskeysAndItsOptOut() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.createProfile("google", settings: [("pack", "gpm")], allowPackPath: false)
        _ = try ops.createDevice("laptop", settings: [("platform", "chrome-desktop"), ("providers", "google")])
        _ = try ops.createDevice("phone", settings: [("platform", "chrome-android"), ("providers", "google")])
        let (made, _) = try ops.create(.device("laptop"), request(creationOptionsJSON())).parts
        let (signedIn, _) = try ops.get(.device("phone"), request(requestOptionsJSON())).parts
        XCTAssertEqual(try credentialID(signedIn), try credentialID(made), "the passkey synced to the phone")
        XCTAssertEqual(try ops.events("google", kind: "get").last?["detail"]?["platform"]?.stringValue, "chrome-android")

        _ = try ops.updateProfile("google", settings: [("automaticPasskeyUpgrades", false)], allowPackPath: false)
        _ = try ops.savePassword("google", origin: origin, username: "bob", password: "pw")
        _ = try ops.autofill("google", origin: origin, username: "bob", submit: true)
        XCTAssertThrowsError(try ops.create(.device("phone"), request(creationOptionsJSON(userID: Array("bob".utf8), userName: "bob"),
                                                                      mediation: "conditional"))) { error in
            guard let e = error as? OperationError, case .ceremony = e.code else { return XCTFail("\(error)") }
            XCTAssertEqual(e.json["error"]?["reason"]?.stringValue ?? e.body?["reason"]?.stringValue, "optOut", "the opt-out made on one device holds on the other")
        }
    }

    func testAndroidSendsCreatesToThePreferredProviderAndSignalsToEveryoneFrom14() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.createProfile("google", settings: [("pack", "gpm"), ("platform", "android")], allowPackPath: false)
        _ = try ops.createProfile("other", settings: [("pack", "generic-third-party"), ("platform", "android")], allowPackPath: false)
        _ = try ops.createDevice("phone", settings: [("platform", "android"), ("providers", .array(["google", "other"])), ("preferred", "other")])
        let (made, account) = try ops.create(.device("phone"), request(creationOptionsJSON())).parts
        XCTAssertEqual(account, "other")
        let unknown = "{\"rpId\":\"example.com\",\"credentialId\":\"\(Base64URL.encode(try credentialID(made)))\"}"
        XCTAssertEqual(try ops.signal(.device("phone"), kind: "unknown", request(unknown)), ["google", "other"])
        _ = try ops.updateDevice("phone", settings: [("osVersion", "13")])
        XCTAssertEqual(try ops.create(.device("phone"), request(creationOptionsJSON(userID: Array("u2".utf8)))).account, "google",
                       "Android 13 has no third-party providers")
        XCTAssertEqual(try ops.signal(.device("phone"), kind: "unknown", request(unknown)), ["google"])
    }

    func testADeviceCeremonyKeepsTheFrontDoorsRules() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.createDevice("laptop", settings: [("providers", "default")])
        XCTAssertEqual(code { _ = try ops.create(.device("laptop"), self.request(creationOptionsJSON(), restrictedTo: "https://evil.example")) },
                       .wrongOrigin, "a page acts only for its own origin")
        var withPlatform = request(creationOptionsJSON())
        withPlatform.platform = "android"
        XCTAssertEqual(code { _ = try ops.create(.device("laptop"), withPlatform) }, .invalidInput, "a device runs on its own platform")
        XCTAssertEqual(try ops.listPasskeys("default").count, 0, "nothing refused reached the vault")
        XCTAssertEqual(code { _ = try ops.get(.device("nobody"), self.request(requestOptionsJSON())) }, .notFound)
    }
}

extension Answer {
    /// The response and the account that answered, for a test's destructuring.
    var parts: (JSONValue, String) { (response, account) }
}
