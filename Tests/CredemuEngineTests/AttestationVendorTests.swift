import CredemuTestSupport
import Foundation
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Issue 31, break 11: a pack's name is the batch certificate's O; however long, and in whatever characters, it
/// is cut to what the certificate's name holds, so a directly attested create never fails on it.
final class AttestationVendorTests: XCTestCase {
    /// The security-key pack under another name.
    func securityKey(named name: String) throws -> PolicyPack {
        let path = URL(fileURLWithPath: providersDirectory).appendingPathComponent("security-key.json")
        guard case var .object(members) = try JSONValue.parse(String(decoding: try Data(contentsOf: path), as: UTF8.self)) else {
            throw XCTSkip("the pack is a JSON object")
        }
        members = members.map { $0.0 == "name" ? ("name", .string(name)) : $0 }
        return try PolicyPack(json: JSONValue.object(members).serialized())
    }

    func testADirectlyAttestedCreateSucceedsWhateverThePacksNameHolds() throws {
        let names = [
            String(repeating: "e\u{301}", count: 70),          // "é" as e + U+0301: 70 characters, 140 scalars
            String(repeating: "\u{1F44D}\u{1F3FD}", count: 70), // thumbs up, skin tone: 140 scalars
            String(repeating: "\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}", count: 12), // a family: 5 scalars each
            "Tab\tand\u{7}bell", "\u{7}",
        ]
        for name in names {
            let (vault, directory) = try makeTestVault()
            defer { _ = directory }
            let policy = try securityKey(named: name)
            let engine = Engine(vault: vault, profile: Profile(name: "user", pack: policy.id), policy: policy,
                                clock: VirtualClock(Date(timeIntervalSince1970: 1_800_000_000)))
            let options = try CreationOptions(json: creationOptionsJSON(attestation: "direct"))
            let made = try engine.create(options, caller: try Caller(origin: "https://login.example.com"))
            let statement = try CBOR.decode(made.attestationObject)
            XCTAssertEqual(statement["fmt"], .text("packed"), name)
            guard case let .array(x5c)? = statement["attStmt"]?["x5c"], case let .bytes(certificate)? = x5c.first else {
                return XCTFail("a batch certificate for \(name.debugDescription)")
            }
            let (_, subject) = try OpenSSLCommand().describe(certificate: certificate)
            // RFC 2253 order: CN, OU, O, C.
            guard let start = subject.range(of: ",O="), let end = subject.range(of: ",C=", range: start.upperBound..<subject.endIndex) else {
                return XCTFail("an O in \(subject)")
            }
            let organization = String(subject[start.upperBound..<end.lowerBound])
            let printable = String(String.UnicodeScalarView(name.unicodeScalars.filter { $0.properties.generalCategory != .control }))
            if printable.isEmpty {
                XCTAssertEqual(organization, "security-key", "nothing of the name is left: the pack's ID")
                continue
            }
            // The longest whole-character prefix within RFC 5280's 64 (OpenSSL counts code points).
            XCTAssertTrue(printable.hasPrefix(organization), "\(name.debugDescription): \(subject)")
            XCTAssertLessThanOrEqual(organization.unicodeScalars.count, 64, name.debugDescription)
            if organization.count < printable.count {
                let next = printable[printable.index(printable.startIndex, offsetBy: organization.count)]
                XCTAssertGreaterThan(organization.unicodeScalars.count + next.unicodeScalars.count, 64, name.debugDescription)
            }
        }
    }
}
