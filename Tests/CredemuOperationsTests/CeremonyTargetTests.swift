import CredemuEngine
import CredemuTestSupport
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// One path for every ceremony target: a profile and a device whose one account is that profile, on its platform,
/// give the same answers, refusals included.
final class CeremonyTargetTests: XCTestCase {
    let origin = "https://www.example.com"
    let targets: [CeremonyTarget] = [.profile("default"), .device("desk")]

    func makeOperations() throws -> (Operations, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        _ = try ops.createDevice("desk", settings: [("platform", "chrome-desktop"), ("providers", "default")])
        return (ops, directory)
    }

    func request(_ options: String, pick: String? = nil, platform: String? = nil) -> CeremonyRequest {
        CeremonyRequest(options: .text(options), origin: origin, platform: platform, pick: pick)
    }

    /// The error a refusal carries, as the front ends render it.
    func refusal(_ body: () throws -> Answer) -> JSONValue? {
        do { _ = try body() } catch let error as OperationError { return error.json } catch { return nil }
        return nil
    }

    /// A registration's flags and shape, without what is random (IDs, keys, signatures).
    func shape(_ response: JSONValue) throws -> [String] {
        let data = try XCTUnwrap(response["response"]?["authenticatorData"]?.stringValue.flatMap(Base64URL.decode))
        return [String(data[32]), response["type"]?.stringValue ?? "", response["authenticatorAttachment"]?.stringValue ?? "",
                response["clientExtensionResults"]?.serialized() ?? ""]
    }

    func testAProfileAndADeviceOfThatOneAccountAnswerAlike() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        var shapes: [[String]] = []
        var ids: [String] = []
        for (n, target) in targets.enumerated() {
            let created = try ops.create(target, request(creationOptionsJSON(userID: Array("user-\(n)".utf8), userName: "user-\(n)")))
            XCTAssertEqual(created.accounts, ["default"], "\(target)")
            shapes.append(try shape(created.response))
            ids.append(try XCTUnwrap(created.response["id"]?.stringValue))
        }
        XCTAssertEqual(shapes[0], shapes[1])
        for target in targets {
            // Each target signs in with the passkey the other made: they are the one account's.
            for id in ids {
                let got = try ops.get(target, request(requestOptionsJSON(allow: [Base64URL.decode(id)!])))
                XCTAssertEqual(got.response["id"]?.stringValue, id)
                XCTAssertEqual(got.accounts, ["default"])
            }
        }
        XCTAssertEqual(try ops.capabilities(.profile("default")).response, try ops.capabilities(.device("desk")).response)
        let unknown = #"{"rpId": "www.example.com", "credentialId": "AAAA"}"#
        XCTAssertEqual(try ops.signal(.profile("default"), kind: "unknown", request(unknown)), try ops.signal(.device("desk"), kind: "unknown", request(unknown)))
    }

    func testTheirRefusalsAreTheSame() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let refusals: [(String, (CeremonyTarget) throws -> Answer)] = [
            ("an algorithm GPM does not make", { try ops.create($0, self.request(creationOptionsJSON(algorithms: [-257]))) }),
            ("malformed options", { try ops.create($0, self.request("{nope")) }),
            ("an RP ID of another site", { try ops.get($0, self.request(#"{"challenge": "AAAA", "rpId": "other.example"}"#)) }),
            ("a pick that is not base64url", { try ops.get($0, self.request(requestOptionsJSON(), pick: "!!")) }),
            ("a signal of no kind", { Answer(response: .null, accounts: try ops.signal($0, kind: "bogus", self.request("{}"))) }),
            // Refused before a device routes them (issue 31): each must be logged as the profile logs it.
            ("a get from an origin that may not use the RP ID", {
                try ops.get($0, CeremonyRequest(options: .text(requestOptionsJSON(rpID: "example.com")), origin: "https://example.org")) }),
            ("a pick from an origin that may not use the RP ID", {
                try ops.get($0, CeremonyRequest(options: .text(requestOptionsJSON(rpID: "example.com")), origin: "https://example.org", pick: "AAAA")) }),
            ("a signal with a malformed credential ID", {
                Answer(response: .null, accounts: try ops.signal($0, kind: "unknown", self.request(#"{"rpId": "www.example.com", "credentialId": "!!"}"#))) }),
            ("a signal for another site's RP ID", {
                Answer(response: .null, accounts: try ops.signal($0, kind: "accepted",
                                                                   self.request(#"{"rpId": "other.example", "userId": "AAAA", "allAcceptedCredentialIds": []}"#))) }),
        ]
        /// The log entries `body` added to the one account, without the member that names the device.
        func logged(_ body: () -> Void) throws -> [[String]] {
            let before = try ops.vault.scoped(to: "default").events(limit: 100_000).count
            body()
            return try ops.vault.scoped(to: "default").events(limit: 100_000).dropFirst(before).map { e in
                let detail = (e.detail.objectValue ?? []).filter { $0.0 != "device" }
                return [e.kind, e.outcome, e.reason, JSONValue.object(detail).serialized()]
            }
        }
        for (what, body) in refusals {
            var profile: JSONValue?, device: JSONValue?
            let profileLog = try logged { profile = refusal { try body(.profile("default")) } }
            let deviceLog = try logged { device = refusal { try body(.device("desk")) } }
            XCTAssertNotNil(profile, what)
            XCTAssertEqual(profile, device, what)
            XCTAssertEqual(profileLog, deviceLog, "the device's log says what the profile's says: \(what)")
        }
        XCTAssertTrue(try ops.listPasskeys("default").isEmpty, "no refusal made a passkey")
    }

    func testOnlyAProfileTakesAnotherPlatformAndADeviceRefusesOneAlike() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        XCTAssertNoThrow(try ops.capabilities(.profile("default"), platform: "chrome-android"))
        for body in [{ _ = try ops.capabilities(.device("desk"), platform: "chrome-android") },
                     { _ = try ops.create(.device("desk"), self.request(creationOptionsJSON(), platform: "chrome-android")) }] {
            XCTAssertThrowsError(try body()) { XCTAssertEqual(($0 as? OperationError)?.code, .invalidInput) }
        }
    }
}
