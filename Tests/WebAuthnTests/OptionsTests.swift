import XCTest
@testable import WebAuthn

final class OptionsTests: XCTestCase {
    /// Verbatim `options_to_json` output of py_webauthn 2.x/3.x.
    let pyWebauthnCreation = """
    {"rp": {"name": "Example Co", "id": "example.com"}, "user": {"id": "dXNlci0x", "name": "alice", "displayName": "Alice"}, \
    "challenge": "AQIDBAUGBwgJCgsMDQ4PEA", "pubKeyCredParams": [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -8}, \
    {"type": "public-key", "alg": -257}], "timeout": 60000, "excludeCredentials": [{"id": "AAEC", "type": "public-key", \
    "transports": ["internal", "hybrid"]}], "authenticatorSelection": {"residentKey": "preferred", "requireResidentKey": false, \
    "userVerification": "preferred"}, "attestation": "direct", "hints": ["client-device"]}
    """

    func testParsesPyWebauthnCreationOptions() throws {
        let options = try CreationOptions(json: pyWebauthnCreation)
        XCTAssertEqual(options.rp, .init(id: "example.com", name: "Example Co"))
        XCTAssertEqual(options.user.id, Array("user-1".utf8))
        XCTAssertEqual(options.challenge, Array(1...16))
        XCTAssertEqual(options.pubKeyCredParams.map(\.alg), [-7, -8, -257])
        XCTAssertEqual(options.excludeCredentials, [CredentialDescriptor(id: [0, 1, 2], transports: ["internal", "hybrid"])])
        XCTAssertEqual(options.userVerification, .preferred)
        XCTAssertEqual(options.attestation, "direct")
        XCTAssertEqual(options.hints, ["client-device"])
        XCTAssertNil(options.mediation)
    }

    func testParsesWrappedOptionsWithMediation() throws {
        let wrapped = "{\"publicKey\": \(pyWebauthnCreation), \"mediation\": \"conditional\"}"
        let options = try CreationOptions(json: wrapped)
        XCTAssertEqual(options.mediation, "conditional")
        XCTAssertEqual(options.rp.id, "example.com")
    }

