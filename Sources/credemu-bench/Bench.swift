import CredemuEngine
import Foundation
import Signing
import Vault
import WebAuthn

/// `make bench`: ceremonies per second in-process, beside the raw cost of the same library's keygen and
/// signature measured in the same run (the physical floor; see platform-notes.md).
enum Bench {
    struct Rate {
        var perSecond: Double
        var iterations: Int
    }

    /// Runs `body` repeatedly for about `seconds` (at least `minimum` times) and reports the rate.
    static func measure(seconds: Double, minimum: Int = 3, _ body: () throws -> Void) rethrows -> Rate {
        var iterations = 0
        let start = DispatchTime.now().uptimeNanoseconds
        var elapsed = 0.0
        while elapsed < seconds || iterations < minimum {
            try body()
            iterations += 1
            elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        return Rate(perSecond: Double(iterations) / elapsed, iterations: iterations)
    }

    static func run(arguments: [String]) {
        if arguments.first == "profile-create" {
            do {
                try withBenchVault { _, engine in
                    let caller = try Caller(origin: "https://login.example.com")
                    for n in 0..<(Int(arguments.dropFirst().first ?? "") ?? 2000) {
                        _ = try engine.create(try CreationOptions(json: creationOptions(algorithm: .es256, user: n)), caller: caller)
                    }
                }
            } catch { print(error) }
            return
        }
        if arguments.first == "parts" {
            do { try parts() } catch { print("parts failed: \(error)") }
            return
        }
        if arguments.first == "create-cost" {
            // CPU µs per ES256 registration only (the last line of `parts`), for A/B runs of two builds.
            do { try createCost() } catch { print(error) }
            return
        }
        if arguments.first == "get-cost" {
            // CPU µs per ES256 assertion beside a raw signature, and its wall time: what an assertion waits for.
            do { try getCost() } catch { print(error) }
            return
        }
        if arguments.first == "registration" {
            // ES256 registrations beside their raw floor only: the quick loop for tuning the create path.
            do { try registrationRatio(seconds: Double(arguments.dropFirst().first ?? "") ?? 1.0) } catch { print(error) }
            return
        }
        if arguments.first == "worker" {
            do { try BenchWorker.run(arguments: Array(arguments.dropFirst())) } catch {
                FileHandle.standardError.write(Data("worker failed: \(error)\n".utf8))
                exit(1)
            }
            return
        }
        if arguments.first == "scale" {
            do { try ScaleBench.run(arguments: Array(arguments.dropFirst())) } catch { print("scale failed: \(error)") }
            return
        }
        if arguments.first == "profile-keygen" {
            for _ in 0..<(Int(arguments.dropFirst().first ?? "") ?? 5000) { _ = try? SigningKeys.generate(.es256) }
            return
        }
        if arguments.first == "profile-get" {
            // A tight loop of ES256 assertions, for `perf record`.
            do { try profileGet(count: Int(arguments.dropFirst().first ?? "") ?? 20000) } catch { print(error) }
            return
        }
        let seconds = arguments.first.flatMap(Double.init) ?? 1.0
        do {
            try runAll(seconds: seconds)
        } catch {
            FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
            exit(1)
        }
    }

    static func runAll(seconds: Double) throws {
        try withBenchVault { _, engine in try runAll(seconds: seconds, engine: engine) }
    }

    /// Rounds per figure: the median of several short rounds is steadier on a shared machine than one long one.
    static let rounds = 7

    static func runAll(seconds: Double, engine: Engine) throws {
        let caller = try Caller(origin: "https://login.example.com")
        let message = [UInt8](repeating: 0x5A, count: 37 + 32)

        // Dirty pages other work left (a build just before, say) would queue ahead of the vault's own syncs.
        sync()
        print("credemu bench (in-process, one thread, \(seconds)s per figure in \(rounds) alternating rounds, medians; release build)")
        print(pad("algorithm", 10) + pad("raw keygen+sign/s", 19) + pad("registrations/s", 17) + pad("reg cost ratio", 16)
              + pad("raw sign/s", 12) + pad("assertions/s", 14) + "asrt cost ratio")
        var goalsMet = true
        var es256 = (0.0, 0.0)
        for algorithm in COSEAlgorithm.allCases {
            let budget = algorithm == .rs256 ? max(seconds, 2.0) : seconds
            let key = try SigningKeys.generate(algorithm)
            var n = 0
            // Assertions against one credential on an RP of its own.
            let rp = "\(algorithm.name.lowercased()).example.com"
            let options = try CreationOptions(json: creationOptions(algorithm: algorithm, user: 0, rpID: rp))
            let assertionCaller = try Caller(origin: "https://" + rp)
            let registered = try engine.create(options, caller: assertionCaller)
            let request = try RequestOptions(json: """
                {"challenge": "\(Base64URL.encode(SecureRandom.bytes(32)))", "rpId": "\(rp)",
                 "allowCredentials": [{"type": "public-key", "id": "\(Base64URL.encode(registered.credentialID))"}]}
                """)
            // Each figure and its raw floor are measured in alternating rounds and the median ratio kept: on a
            // shared machine the noise between two back-to-back measurements is larger than the gap we look for.
            let slice = budget / Double(rounds)
            // The RP writes the options; credemu parses them. The texts (a new user each) are made before the
            // clock starts, so the figure is credemu's work, options parsing included. Each algorithm's users are
            // its own: with the same user IDs, every EdDSA registration replaced an ES256 passkey of the run before
            // it (a replacing create, 4.6x the raw floor where a new one is about 1x).
            let users = 1_000_000 * (COSEAlgorithm.allCases.firstIndex(of: algorithm) ?? 0)
            let texts = (1...(algorithm == .rs256 ? 200 : 40_000)).map { creationOptions(algorithm: algorithm, user: users + $0) }
            var rawCreates: [Double] = [], registrationRates: [Double] = [], rawSigns: [Double] = [], assertionRates: [Double] = []
            for _ in 0..<rounds {
                rawCreates.append(try measure(seconds: slice) { _ = try SigningKeys.generate(algorithm).sign(message) }.perSecond)
                registrationRates.append(try measure(seconds: slice) {
                    n += 1
                    _ = try engine.create(try CreationOptions(json: texts[n % texts.count]), caller: caller)
                }.perSecond)
                rawSigns.append(try measure(seconds: seconds / Double(rounds)) { _ = try key.sign(message) }.perSecond)
                assertionRates.append(try measure(seconds: seconds / Double(rounds)) { _ = try engine.get(request, caller: assertionCaller) }.perSecond)
            }
            func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
            let rawCreate = Rate(perSecond: median(rawCreates), iterations: 0)
            let registrations = Rate(perSecond: median(registrationRates), iterations: 0)
            let rawSign = Rate(perSecond: median(rawSigns), iterations: 0)
            let assertions = Rate(perSecond: median(assertionRates), iterations: 0)
            let regRatio = median(zip(rawCreates, registrationRates).map { $0 / $1 })
            let asrtRatio = median(zip(rawSigns, assertionRates).map { $0 / $1 })
            print(pad(algorithm.name, 10) + pad(fmt(rawCreate.perSecond), 19) + pad(fmt(registrations.perSecond), 17)
                  + pad(String(format: "%.2fx", regRatio), 16) + pad(fmt(rawSign.perSecond), 12)
                  + pad(fmt(assertions.perSecond), 14) + String(format: "%.2fx", asrtRatio))
            if algorithm == .es256 {
                goalsMet = regRatio <= 2 && asrtRatio <= 2
                es256 = (registrations.perSecond, assertions.perSecond)
            }
        }
        print("goal (ES256): a registration costs at most 2x raw keygen+sign, an assertion at most 2x raw sign: "
              + (goalsMet ? "met" : "NOT met"))
        print("")
        try runHTTP(seconds: seconds, clients: Int(ProcessInfo.processInfo.environment["CREDEMU_BENCH_CLIENTS"] ?? "") ?? 4, inProcess: es256)
    }

    /// CPU time per call of `body`, in µs: the process's (every thread: the vault's background batch too) and
    /// the calling thread's. Best of five rounds of `count` calls each (the machine is shared).
    static func cpuCost(_ count: Int, _ body: () throws -> Void) rethrows -> (process: Double, thread: Double) {
        let cost = try timedCost(count, body)
        return (cost.process, cost.thread)
    }

    /// `cpuCost` with the wall time of the calls alone (µs per call, best of five): what the calling thread waited
    /// for beside its own CPU time (the vault's lock while another thread holds it, a checkpoint's sync).
    static func timedCost(_ count: Int, _ body: () throws -> Void) rethrows -> (process: Double, thread: Double, wall: Double) {
        func now(_ clock: clockid_t) -> Double {
            var t = timespec()
            clock_gettime(clock, &t)
            return Double(t.tv_sec) * 1e6 + Double(t.tv_nsec) / 1e3
        }
        var best = (process: Double.infinity, thread: Double.infinity, wall: Double.infinity)
        for _ in 0..<5 {
            let p0 = now(CLOCK_PROCESS_CPUTIME_ID), t0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC)
            for _ in 0..<count { try body() }
            let wall = (now(CLOCK_MONOTONIC) - w0) / Double(count)
            usleep(30_000)  // the batch a round left waiting runs now, inside the round's process time
            let process = (now(CLOCK_PROCESS_CPUTIME_ID) - p0) / Double(count), thread = (now(CLOCK_THREAD_CPUTIME_ID) - t0) / Double(count)
            best = (min(best.process, process), min(best.thread, thread), min(best.wall, wall))
        }
        return best
    }

