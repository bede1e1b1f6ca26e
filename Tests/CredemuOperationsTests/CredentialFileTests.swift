import CredemuEngine
import CredemuTestSupport
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// `vault import/export --format playwright|webdriver` (issue 33.2): Playwright's credential list and storage state,
/// WebDriver's Get Credentials JSON (and CDP's spelling of it), into and out of one profile, all or nothing.
final class CredentialFileTests: XCTestCase {
    let origin = "https://login.example.com"

    func makeOperations() throws -> (Operations, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        _ = try ops.createProfile("key1", settings: [("pack", "security-key")], allowPackPath: false)
        return (ops, directory)
    }

    func refusal(_ body: () throws -> Void) -> OperationError? {
        do { try body() } catch let error as OperationError { return error } catch { return nil }
        return nil
    }

    /// Passkeys in `profile`: two seeded as Playwright would, one registered by a page's ceremony.
    func seedThree(_ ops: Operations, _ profile: String = "default") throws {
        _ = try ops.createPlaywrightCredential(profile, .object([("rpId", "example.com"), ("signCount", 4)]))
        _ = try ops.createPlaywrightCredential(profile, .object([("rpId", "localhost"), ("userName", "bob")]))
        _ = try ops.create(.profile(profile), CeremonyRequest(options: .text(creationOptionsJSON(algorithms: profile == "key1" ? [-8] : [-7])), origin: origin))
    }

    func text(_ value: JSONValue) -> String { value.serialized() }

    /// A file's credentials by credential ID: passkeys imported together are made at one time, so they list by ID.
    func byID(_ file: JSONValue) -> [JSONValue] {
        (file.arrayValue ?? []).sorted { ($0["id"] ?? $0["credentialId"])?.stringValue ?? "" < ($1["id"] ?? $1["credentialId"])?.stringValue ?? "" }
    }

    func signsIn(_ ops: Operations, _ profile: String, _ credential: JSONValue) throws -> UInt32 {
        let id = try XCTUnwrap(Base64URL.decode(credential["id"]?.stringValue ?? credential["credentialId"]?.stringValue ?? ""))
        let challenge = Array(repeating: UInt8(3), count: 32)
        let answer = try ops.get(.profile(profile), CeremonyRequest(options: .text(requestOptionsJSON(challenge: challenge, allow: [id])), origin: origin))
        let response = try AuthenticationResponse(answer: answer.response)
        let record = try XCTUnwrap(try ops.vault.scoped(to: profile).passkey(id: id))
        return try RPCheck.assertion(response, publicKey: record.publicKey, challenge: challenge, origin: origin, rpID: "example.com").signCount
    }

    func testAPlaywrightListAndAStorageStateRoundTripIntoAnotherVault() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        try seedThree(ops)
        let exported = try ops.exportCredentials("default", format: .playwright)
        XCTAssertEqual(exported.arrayValue?.count, 3)
        XCTAssertEqual(exported, .array(try ops.playwrightCredentials("default", rpID: nil, id: nil)), "the file is what get() lists")

        let (other, _e) = try makeOperations()
        _ = _e
        XCTAssertEqual(try other.importCredentials("default", format: .playwright, text(exported))["imported"]?["passkeys"], 3)
        XCTAssertEqual(byID(try other.exportCredentials("default", format: .playwright)), byID(exported))
        let exampleOne = try XCTUnwrap(exported.arrayValue?.first { $0["rpId"] == "example.com" })
        XCTAssertEqual(try signsIn(other, "default", exampleOne), 0, "the GPM default profile's counter stays zero")

