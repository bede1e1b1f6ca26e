import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn
#if canImport(Glibc)
import Glibc
#endif

/// `credemu-bench scale [--events N] [size ...]`: what a ceremony, a signal and a finding review cost as the
/// vault grows. For each size, a fresh vault holds that many passkeys on one RP (one account each, except one
/// user with 1,000) and an event log of `--events` rows (default 100,000) of the kinds a real log has; then,
/// in-process, medians of:
///
/// - a discoverable get (no allow list) and a conditional get's dropdown (`autofillOffer`) on that RP;
/// - a signalAllAcceptedCredentials for the user with 1,000 passkeys, listing 1,000 IDs (one left out, a
///   different one each time: one passkey hidden, the previous one restored), its finding review included;
/// - a conditional create on an opted-out profile: the finding review (`reviewCreate`, which reads the log's
///   state for the origin and the account), then the silent opt-out;
/// - an unknownCredential signal for an ID the vault does not hold.
///
/// The goal: none grows with the vault (each figure at most 1.5 times the smallest vault's).
enum ScaleBench {
    static let rpID = "example.com"
    static let signalUserPasskeys = 1000

    struct Figures {
        var size: Int
        var populate: Double
        var get: Double
        var offer: Double
        var signal: Double
        var review: Double
        var unknown: Double
        var server: ServerFigures?
    }

    /// The same vault served by `credemu serve`: medians over HTTP (one keep-alive client), and the server's
    /// peak resident memory after them.
    struct ServerFigures {
        var get: Double
        var signal: Double
        var create: Double
        var peakMegabytes: Double
    }

