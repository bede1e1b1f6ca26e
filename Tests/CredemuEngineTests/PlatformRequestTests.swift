import CredemuTestSupport
import Foundation
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Android's and Apple's request shapes map onto the same engine as the web's options.
final class PlatformRequestTests: XCTestCase {
    let apkOrigin = "android:apk-key-hash:" + Base64URL.encode([UInt8](repeating: 0xA5, count: 32))

    func testAndroidRequestJSONWithIsConditionalIsAConditionalCreate() throws {
        let document = JSONValue.object([("requestJson", .string(creationOptionsJSON(userName: "alice@example.com"))),
                                         ("isConditional", true), ("origin", .string(apkOrigin))])
        XCTAssertEqual(PlatformRequest.shape(of: document), .android)
        let (options, origin) = try PlatformRequest.creationOptions(document)
        XCTAssertEqual(options.mediation, "conditional")
        XCTAssertEqual(origin, apkOrigin)

        let s = try ProviderScenario(pack: "gpm", platform: .android)
        let caller = try Caller(origin: apkOrigin, androidPackageName: "com.example.shop")
        try s.engine().savePassword(origin: caller.signonRealm, username: "alice@example.com", password: "pw")
        _ = try s.engine().autofill(origin: caller.signonRealm, submit: true)
        let response = try s.engine().create(options, caller: caller)
        let clientData = try JSONValue.parse(response.clientDataJSON)
        XCTAssertEqual(clientData["origin"], .string(apkOrigin))
        XCTAssertEqual(clientData["androidPackageName"], .string("com.example.shop"))
        XCTAssertFalse(try AuthenticatorData(bytes: response.authenticatorData).flags.contains(.userPresent))
    }

    func testAndroidMalformedRequestJSONIsATypeError() {
        XCTAssertThrowsError(try PlatformRequest.creationOptions(.object([("requestJson", "{nope")]))) {
            XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError)
        }
    }

    func testAppleRegistrationRequestFieldsWithConditionalStyle() throws {
        let document = JSONValue.object([
            ("relyingPartyIdentifier", "example.com"), ("challenge", .string(Base64URL.encode([UInt8](repeating: 3, count: 32)))),
            ("name", "alice@example.com"), ("userID", .string(Base64URL.encode(Array("alice".utf8)))), ("requestStyle", "conditional"),
            ("excludedCredentials", .array([.string(Base64URL.encode([1, 2, 3]))])),
        ])
        XCTAssertEqual(PlatformRequest.shape(of: document), .apple)
        let (options, origin) = try PlatformRequest.creationOptions(document)
        XCTAssertEqual(options.mediation, "conditional")
        XCTAssertEqual(options.rp.id, "example.com")
        XCTAssertEqual(options.user.displayName, "alice@example.com")
        XCTAssertEqual(options.excludeCredentials.map(\.id), [[1, 2, 3]])
        XCTAssertEqual(origin, "https://example.com", "native apps' client data origin is https:// + RP ID")
        XCTAssertThrowsError(try PlatformRequest.creationOptions(document.setting("requestStyle", "sometimes")))

        let assertion = JSONValue.object([("relyingPartyIdentifier", "example.com"), ("challenge", "AAAA"),
                                          ("allowedCredentials", .array([.string(Base64URL.encode([9, 9]))]))])
        let (request, requestOrigin) = try PlatformRequest.requestOptions(assertion)
        XCTAssertEqual(request.rpId, "example.com")
        XCTAssertEqual(request.allowCredentials.map(\.id), [[9, 9]])
        XCTAssertEqual(requestOrigin, "https://example.com")
    }
}