    /// `credemu-bench parts`: what a registration is made of, one part at a time, in CPU time.
    static func parts() throws {
        let text = creationOptions(algorithm: .es256, user: 5)
        let key = try SigningKeys.generate(.es256)
        var i = 0
        func record() -> PasskeyRecord {
            i += 1
            return PasskeyRecord(credentialID: SecureRandom.bytes(16), rpID: "example.com", userHandle: Array("u\(i)".utf8),
                                 userName: "u\(i)", displayName: "U", algorithm: .es256, publicKey: key.publicKey, createdAt: Date())
        }
        var rows: [(String, (process: Double, thread: Double))] = []
        var moveMillis = 0.0
        rows.append(("options parse", cpuCost(20_000) { _ = try? CreationOptions(json: text) }))
        rows.append(("P-256 keygen+export", cpuCost(5_000) { _ = try? SigningKeys.generate(.es256) }))
        rows.append(("P-256 PKCS#8 import", cpuCost(10_000) { _ = try? SigningKeys.importPKCS8(key.pkcs8, expecting: .es256) }))
        try withBenchVault { vault, engine in
            rows.append(("vault insert, held (staged; its batch's move in process time)", try cpuCost(5_000) { try vault.insertPasskey(record(), privateKey: key.pkcs8) }))
            rows.append(("quota state (a 2-binding lookup, for comparison)", try cpuCost(20_000) { _ = try vault.quotaState("k\(i)") }))
            // How long a full batch holds the vault: the statement that needs the rows moved waits for all of them.
            _ = try vault.offeredPasskeys(rpID: "example.com", limit: 1)
            for _ in 1..<Vault.stagedLimit { try vault.insertPasskey(record(), privateKey: key.pkcs8) }
            let started = DispatchTime.now().uptimeNanoseconds
            _ = try vault.offeredPasskeys(rpID: "example.com", limit: 1)
            moveMillis = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            var fresh = 0
            rows.append(("account count, an account with no passkey", try cpuCost(20_000) {
                fresh += 1
                _ = try vault.countAccountPasskeys(rpID: "example.com", userHandle: Array("new\(fresh)".utf8), userName: "new\(fresh)", excluding: [])
            }))
            rows.append(("account count", try cpuCost(20_000) {
                _ = try vault.countAccountPasskeys(rpID: "example.com", userHandle: Array("u\(i)".utf8), userName: "u\(i)", excluding: [])
            }))
            let detail: JSONValue = .object([("pack", "webauthn-spec"), ("platform", "chrome-desktop"), ("origin", "https://login.example.com"),
                                             ("rpId", "example.com"), ("userName", "user5@example.com"), ("userHandle", "dXNlci01"),
                                             ("mediation", "modal"), ("excludeCredentials", 0), ("credentialId", "AAAAAAAAAAAAAAAAAAAAAA"),
                                             ("userVerification", "authenticator.userVerification=performed (source)")])
            rows.append(("event append (written by its batch)", try cpuCost(20_000) {
                try vault.appendEvent(kind: "create", outcome: "success", reason: "success", detail: detail, at: Date())
            }))
            let caller = try Caller(origin: "https://login.example.com")
            let texts = (1...25_000).map { creationOptions(algorithm: .es256, user: $0) }
            var n = 0
            rows.append(("registration (engine.create, options parse included)", try cpuCost(5_000) {
                n += 1
                _ = try engine.create(try CreationOptions(json: texts[n % texts.count]), caller: caller)
            }))
        }
        let shared = NSTemporaryDirectory() + "credemu-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let vault = try Vault.open(path: shared + "/vault.db", key: .raw(SecureRandom.bytes(32)))
        rows.append(("vault insert, shared (five b-trees committed)", try cpuCost(5_000) { try vault.insertPasskey(record(), privateKey: key.pkcs8) }))
        vault.close()
        print("µs of CPU per call (best of 5 rounds): process, calling thread")
        for (label, cost) in rows { print(pad(label, 64) + String(format: "%7.1f %7.1f", cost.process, cost.thread)) }
        print(String(format: "a full batch of staged registrations (%d) moved in %.1f ms (wall), holding the vault", Vault.stagedLimit - 1, moveMillis))
    }

