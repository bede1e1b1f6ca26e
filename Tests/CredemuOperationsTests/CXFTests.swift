import CredemuEngine
import CredemuTestSupport
import Signing
import Vault
import WebAuthn
import XCTest
@testable import CredemuOperations

/// `vault import/export --format cxf` and `vault move` (issue 36): the FIDO Credential Exchange Format 1.0 into and
/// out of a profile, every fault refused by its member's path with the vault unchanged, and a move between packs.
final class CXFTests: XCTestCase {
    let origin = "https://login.example.com"

    func makeOperations() throws -> (Operations, TemporaryDirectory) {
        let (vault, directory) = try makeTestVault()
        let ops = try Operations(vault: vault, registry: try PolicyRegistry())
        _ = try ops.createProfile("gpm", settings: [("pack", "gpm")], allowPackPath: false)
        _ = try ops.createProfile("apple", settings: [("pack", "apple")], allowPackPath: false)
        _ = try ops.createProfile("key1", settings: [("pack", "security-key")], allowPackPath: false)
        return (ops, directory)
    }

    func refusal(_ body: () throws -> Void) -> OperationError? {
        do { try body() } catch let error as OperationError { return error } catch { return nil }
        return nil
    }

    /// A passkey registered by a page's ceremony, and a saved password, in `profile`.
    func seed(_ ops: Operations, _ profile: String) throws -> [UInt8] {
        let answer = try ops.create(.profile(profile), CeremonyRequest(options: .text(creationOptionsJSON()), origin: origin))
        _ = try ops.savePassword(profile, origin: origin, username: "alice", password: "hunter2")
        return try XCTUnwrap(Base64URL.decode(answer.response["rawId"]?.stringValue ?? ""))
    }

    func signsIn(_ ops: Operations, _ profile: String, _ id: [UInt8]) throws -> AuthenticatorData {
        let challenge = Array(repeating: UInt8(3), count: 32)
        let answer = try ops.get(.profile(profile), CeremonyRequest(options: .text(requestOptionsJSON(challenge: challenge, allow: [id])), origin: origin))
        let response = try AuthenticationResponse(answer: answer.response)
        let record = try XCTUnwrap(try ops.vault.scoped(to: profile).passkey(id: id))
        _ = try RPCheck.assertion(response, publicKey: record.publicKey, challenge: challenge, origin: origin, rpID: "example.com")
        return try AuthenticatorData(bytes: response.authenticatorData)
    }

    /// A phone with two provider accounts, GPM's `google` and a third party's `other`, that both hold one passkey
    /// (registered in `google`, moved to `other` keeping the source's copy).
    func sharedOnAPhone() throws -> (Operations, [UInt8], TemporaryDirectory) {
        let (ops, directory) = try makeOperations()
        _ = try ops.createProfile("google", settings: [("pack", "gpm"), ("platform", "android")], allowPackPath: false)
        _ = try ops.createProfile("other", settings: [("pack", "generic-third-party"), ("platform", "android")], allowPackPath: false)
        _ = try ops.createDevice("phone", settings: [("platform", "android"), ("providers", .array(["google", "other"]))])
        let id = try seed(ops, "google")
        _ = try ops.moveCredentials(from: "google", to: "other", keepSource: true)
        return (ops, id, directory)
    }

    /// The document's credentials, without the header's timestamp: what a round trip must keep.
    func credentials(_ document: JSONValue) -> [JSONValue] {
        (document["accounts"]?.arrayValue ?? []).flatMap { $0["items"]?.arrayValue ?? [] }.flatMap { $0["credentials"]?.arrayValue ?? [] }
    }

    /// Everything the vault holds, secrets included: unchanged means this is equal.
    func snapshot(_ ops: Operations) throws -> String { try ops.exportFixture(includeSecrets: true) }

    func testACXFDocumentFromGPMImportsIntoAppleSignsInAndRoundTrips() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try seed(ops, "gpm")
        let (document, leftOut) = try ops.exportCXF("gpm", includeSecrets: true)
        XCTAssertEqual(leftOut, [])
        XCTAssertEqual(document["version"]?["major"], 1)
        XCTAssertEqual(credentials(document).map { $0["type"]?.stringValue }, ["passkey", "basic-auth"])

