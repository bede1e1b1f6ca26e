import XCTest
@testable import WebAuthn

/// The extension inputs Chromium reports, read from their JSON forms: present members typed, absent ones defaulted,
/// a malformed one a TypeError naming its path, and no member of another's type let through.
final class ExtensionInputsTests: XCTestCase {
    func read(_ json: String) throws -> ExtensionInputs {
        try ExtensionInputs(try JSONValue.parse(json), path: "options.extensions")
    }

    func testTheCTAPInputsAreRead() throws {
        let inputs = try read(#"""
            {"appid": "https://example.com/a.json", "appidExclude": "", "hmacCreateSecret": true,
             "credentialProtectionPolicy": "userVerificationRequired", "enforceCredentialProtectionPolicy": true,
             "minPinLength": true, "credBlob": "AQID", "getCredBlob": true, "uvm": true}
            """#)
        XCTAssertEqual(inputs.appid, "https://example.com/a.json")
        XCTAssertEqual(inputs.appidExclude, "")
        XCTAssertTrue(inputs.hmacCreateSecret && inputs.enforceCredentialProtectionPolicy && inputs.minPinLength && inputs.getCredBlob)
        XCTAssertEqual(inputs.credentialProtectionPolicy.flatMap(CredentialProtection.init(name:)), .userVerificationRequired)
        XCTAssertEqual(inputs.credBlob, [1, 2, 3])
        XCTAssertEqual(try read("{}"), ExtensionInputs(), "absent: defaults")
    }

    func testAMalformedInputIsATypeErrorNamingItsPath() throws {
        for (json, member) in [(#"{"appid": 1}"#, "appid"), (#"{"credBlob": "not base64url!"}"#, "credBlob"),
                               (#"{"hmacCreateSecret": "yes"}"#, "hmacCreateSecret"), (#"{"credentialProtectionPolicy": 3}"#, "credentialProtectionPolicy"),
                               (#"{"getCredBlob": 1}"#, "getCredBlob"), (#"{"appidExclude": []}"#, "appidExclude")] {
            XCTAssertThrowsError(try read(json), json) { error in
                XCTAssertEqual((error as? WebAuthnError)?.name, .typeError, json)
                XCTAssertTrue("\(error)".contains(member), "\(error)")
            }
        }
    }

    func testTheThreeProtectionLevelsAreKnownByTheirNames() {
        XCTAssertEqual(CredentialProtection.allCases.map(\.name),
                       ["userVerificationOptional", "userVerificationOptionalWithCredentialIDList", "userVerificationRequired"])
        XCTAssertEqual(CredentialProtection.allCases.map(\.rawValue), [1, 2, 3])
        XCTAssertNil(CredentialProtection(name: "UserVerificationRequired"), "names are case-sensitive, as Chromium's conversion")
    }
}