    static func run(arguments: [String]) throws {
        var events = 100_000
        var sizes: [Int] = []
        var args = arguments[...]
        while let a = args.popFirst() {
            if a == "--events", let n = args.popFirst().flatMap({ Int($0) }) { events = n } else if let n = Int(a) { sizes.append(n) }
        }
        if sizes.isEmpty { sizes = [10_000, 100_000] }
        print("credemu-bench scale: one RP holding N passkeys, an event log of \(events) rows; medians in ms (in-process, release build)")
        let withServer = !arguments.contains("--no-server")
        print(Bench.pad("passkeys", 10) + Bench.pad("populate s", 12) + Bench.pad("get", 9) + Bench.pad("offer", 9)
              + Bench.pad("accepted(1000)", 16) + Bench.pad("create review", 15) + Bench.pad("unknown signal", 16)
              + (withServer ? Bench.pad("HTTP get", 10) + Bench.pad("HTTP accepted", 15) + Bench.pad("HTTP create", 13) + "server peak RSS MB" : ""))
        var all: [Figures] = []
        for size in sizes {
            let f = try measure(size: max(size, signalUserPasskeys + 1), events: events, server: withServer)
            all.append(f)
            var line = Bench.pad(String(f.size), 10) + Bench.pad(String(format: "%.1f", f.populate), 12) + Bench.pad(ms(f.get), 9)
                + Bench.pad(ms(f.offer), 9) + Bench.pad(ms(f.signal), 16) + Bench.pad(ms(f.review), 15) + Bench.pad(ms(f.unknown), 16)
            if let server = f.server {
                line += Bench.pad(ms(server.get), 10) + Bench.pad(ms(server.signal), 15) + Bench.pad(ms(server.create), 13)
                    + String(format: "%.0f", server.peakMegabytes)
            }
            print(line)
        }
        func ratios(_ f: Figures, _ first: Figures) -> [Double] {
            var r = [f.get / first.get, f.offer / first.offer, f.signal / first.signal, f.review / first.review, f.unknown / first.unknown]
            if let s = f.server, let s0 = first.server { r += [s.get / s0.get, s.signal / s0.signal, s.create / s0.create] }
            return r
        }
        if let first = all.first, all.count > 1 {
            var worst = 0.0
            for f in all.dropFirst() {
                let r = ratios(f, first)
                worst = max(worst, r.max()!)
                print(Bench.pad("ratio \(f.size) / \(first.size):", 26) + r.map { String(format: "%.2f", $0) }.joined(separator: "  "))
            }
            print("goal: no figure grows with the vault (ratio to the smallest at most 1.5): " + (worst <= 1.5 ? "met" : "NOT met"))
        }
        if let largest = all.last, let server = largest.server {
            print("goal: server peak RSS under 100 MB at \(largest.size) passkeys: "
                  + String(format: "%.0f MB, ", server.peakMegabytes) + (server.peakMegabytes < 100 ? "met" : "NOT met"))
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        print("max RSS \(usage.ru_maxrss / 1024) MB")
    }

    static func ms(_ seconds: Double) -> String { String(format: seconds < 0.01 ? "%.3f" : "%.1f", seconds * 1000) }

    /// The median time of `body`, run at least `minimum` times and for about `budget` seconds.
    static func median(minimum: Int = 5, budget: Double = 1.5, _ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        let start = DispatchTime.now().uptimeNanoseconds
        while times.count < minimum || Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 < budget {
            let t0 = DispatchTime.now().uptimeNanoseconds
            try body()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
            if times.count >= 100_000 { break }
        }
        return times.sorted()[times.count / 2]
    }

    static func measure(size: Int, events: Int, server withServer: Bool) throws -> Figures {
        let directory = NSTemporaryDirectory() + "credemu-bench-scale-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try Vault.open(path: directory + "/vault.db", key: .keyFile(path: directory + "/vault.key"), exclusive: true)
        var (figures, signalIDs) = try measure(vault: vault, size: size, events: events)
        vault.close()
        if withServer { figures.server = try serve(directory: directory, signalIDs: signalIDs) }
        return figures
    }

    /// Serves the vault in `directory` and measures a discoverable get, a 1,000-ID accepted list and a
    /// registration over HTTP, then reads the server's peak RSS.
    static func serve(directory: String, signalIDs: [[UInt8]]) throws -> ServerFigures {
        let server = try BenchServer(threads: 2, vault: (directory + "/vault.db", directory + "/vault.key"))
        defer { server.stop() }
        guard let connection = HTTPConnection(port: server.port) else { throw BenchFailure("cannot connect to the server") }
        func timed(_ path: String, _ body: () -> [UInt8]) throws -> Double {
            try median(minimum: 5, budget: 1.5) {
                guard let (status, answer) = connection.request("POST", path, body: body()), status == 200 else {
                    throw BenchFailure("\(path) failed")
                }
                _ = answer
            }
        }
        let get = try timed("/profiles/default/credentials/get") {
            Array(#"{"origin": "https://example.com", "options": {"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com"}}"#.utf8)
        }
        let userID = Base64URL.encode(Array("signal-user".utf8))
        var round = 0
        let signal = try timed("/profiles/default/signals/accepted") {
            round += 1
            var ids = signalIDs.map { "\"" + Base64URL.encode($0) + "\"" }
            ids.remove(at: round % ids.count)
            return Array(#"{"origin": "https://example.com", "options": {"rpId": "example.com", "userId": "\#(userID)", "allAcceptedCredentialIds": [\#(ids.joined(separator: ","))]}}"#.utf8)
        }
        var user = 50_000_000
        let create = try timed("/profiles/default/credentials/create") {
            user += 1
            return Array(#"{"origin": "https://example.com", "options": \#(Bench.creationOptions(algorithm: .es256, user: user))}"#.utf8)
        }
        return ServerFigures(get: get, signal: signal, create: create, peakMegabytes: server.peakResidentMegabytes ?? .nan)
    }

    static func measure(vault: Vault, size: Int, events: Int) throws -> (Figures, [[UInt8]]) {
        let clock = AdjustableClock(Date(timeIntervalSince1970: 1_800_000_000))
        let t0 = DispatchTime.now().uptimeNanoseconds
        let signalUser = Array("signal-user".utf8)
        let signalIDs = try populate(vault, passkeys: size, events: events, signalUser: signalUser, clock: clock)
        let populate = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9

        let engine = Engine(vault: vault, profile: Profile(name: vault.profile, pack: "webauthn-spec"), policy: SpecPolicy(), clock: clock)
        let optedOut = Engine(vault: vault, profile: Profile(name: vault.profile, pack: "webauthn-spec", automaticPasskeyUpgrades: false),
                              policy: SpecPolicy(), clock: clock)
        let caller = try Caller(origin: "https://" + rpID)
        let request = try RequestOptions(json: #"{"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com"}"#)
        let conditional = try RequestOptions(json: #"{"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com", "mediation": "conditional"}"#)

        let get = try median {
            clock.advance(by: 1)
            _ = try engine.get(request, caller: caller)
        }
        let offer = try median { _ = try engine.autofillOffer(conditional, caller: caller) }
        var round = 0
        let userID = Base64URL.encode(signalUser)
        let encoded = signalIDs.map(Base64URL.encode)
        let signal = try median(minimum: 3) {
            round += 1
            clock.advance(by: 1)
            var ids = encoded
            ids.remove(at: round % ids.count)
            try engine.signal(.allAcceptedCredentials(rpId: rpID, userId: userID, allAcceptedCredentialIds: ids), caller: caller)
        }
        var user = 0
        let review = try median {
            user += 1
            clock.advance(by: 1)
            let options = try CreationOptions(json: #"{"publicKey": "# + Bench.creationOptions(algorithm: .es256, user: user) + #", "mediation": "conditional"}"#)
            do {
                _ = try optedOut.create(options, caller: caller)
                print("scale: the opted-out conditional create made a passkey")
            } catch {}
        }
        let unknown = try median {
            clock.advance(by: 1)
            try engine.signal(.unknownCredential(rpId: rpID, credentialId: Base64URL.encode(SecureRandom.bytes(16))), caller: caller)
        }
        return (Figures(size: size, populate: populate, get: get, offer: offer, signal: signal, review: review, unknown: unknown, server: nil), signalIDs)
    }

    /// Fills the vault: `passkeys` on the RP (the signal user's 1,000 among them, a tenth of the others used
    /// once), and `events` log rows: gets, unknown signals for other credentials, autofills and password
    /// events at other origins, conditional creates for other users. Returns the signal user's credential IDs.
    static func populate(_ vault: Vault, passkeys: Int, events: Int, signalUser: [UInt8], clock: AdjustableClock) throws -> [[UInt8]] {
        let key = try SigningKeys.generate(.es256)
        let start = clock.now()
        var signalIDs: [[UInt8]] = []
        let batch = 20_000
        var n = 0
        while n < passkeys {
            try vault.transaction { () throws(VaultError) in
                for i in n..<min(passkeys, n + batch) {
                    let id = SecureRandom.bytes(16)
                    let mine = i < signalUserPasskeys
                    if mine { signalIDs.append(id) }
                    let created = start.addingTimeInterval(-Double(passkeys - i))
                    let record = PasskeyRecord(
                        credentialID: id, rpID: rpID, userHandle: mine ? signalUser : Array("user-\(i)".utf8),
                        userName: mine ? "signal@example.com" : "user\(i)@example.com", displayName: "User \(i)", algorithm: .es256,
                        publicKey: key.publicKey, createdAt: created,
                        lastUsedAt: i % 10 == 0 ? created.addingTimeInterval(Double(i % 997)) : nil)
                    try vault.insertPasskey(record, privateKey: key.pkcs8)
                }
            }
            n += batch
        }
        for i in 0..<events {
            let at = start.addingTimeInterval(-Double(events - i) / 10)
            let kind: String, outcome: String
            var detail: [(String, JSONValue)] = [("pack", "webauthn-spec"), ("platform", "chrome-desktop")]
            switch i % 10 {
            case 0, 1:
                (kind, outcome) = ("signal", "noop")
                detail += [("signal", "unknown"), ("origin", .string("https://other\(i % 50).example.org")), ("rpId", .string("other\(i % 50).example.org")),
                           ("credentialId", .string(Base64URL.encode(SecureRandom.bytes(16))))]
            case 2:
                (kind, outcome) = ("autofill", "filledAndSubmitted")
                detail += [("origin", .string("https://other\(i % 50).example.org")), ("username", .string("u\(i)@example.org"))]
            case 3:
                (kind, outcome) = ("password", "used")
                detail += [("origin", .string("https://other\(i % 50).example.org")), ("username", .string("u\(i)@example.org"))]
            case 4:
                (kind, outcome) = ("create", "noop")
                detail += [("origin", .string("https://other\(i % 50).example.org")), ("rpId", "example.org"),
                           ("userName", .string("u\(i)@example.org")), ("mediation", "conditional")]
            default:
                (kind, outcome) = ("get", "success")
                detail += [("origin", "https://example.com"), ("rpId", "example.com"), ("mediation", "modal"), ("allowCredentials", 0),
                           ("credentialId", .string(Base64URL.encode(SecureRandom.bytes(16)))), ("userName", .string("user\(i)@example.com")),
                           ("signCount", 0)]
            }
            try vault.appendEvent(kind: kind, outcome: outcome, reason: "success", detail: .object(detail), at: at)
        }
        try vault.flushEvents()
        return signalIDs
    }
}