    func testMalformedCreationOptionsAreTypeErrors() {
        let cases: [(String, String)] = [
            ("not json", "not valid JSON"),
            ("[]", "must be a JSON object"),
            (#"{"user": {"id": "AQ", "name": "a", "displayName": "a"}, "challenge": "AQ", "pubKeyCredParams": []}"#, "publicKey.rp is required"),
            (#"{"rp": {"name": "x"}, "user": {"id": "", "name": "a", "displayName": "a"}, "challenge": "AQ", "pubKeyCredParams": []}"#, "between 1 and 64 bytes"),
            (#"{"rp": {"name": "x"}, "user": {"id": "AQ", "name": "a", "displayName": "a"}, "challenge": "A+Q", "pubKeyCredParams": []}"#, "Invalid base64url"),
            (#"{"rp": {"name": "x"}, "user": {"id": "AQ", "name": "a", "displayName": "a"}, "challenge": "AQ"}"#, "pubKeyCredParams is required"),
            (#"{"rp": {"name": "x"}, "user": {"id": "AQ", "name": "a"}, "challenge": "AQ", "pubKeyCredParams": []}"#, "displayName is required"),
            (#"{"rp": {"name": 5}, "user": {"id": "AQ", "name": "a", "displayName": "a"}, "challenge": "AQ", "pubKeyCredParams": []}"#, "must be a string"),
            (#"{"rp": {"name": "x"}, "user": {"id": "AQ", "name": "a", "displayName": "a"}, "challenge": "AQ", "pubKeyCredParams": [{"type": "public-key", "alg": 1.5}]}"#, "integer"),
        ]
        for (json, fragment) in cases {
            XCTAssertThrowsError(try CreationOptions(json: json), json) { error in
                let e = error as? WebAuthnError
                XCTAssertEqual(e?.name, .typeError, json)
                XCTAssertTrue(e?.message.contains(fragment) == true, "\(e?.message ?? "") lacks \(fragment)")
            }
        }
    }

    func testUserIDOf65BytesIsReadAndAnEmptyOneIsATypeError() throws {
        // Over 64 bytes is refused by the engine, in its place among the client's checks (Engine.checkUserHandle).
        func json(_ id: [UInt8]) -> String {
            #"{"rp": {"name": "x"}, "user": {"id": "\#(Base64URL.encode(id))", "name": "a", "displayName": "a"}, "challenge": "AQ", "pubKeyCredParams": []}"#
        }
        XCTAssertEqual(try CreationOptions(json: json([UInt8](repeating: 1, count: 65))).user.id.count, 65)
        XCTAssertThrowsError(try CreationOptions(json: json([]))) { XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError) }
    }

    func testUnknownEnumerationValuesFallBackToDefaults() throws {
        let json = #"{"rp": {"name": "x"}, "user": {"id": "AQ", "name": "a", "displayName": "a"}, "challenge": "AQ", "pubKeyCredParams": [], "attestation": "bogus", "authenticatorSelection": {"userVerification": "sometimes"}}"#
        let options = try CreationOptions(json: json)
        XCTAssertEqual(options.attestation, "none")
        XCTAssertEqual(options.userVerification, .preferred)
    }

    func testParsesPyWebauthnRequestOptions() throws {
        let json = #"{"challenge": "AQIDBA", "timeout": 60000, "rpId": "example.com", "allowCredentials": [{"id": "AAEC", "type": "public-key"}], "userVerification": "required"}"#
        let options = try RequestOptions(json: json)
        XCTAssertEqual(options.challenge, [1, 2, 3, 4])
        XCTAssertEqual(options.rpId, "example.com")
        XCTAssertEqual(options.allowCredentials.map(\.id), [[0, 1, 2]])
        XCTAssertEqual(options.userVerification, .required)
        XCTAssertThrowsError(try RequestOptions(json: #"{"timeout": 5}"#)) { XCTAssertEqual(($0 as? WebAuthnError)?.name, .typeError) }
    }

    func testClientDataJSONMatchesTheBrowserSerialization() {
        let data = ClientData(type: .create, challenge: [1, 2, 3], origin: "https://example.com")
        XCTAssertEqual(data.json, #"{"type":"webauthn.create","challenge":"AQID","origin":"https://example.com","crossOrigin":false}"#)
        let framed = ClientData(type: .get, challenge: [1], origin: "https://a.example.com", crossOrigin: true, topOrigin: "https://top.example")
        XCTAssertEqual(framed.json, #"{"type":"webauthn.get","challenge":"AQ","origin":"https://a.example.com","crossOrigin":true,"topOrigin":"https://top.example"}"#)
    }

    func testJSONRoundTripKeepsMemberOrderAndEscapes() throws {
        let text = #"{"b":1,"a":[true,null,"x\"\u00e9\n"],"c":{"d":-2.5}}"#
        let value = try JSONValue.parse(text)
        XCTAssertEqual(value.serialized(), #"{"b":1,"a":[true,null,"x\"é\n"],"c":{"d":-2.5}}"#)
        XCTAssertThrowsError(try JSONValue.parse(#"{"a":1,}"#))
        XCTAssertThrowsError(try JSONValue.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)))
        // Escapes at the start, middle and end of a string, control characters, and a string with none.
        let tricky = JSONValue.array(["\"quoted\"", "a\\b\tc\u{01}\u{1f}", "\r\u{08}\u{0c}", "plain ünïcode ✓", ""])
        XCTAssertEqual(tricky.serialized(), #"["\"quoted\"","a\\b\tc\u0001\u001f","\r\b\f","plain ünïcode ✓",""]"#)
        XCTAssertEqual(try JSONValue.parse(tricky.serialized()), tricky)
    }
}
