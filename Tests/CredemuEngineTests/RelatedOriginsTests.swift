import CredemuTestSupport
import Foundation
import Vault
import WebAuthn
import XCTest
@testable import CredemuEngine

/// Related origin requests (WebAuthn L3 §5.11): an RP ID outside the caller's site, allowed by the RP's
/// `/.well-known/webauthn` list (the profile's `relatedOrigins`).
final class RelatedOriginsTests: XCTestCase {
    let related = "https://example.co.uk"

    func scenario(_ pack: String = "gpm", platform: Platform? = nil, origins: [String]? = nil) throws -> ProviderScenario {
        try ProviderScenario(pack: pack, platform: platform) { profile in
            if let origins { profile.relatedOrigins = ["example.com": origins] }
        }
    }

    func create(_ s: ProviderScenario, from origin: String) throws -> RegistrationResponse {
        try s.engine().create(try s.creationOptions(conditional: false), caller: try Caller(origin: origin))
    }

    func testCreateAndGetFromARelatedOriginUseTheRPsID() throws {
        for (pack, platform) in [("gpm", Platform.chromeDesktop), ("bitwarden", .chromeDesktop), ("apple", .safari)] {
            let s = try scenario(pack, platform: platform, origins: ["https://example.com", related])
            let created = try create(s, from: related)
            XCTAssertNoThrow(try RPCheck.registration(created, challenge: Array(repeating: 1, count: 32), origin: related, rpID: "example.com"),
                             "\(pack): the RP sees its own RP ID hash and the related origin in client data")
            let assertion = try s.engine().get(try RequestOptions(json: requestOptionsJSON(rpID: "example.com", allow: [created.credentialID])),
                                               caller: try Caller(origin: related))
            XCTAssertEqual(assertion.credentialID, created.credentialID, "\(pack)")
        }
    }

    /// Chrome added related origin requests in 128 (`relatedOrigins.sinceBrowserVersion`): an older Chrome refuses the
    /// RP ID with the plain check's SecurityError, word for word, whatever the list says.
    func testABrowserOlderThanRelatedOriginRequestsRefusesTheRPIDAsBefore() throws {
        for (version, allowed) in [("127.0.6533.88", false), ("128", true), ("144.0.1", true)] {
            let s = try ProviderScenario(pack: "gpm", platform: .chromeDesktop) { profile in
                profile.relatedOrigins = ["example.com": ["https://example.com", self.related]]
                profile.browserVersion = version
            }
            if allowed {
                XCTAssertNoThrow(try create(s, from: related), version)
            } else {
                let failure = s.failure { try self.create(s, from: self.related) }
                XCTAssertEqual(failure?.error.name, .securityError, version)
                XCTAssertEqual(failure?.error.message, "The relying party ID 'example.com' is not a registrable domain suffix of, nor equal to, the current domain 'example.co.uk'.",
                               "the plain check's message, with nothing about a list (\(version))")
                XCTAssertEqual(try s.passkeys(), [], version)
            }
        }
    }

    func testAnOriginTheListDoesNotNameIsASecurityError() throws {
        let s = try scenario(origins: ["https://example.com", "https://example.de"])
        let failure = s.failure { try self.create(s, from: self.related) }
        XCTAssertEqual(failure?.error.name, .securityError)
        XCTAssertTrue(failure?.error.message.contains("not among the related origins") == true, failure?.error.message ?? "")
        XCTAssertEqual(try s.passkeys(), [])
    }

    func testWithoutAListTheRPIDIsRefusedAsBefore() throws {
        let s = try scenario()
        XCTAssertEqual(s.failure { try self.create(s, from: self.related) }?.error.name, .securityError)
    }

    func testOnlyTheFirstFiveLabelsCount() throws {
        // Five other labels fill the limit; a sixth label's origin is skipped even though it is listed.
        let five = ["a", "b", "c", "d", "e"].map { "https://\($0)-shop.com" }
        let s = try scenario(origins: five + [related])
        XCTAssertEqual(s.failure { try self.create(s, from: self.related) }?.error.name, .securityError)
        // An origin of a label already seen still counts after the limit is reached.
        let t = try scenario(origins: five + ["https://www.a-shop.com"])
        XCTAssertNoThrow(try create(t, from: "https://www.a-shop.com"))
        // example.co.uk's label is "example", the same as example.com's: both fit in the five.
        let u = try scenario(origins: ["https://example.com", "https://a-shop.com", "https://b-shop.com", "https://c-shop.com",
                                       "https://d-shop.com", related])
        XCTAssertNoThrow(try create(u, from: related))
    }

    func testAnEntryThatIsNotAnOriginIsSkipped() throws {
        let s = try scenario(origins: ["not a url", "http://example.co.uk", "", related])
        XCTAssertNoThrow(try create(s, from: related))
    }

    func testFirefoxHasNoRelatedOriginRequests() throws {
        let s = try scenario("bitwarden", platform: .firefox, origins: [related])
        XCTAssertEqual(s.failure { try self.create(s, from: self.related) }?.error.name, .securityError)
    }

    func testTheSettingIsCheckedAndKeptInTheProfile() throws {
        var profile = Profile(name: "p")
        try profile.set("relatedOrigins", .object([("example.com", .array([.string(related)]))]))
        XCTAssertEqual(try Profile(name: "p", json: profile.json).relatedOrigins, ["example.com": [related]])
        for bad: JSONValue in [.string("x"), .object([("example.com", .string(related))]), .object([("not a domain", .array([]))]),
                               .object([("example.com", .array([.number(1)]))])] {
            XCTAssertThrowsError(try profile.set("relatedOrigins", bad), "\(bad)")
        }
    }

    /// Chrome rejects an RP ID inside the caller's public suffix (kRejectRpIdsInsideCallersPublicSuffix, on by default
    /// from M152): alice.github.io cannot claim github.io, even with a related-origins list naming it.
    func testAnRPIDThatIsTheCallersPublicSuffixIsRefusedByEveryPack() throws {
        for pack in ["gpm", "gpm-pre-m144", "bitwarden", "1password", "keepassxc", "apple", "security-key"] {
            let s = try ProviderScenario(pack: pack) { $0.relatedOrigins = ["github.io": ["https://alice.github.io"]] }
            var options = try s.creationOptions(conditional: false)
            options.rp.id = "github.io"
            let failure = s.failure { try s.engine().create(options, caller: try Caller(origin: "https://alice.github.io")) }
            XCTAssertEqual(failure?.error.name, .securityError, pack)
            XCTAssertEqual(try s.passkeys(), [], pack)
            let get = s.failure { try s.engine().get(try RequestOptions(json: requestOptionsJSON(rpID: "github.io")), caller: try Caller(origin: "https://alice.github.io")) }
            XCTAssertEqual(get?.error.name, .securityError, pack)
        }
    }
}