    static func createCost() throws {
        try withBenchVault { _, engine in
            let caller = try Caller(origin: "https://login.example.com")
            let texts = (1...25_000).map { creationOptions(algorithm: .es256, user: $0) }
            var n = 0
            let cost = try timedCost(5_000) {
                n += 1
                _ = try engine.create(try CreationOptions(json: texts[n % texts.count]), caller: caller)
            }
            print(String(format: "registration CPU µs: process %.1f thread %.1f; wall %.1f", cost.process, cost.thread, cost.wall))
        }
    }

    /// `credemu-bench get-cost`: an assertion's CPU time (the process's, the calling thread's) and wall time, beside a
    /// raw ES256 signature's: the wall time over the thread's is what an assertion waited for (the vault's lock).
    static func getCost() throws {
        try withBenchVault { _, engine in
            let caller = try Caller(origin: "https://login.example.com")
            let request = try assertionRequest(engine, caller: caller)
            let key = try SigningKeys.generate(.es256)
            let message = [UInt8](repeating: 0x5A, count: 37 + 32)
            let raw = try timedCost(20_000) { _ = try key.sign(message) }
            let cost = try timedCost(20_000) { _ = try engine.get(request, caller: caller) }
            print(String(format: "assertion µs: process %.1f thread %.1f wall %.1f; raw sign thread %.1f wall %.1f; wall / raw %.2fx, thread / raw %.2fx",
                         cost.process, cost.thread, cost.wall, raw.thread, raw.wall, cost.wall / raw.wall, cost.thread / raw.thread))
        }
    }