        let (other, _e) = try makeOperations()
        _ = _e
        let answer = try other.importCredentials("apple", format: .cxf, document.serialized())
        XCTAssertEqual(answer["imported"]?["passkeys"], 1)
        XCTAssertEqual(answer["imported"]?["passwords"], 1)
        let data = try signsIn(other, "apple", id)
        XCTAssertEqual(data.signCount, 0, "an imported passkey keeps no counter (CXF §Passkey)")
        XCTAssertEqual(credentials(try other.exportCXF("apple", includeSecrets: true).document), credentials(document), "export after import gives the same credentials")
    }

    func testExportWithoutSecretsLeavesOutKeysAndPasswordsAndIsRefusedOnImport() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try seed(ops, "gpm")
        let document = try ops.exportCXF("gpm", includeSecrets: false).document
        XCTAssertNil(credentials(document)[0]["key"])
        XCTAssertNil(credentials(document)[1]["password"])
        let before = try snapshot(ops)
        let error = refusal { _ = try ops.importCredentials("apple", format: .cxf, document.serialized()) }
        XCTAssertEqual(error?.message, "cxf.accounts[0].items[0].credentials[0].key is required.")
        XCTAssertEqual(try snapshot(ops), before)
    }

    func testAPasskeyWithACounterIsLeftOutOfTheExport() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try seed(ops, "key1")
        _ = try signsIn(ops, "key1", id)
        let (document, leftOut) = try ops.exportCXF("key1", includeSecrets: true)
        XCTAssertEqual(leftOut, [Base64URL.encode(id)])
        XCTAssertEqual(credentials(document).map { $0["type"]?.stringValue }, ["basic-auth"])
    }

    /// A valid document of the kind the spec's text describes, to break one member at a time.
    func validDocument(_ ops: Operations) throws -> JSONValue {
        _ = try seed(ops, "gpm")
        return try ops.exportCXF("gpm", includeSecrets: true).document
    }

    /// Replaces the value at `path` (keys and indexes) in `value`; `nil` removes the member.
    func replacing(_ value: JSONValue, _ path: [Any], with new: JSONValue?) -> JSONValue {
        guard let head = path.first else { return new ?? .null }
        let rest = Array(path.dropFirst())
        if let key = head as? String, let members = value.objectValue {
            var out = members.filter { $0.0 != key || !(rest.isEmpty && new == nil) }
            if let i = out.firstIndex(where: { $0.0 == key }) {
                out[i].1 = replacing(out[i].1, rest, with: new)
            } else if let new, rest.isEmpty {
                out.append((key, new))
            }
            return .object(out)
        }
        if let index = head as? Int, var items = value.arrayValue {
            items[index] = replacing(items[index], rest, with: new)
            return .array(items)
        }
        return value
    }

    func testEachKindOfFaultIsRefusedNamingTheFieldAndTheVaultIsUnchanged() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let good = try validDocument(ops)
        let (importer, _e) = try makeOperations()
        _ = _e
        let passkey: [Any] = ["accounts", 0, "items", 0, "credentials", 0]
        let rsaEvenExponent = try HostileKeys.rsa(try SigningKeys.generate(.rs256).pkcs8, replacing: [2: [0x01, 0x00, 0x00]])
        let cases: [(String, [Any], JSONValue?, String)] = [
            ("a major version credemu does not read", ["version", "major"], 2, "cxf.version.major must be 1"),
            ("no exporterRpId", ["exporterRpId"], nil, "cxf.exporterRpId is required"),
            ("a timestamp that is a string", ["timestamp"], "yesterday", "cxf.timestamp must be a number"),
            ("no accounts", ["accounts"], nil, "cxf.accounts is required"),
            ("an account id that is not base64url", ["accounts", 0, "id"], "not base64url!", "cxf.accounts[0].id"),
            ("an item id over 64 bytes", ["accounts", 0, "items", 0, "id"], .string(Base64URL.encode(Array(repeating: 1, count: 65))), "cxf.accounts[0].items[0].id must decode to 1 to 64 bytes"),
            ("an item without credentials", ["accounts", 0, "items", 0, "credentials"], nil, "cxf.accounts[0].items[0].credentials is required"),
            ("a credential without a type", passkey + ["type"], nil, "cxf.accounts[0].items[0].credentials[0].type is required"),
            ("a credential ID in standard base64", passkey + ["credentialId"], "ab+/", "cxf.accounts[0].items[0].credentials[0].credentialId"),
            ("an rpId that is not a domain", passkey + ["rpId"], "https://example.com", "cxf.accounts[0].items[0].credentials[0].rpId must be a valid RP ID"),
            ("no username", passkey + ["username"], nil, "cxf.accounts[0].items[0].credentials[0].username is required"),
            ("no userDisplayName", passkey + ["userDisplayName"], nil, "cxf.accounts[0].items[0].credentials[0].userDisplayName is required"),
            ("a user handle over 64 bytes", passkey + ["userHandle"], .string(Base64URL.encode(Array(repeating: 1, count: 65))), "cxf.accounts[0].items[0].credentials[0].userHandle must decode to 1 to 64 bytes"),
            ("a key that is not PKCS#8", passkey + ["key"], .string(Base64URL.encode(Array("not a key".utf8))), "cxf.accounts[0].items[0].credentials[0].key must be a PKCS#8 DER private key"),
            ("an RSA key with an even exponent", passkey + ["key"], .string(Base64URL.encode(rsaEvenExponent)), "cxf.accounts[0].items[0].credentials[0].key must be a PKCS#8 DER private key"),
            ("a P-256 key whose point is not its scalar's", passkey + ["key"], .string(Base64URL.encode(try HostileKeys.p256WithAnotherKeysPoint())), "cxf.accounts[0].items[0].credentials[0].key must be a PKCS#8 DER private key"),
            ("a largeBlob without its size", passkey + ["fido2Extensions"], .object([("largeBlob", .object([("data", "AAAA")]))]), "cxf.accounts[0].items[0].credentials[0].fido2Extensions.largeBlob.uncompressedSize is required"),
            ("a password field of the wrong fieldType", ["accounts", 0, "items", 1, "credentials", 0, "password", "fieldType"], "string", "cxf.accounts[0].items[1].credentials[0].password.fieldType must be \"concealed-string\""),
            ("a password without a site", ["accounts", 0, "items", 1, "scope"], nil, "cxf.accounts[0].items[1].scope.urls is required for a basic-auth credential"),
            ("a password at an http site", ["accounts", 0, "items", 1, "scope", "urls"], .array(["http://example.com/"]), "cxf.accounts[0].items[1].scope.urls[0] must be an https URL"),
        ]
        let before = try snapshot(importer)
        for (what, path, value, message) in cases {
            let document = replacing(good, path, with: value)
            let error = refusal { _ = try importer.importCredentials("apple", format: .cxf, document.serialized()) }
            XCTAssertTrue(error?.message.contains(message) == true, "\(what): \(error?.message ?? "accepted")")
            XCTAssertEqual(try snapshot(importer), before, "\(what): the vault is unchanged")
        }
        // The same passkey twice, and a passkey the vault holds: conflicts, nothing stored.
        var items = good["accounts"]?.arrayValue?.first?["items"]?.arrayValue ?? []
        items.append(items[0])
        let twice = replacing(good, ["accounts", 0, "items"], with: .array(items))
        XCTAssertEqual(refusal { _ = try importer.importCredentials("apple", format: .cxf, twice.serialized()) }?.code, .conflict)
        _ = try importer.importCredentials("apple", format: .cxf, replacing(good, ["accounts", 0, "items"], with: .array([items[0]])).serialized())
        let held = try snapshot(importer)
        XCTAssertEqual(refusal { _ = try importer.importCredentials("apple", format: .cxf, good.serialized()) }?.code, .conflict)
        XCTAssertEqual(try snapshot(importer), held, "the password of the refused document was not stored either")
    }

    func testAMoveFromGPMToAppleCarriesTheCredentialAndRemovesTheSource() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        let id = try seed(ops, "gpm")
        _ = try signsIn(ops, "gpm", id)
        let moved = try ops.moveCredentials(from: "gpm", to: "apple", keepSource: false)
        XCTAssertEqual(moved["moved"]?["passkeys"], 1)
        XCTAssertEqual(moved["moved"]?["passwords"], 1)
        XCTAssertEqual(moved["importer"]?["pack"], "apple")
        XCTAssertNil(try ops.vault.scoped(to: "gpm").passkey(id: id))
        XCTAssertEqual(try ops.vault.scoped(to: "gpm").allPasswords().count, 0)
        XCTAssertEqual(try ops.vault.scoped(to: "apple").allPasswords().map(\.username), ["alice"])
        XCTAssertEqual(try signsIn(ops, "apple", id).signCount, 0)

        _ = try ops.savePassword("gpm", origin: origin, username: "alice", password: "hunter2")
        let refused = try snapshot(ops)
        XCTAssertEqual(refusal { _ = try ops.moveCredentials(from: "gpm", to: "apple", keepSource: false) }?.code, .conflict,
                       "a password the importer holds already is a conflict")
        XCTAssertEqual(try snapshot(ops), refused, "and the refused move removed nothing")
    }

    func testAKeepSourceMoveLeavesBothManagersSigningInWithOneCredentialIDEachByItsOwnPackAndSignals() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.createProfile("hello", settings: [("pack", "windows-hello")], allowPackPath: false)
        let id = try seed(ops, "gpm")
        let moved = try ops.moveCredentials(from: "gpm", to: "hello", keepSource: true)
        XCTAssertEqual(moved["kept"], true)
        XCTAssertEqual(moved["moved"]?["passkeys"], 1)
        XCTAssertEqual(moved["credentialIds"]?.arrayValue?.first?.stringValue, Base64URL.encode(id))
        // Both hold it, each answering by its own pack: GPM's backup-eligible passkey, Windows Hello's not.
        XCTAssertTrue(try signsIn(ops, "gpm", id).flags.contains(.backupEligible))
        XCTAssertFalse(try signsIn(ops, "hello", id).flags.contains(.backupEligible))
        XCTAssertEqual(try ops.vault.scoped(to: "gpm").allPasswords().map(\.username), ["alice"], "the source kept its password too")
        XCTAssertEqual(refusal { _ = try ops.moveCredentials(from: "gpm", to: "hello", keepSource: true) }?.code, .conflict,
                       "a second copy into the same profile is a conflict: one profile holds a credential ID once")

        // The RP's signal reaches the provider it is sent to, and changes that profile's copy only.
        let unknown = "{\"rpId\":\"example.com\",\"credentialId\":\"\(Base64URL.encode(id))\"}"
        _ = try ops.signal(.profile("gpm"), kind: "unknown", CeremonyRequest(options: .text(unknown), origin: origin))
        XCTAssertEqual(try ops.vault.scoped(to: "gpm").passkey(id: id)?.hidden, true, "GPM hid its copy (signals.unknownCredential hide)")
        XCTAssertEqual(try ops.vault.scoped(to: "hello").passkey(id: id)?.hidden, false, "Windows Hello's copy is untouched")
        XCTAssertFalse(try signsIn(ops, "hello", id).flags.contains(.backupEligible))
        _ = try ops.signal(.profile("hello"), kind: "unknown", CeremonyRequest(options: .text(unknown), origin: origin))
        XCTAssertNotNil(try ops.vault.scoped(to: "hello").passkey(id: id), "Hello never hears a signal (signals.forwarded false)")
    }

    func testAPasskeyBothManagersHoldIsOfferedByBothOnADeviceWithBoth() throws {
        let (ops, id, _d) = try sharedOnAPhone()
        _ = _d
        let offer = try ops.autofillOffer(.device("phone"), CeremonyRequest(options: .text(requestOptionsJSON()), origin: origin))
        let offered = offer["passkeys"]?.arrayValue?.map { [$0["credentialId"]?.stringValue ?? "", $0["provider"]?.stringValue ?? ""] }
        XCTAssertEqual(offered, [[Base64URL.encode(id), "google"], [Base64URL.encode(id), "other"]])
    }

    func testAPickNamingAProviderOnADeviceIsAnsweredByThatProvidersCopyOfASharedPasskey() throws {
        let (ops, id, _d) = try sharedOnAPhone()
        _ = _d
        let options = requestOptionsJSON(allow: [id])
        func signIn(pick: String?) throws -> [String] {
            try ops.get(.device("phone"), CeremonyRequest(options: .text(options), origin: origin, pick: pick)).accounts
        }
        XCTAssertEqual(try signIn(pick: Base64URL.encode(id)), ["google"], "an ID alone: the first provider in the platform's order holding it")
        XCTAssertEqual(try signIn(pick: Base64URL.encode(id) + "@other"), ["other"], "the second provider's entry")
        XCTAssertEqual(try signIn(pick: Base64URL.encode(id) + "@google"), ["google"])
        // A queued pick routes the get as a given one does.
        _ = try ops.queueDecisions(.device("phone"), ["pick:" + Base64URL.encode(id) + "@other"])
        XCTAssertEqual(try signIn(pick: nil), ["other"])
        XCTAssertEqual(try ops.vault.scoped(to: "other").passkey(id: id)?.signCount, 0)
        // An account that holds no entry of it, on the device or not, is no pick of it: nothing is signed.
        for account in ["gpm", "nobody"] {
            let refused = refusal { _ = try signIn(pick: Base64URL.encode(id) + "@" + account) }
            XCTAssertEqual(refused?.name, .web(.notAllowedError), account)
        }
        XCTAssertEqual(refusal { _ = try signIn(pick: Base64URL.encode(id) + "@bad name") }?.code, .invalidInput)
        // A page is never told which account holds a passkey, so it cannot name one (a guess would probe the device).
        let page = refusal { _ = try ops.get(.device("phone"), CeremonyRequest(options: .text(options), origin: origin, pick: Base64URL.encode(id) + "@other",
                                                                                restrictedTo: origin)) }
        XCTAssertEqual(page?.code, .invalidInput)
        XCTAssertEqual(refusal { _ = try ops.pickOffered(.device("phone"), credentialID: Base64URL.encode(id) + "@other", ceremony: nil, restrictedTo: origin) }?.code,
                       .invalidInput)
        XCTAssertEqual(try ops.get(.device("phone"), CeremonyRequest(options: .text(options), origin: origin, pick: Base64URL.encode(id), restrictedTo: origin)).accounts,
                       ["google"])
        // On a profile, a pick naming another account picks nothing the profile offers.
        let other = refusal { _ = try ops.get(.profile("google"), CeremonyRequest(options: .text(options), origin: origin, pick: Base64URL.encode(id) + "@other")) }
        XCTAssertEqual(other?.name, .web(.notAllowedError))
        XCTAssertEqual(try ops.get(.profile("google"), CeremonyRequest(options: .text(options), origin: origin, pick: Base64URL.encode(id) + "@google")).accounts, ["google"])
    }

    func testAMoveIntoAPackWithoutBackupEligibilityRecordsTheFindingAnRPThatChecksBENeeds() throws {
        let (ops, _d) = try makeOperations()
        _ = _d
        _ = try ops.createProfile("hello", settings: [("pack", "windows-hello")], allowPackPath: false)
        let id = try seed(ops, "gpm")
        XCTAssertTrue(try signsIn(ops, "gpm", id).flags.contains(.backupEligible))
        _ = try ops.moveCredentials(from: "gpm", to: "hello", keepSource: false)
        XCTAssertFalse(try signsIn(ops, "hello", id).flags.contains(.backupEligible), "windows-hello's passkeys are not backup eligible")
        let codes = try Finding.list(ops.vault.scoped(to: "hello")).map(\.code)
        XCTAssertTrue(codes.contains("backupEligibilityChangedByMove"), "\(codes)")
        XCTAssertTrue(codes.contains("aaguidChangedByMove"), "\(codes)")
        XCTAssertFalse(try Finding.list(ops.vault.scoped(to: "gpm")).contains { $0.code.hasSuffix("ByMove") }, "the importer's log holds them")
    }

    func testAnImporterWhoseImportBackupFlagsIsNotBackedUpAssertsBSZeroAndTheMoveSaysSo() throws {
        let (ops, directory) = try makeOperations()
        var pack = try JSONValue.parse(String(contentsOfFile: providersDirectory + "/apple.json", encoding: .utf8))
        pack = .object((pack.objectValue ?? []).map { key, value in
            switch key {
            case "id": return (key, "apple-not-backed-up")
            case "knobs":
                return (key, .object((value.objectValue ?? []).map { name, knob in
                    name == "import.backupFlags" ? (name, .object([("value", "notBackedUp"), ("source", "credemu-choice")])) : (name, knob)
                }))
            default: return (key, value)
            }
        })
        let path = directory.path + "/apple-not-backed-up.json"
        try pack.serialized().write(toFile: path, atomically: true, encoding: .utf8)
        _ = try ops.createProfile("fresh", settings: [("packPath", .string(path))], allowPackPath: true)
        let id = try seed(ops, "gpm")
        let moved = try ops.moveCredentials(from: "gpm", to: "fresh", keepSource: false)
        XCTAssertEqual(moved["importer"]?["backupState"], false)
        let flags = try signsIn(ops, "fresh", id).flags
        XCTAssertTrue(flags.contains(.backupEligible))
        XCTAssertFalse(flags.contains(.backedUp), "import.backupFlags notBackedUp: BS 0 until the provider backs it up")
        XCTAssertTrue(try Finding.list(ops.vault.scoped(to: "fresh")).contains { $0.code == "backupStateChangedByMove" })
    }
}