        // The same list as Playwright 1.62's storage_state(credentials=True) writes it, into a security key that counts.
        let state = JSONValue.object([("cookies", .array([])), ("origins", .array([])), ("credentials", exported)])
        let (third, _f) = try makeOperations()
        _ = _f
        XCTAssertEqual(try third.importCredentials("key1", format: .playwright, text(state))["imported"]?["passkeys"], 3)
        XCTAssertEqual(try signsIn(third, "key1", exampleOne), 1)
    }

    func testAWebDriverListRoundTripsAndCDPsBase64SpellingIsRead() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        try seedThree(ops, "key1")
        let exported = try ops.exportCredentials("key1", format: .webdriver)
        XCTAssertEqual(exported.arrayValue?.count, 3)
        XCTAssertEqual(Set(exported.arrayValue?.compactMap { $0["signCount"]?.numberValue } ?? []), [0, 4], "numbers, never null")

        let (other, _e) = try makeOperations()
        _ = _e
        _ = try other.importCredentials("key1", format: .webdriver, text(.object([("value", exported)])))
        XCTAssertEqual(byID(try other.exportCredentials("key1", format: .webdriver)), byID(exported))
        let seeded = try XCTUnwrap(exported.arrayValue?.first { $0["signCount"] == 4 })
        XCTAssertEqual(try signsIn(other, "key1", seeded), 5)

        // CDP's WebAuthn.getCredentials: {"credentials": [...]}, byte strings in standard base64 with padding.
        let cdp = JSONValue.array((exported.arrayValue ?? []).map { item in
            .object((item.objectValue ?? []).map { key, value in
                guard ["credentialId", "privateKey", "userHandle"].contains(key), let bytes = Base64URL.decode(value.stringValue ?? "") else { return (key, value) }
                return (key, .string(Data(bytes).base64EncodedString()))
            })
        })
        let (third, _f) = try makeOperations()
        _ = _f
        _ = try third.importCredentials("key1", format: .webdriver, text(.object([("credentials", cdp)])))
        XCTAssertEqual(byID(try third.exportCredentials("key1", format: .webdriver)), byID(exported))
    }

    func testWebDriversNullCounterStaysZero() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let key = try SigningKeys.generate(.es256)
        let item = JSONValue.object([("credentialId", .string(Base64URL.encode([1, 2, 3, 4]))), ("isResidentCredential", false),
                                     ("rpId", "example.com"), ("privateKey", .string(Base64URL.encode(key.pkcs8))), ("signCount", .null)])
        _ = try ops.importCredentials("key1", format: .webdriver, text(.array([item])))
        XCTAssertEqual(try signsIn(ops, "key1", .object([("id", .string(Base64URL.encode([1, 2, 3, 4])))])), 0)
        XCTAssertEqual(try signsIn(ops, "key1", .object([("id", .string(Base64URL.encode([1, 2, 3, 4])))])), 0)
    }

    func testOneBadCredentialOrACollisionImportsNothing() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        try seedThree(ops)
        let good = try ops.exportCredentials("default", format: .playwright).arrayValue ?? []
        let (other, _e) = try makeOperations()
        _ = _e
        _ = try other.createPlaywrightCredential("default", good[0])
        let before = try other.exportCredentials("default", format: .playwright)
        let events = try other.events("default", kind: "vault", after: 0, limit: 100).count

        var hostile = good[1].objectValue ?? []
        hostile = hostile.map { $0.0 == "privateKey" ? ($0.0, .string(Base64URL.encode(try! HostileKeys.p256WithAnotherKeysPoint()))) : $0 }
        let cases: [(String, CredentialFileFormat, OperationError.Name)] = [
            (text(.array([good[2], .object(hostile)])), .playwright, .web(.typeError)),
            (text(.array([good[2], good[1], good[0]])), .playwright, .conflict),
            (text(.array([good[2], good[2]])), .playwright, .conflict),
            (text(.array([good[2], .string("x")])), .playwright, .web(.typeError)),
            (text(.object([("cookies", .array([]))])), .playwright, .web(.typeError)),
            (text(.object([("value", .array([good[2]]))])), .playwright, .web(.typeError)),
            ("{", .playwright, .web(.typeError)),
            (text(.array([good[2]])), .webdriver, .invalidArgument),
            (text(.number(3)), .webdriver, .web(.typeError)),
        ]
        for (file, format, name) in cases {
            let error = refusal { _ = try other.importCredentials("default", format: format, file) }
            XCTAssertEqual(error?.name, name, file)
        }
        XCTAssertEqual(refusal { _ = try other.importCredentials("nobody", format: .playwright, "[]") }?.name, .notFound)
        XCTAssertEqual(try other.exportCredentials("default", format: .playwright), before, "nothing was stored")
        XCTAssertEqual(try other.events("default", kind: "vault", after: 0, limit: 100).count, events, "nor logged")
    }
}