    static func registrationRatio(seconds: Double) throws {
        try withBenchVault { _, engine in try registrationRatio(seconds: seconds, engine: engine) }
    }

    static func registrationRatio(seconds: Double, engine: Engine) throws {
        let caller = try Caller(origin: "https://login.example.com")
        let message = [UInt8](repeating: 0x5A, count: 37 + 32)
        let texts = (1...100_000).map { creationOptions(algorithm: .es256, user: $0) }
        var n = 0
        var ratios: [Double] = [], raws: [Double] = [], costs: [Double] = []
        for _ in 0..<15 {
            let raw = try measure(seconds: seconds / 15) { _ = try SigningKeys.generate(.es256).sign(message) }.perSecond
            let registrations = try measure(seconds: seconds / 15) {
                n += 1
                _ = try engine.create(try CreationOptions(json: texts[n % texts.count]), caller: caller)
            }.perSecond
            ratios.append(raw / registrations)
            raws.append(1e6 / raw)
            costs.append(1e6 / registrations)
        }
        func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
        print(String(format: "ES256 registration %.1f µs (best %.1f), raw keygen+sign %.1f µs (best %.1f): median ratio %.2fx (rounds %@)",
                     median(costs), costs.min()!, median(raws), raws.min()!,
                     median(ratios), ratios.map { String(format: "%.2f", $0) }.joined(separator: " ")))
    }

    static func profileGet(count: Int) throws {
        try withBenchVault { _, engine in try profileGet(count: count, engine: engine) }
    }

    static func profileGet(count: Int, engine: Engine) throws {
        let caller = try Caller(origin: "https://example.com")
        let request = try assertionRequest(engine, caller: caller)
        for _ in 0..<count { _ = try engine.get(request, caller: caller) }
    }

    /// A passkey registered for user 0 of example.com, and a get of it by its allow list: what the assertion
    /// figures repeat.
    static func assertionRequest(_ engine: Engine, caller: Caller) throws -> RequestOptions {
        let registered = try engine.create(try CreationOptions(json: creationOptions(algorithm: .es256, user: 0)), caller: caller)
        return try RequestOptions(json: """
            {"challenge": "\(Base64URL.encode(SecureRandom.bytes(32)))", "rpId": "example.com",
             "allowCredentials": [{"type": "public-key", "id": "\(Base64URL.encode(registered.credentialID))"}]}
            """)
    }

    /// A fresh vault held exclusively, as `credemu serve` holds one, in a temporary directory removed afterwards.
    static func withBenchVault<T>(_ body: (Vault, Engine) throws -> T) throws -> T {
        let directory = NSTemporaryDirectory() + "credemu-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try Vault.open(path: directory + "/vault.db", key: .raw(SecureRandom.bytes(32)), exclusive: true)
        defer { vault.close() }
        return try body(vault, Engine(vault: vault))
    }

    static func creationOptions(algorithm: COSEAlgorithm, user: Int, rpID: String = "example.com") -> String {
        """
        {"rp": {"id": "\(rpID)", "name": "Bench"}, "user": {"id": "\(Base64URL.encode(Array("user-\(user)".utf8)))",
         "name": "user\(user)@example.com", "displayName": "User \(user)"}, "challenge": "\(Base64URL.encode(SecureRandom.bytes(32)))",
         "pubKeyCredParams": [{"type": "public-key", "alg": \(algorithm.rawValue)}], "attestation": "none"}
        """
    }

    static func fmt(_ v: Double) -> String { v >= 100 ? String(format: "%.0f", v) : String(format: "%.1f", v) }
    static func pad(_ s: String, _ width: Int) -> String { s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count) }
}
