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
        let directory = NSTemporaryDirectory() + "credemu-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try Vault.open(path: directory + "/vault.db", key: .raw(SecureRandom.bytes(32)))
        defer { vault.close() }
        let engine = Engine(vault: vault)
        let caller = try Caller(origin: "https://login.example.com")
        let message = [UInt8](repeating: 0x5A, count: 37 + 32)

        print("credemu bench (in-process, one thread, \(seconds)s per figure; release build)")
        print(pad("algorithm", 10) + pad("raw keygen+sign/s", 19) + pad("registrations/s", 17) + pad("reg cost ratio", 16)
              + pad("raw sign/s", 12) + pad("assertions/s", 14) + "asrt cost ratio")
        var goalsMet = true
        var es256 = (0.0, 0.0)
        for algorithm in COSEAlgorithm.allCases {
            let budget = algorithm == .rs256 ? max(seconds, 2.0) : seconds
            let rawCreate = try measure(seconds: budget) { _ = try SigningKeys.generate(algorithm).sign(message) }
            let key = try SigningKeys.generate(algorithm)
            let rawSign = try measure(seconds: seconds) { _ = try key.sign(message) }

            var n = 0
            let registrations = try measure(seconds: budget) {
                n += 1
                let options = try CreationOptions(json: creationOptions(algorithm: algorithm, user: n))
                _ = try engine.create(options, caller: caller)
            }
            // Assertions against one credential on an RP of its own.
            let options = try CreationOptions(json: creationOptions(algorithm: algorithm, user: 0, rpID: "\(algorithm.name.lowercased()).example.com"))
            let registered = try engine.create(options, caller: try Caller(origin: "https://\(algorithm.name.lowercased()).example.com"))
            let request = try RequestOptions(json: """
                {"challenge": "\(Base64URL.encode(SecureRandom.bytes(32)))", "rpId": "\(algorithm.name.lowercased()).example.com",
                 "allowCredentials": [{"type": "public-key", "id": "\(Base64URL.encode(registered.credentialID))"}]}
                """)
            let assertionCaller = try Caller(origin: "https://\(algorithm.name.lowercased()).example.com")
            let assertions = try measure(seconds: seconds) { _ = try engine.get(request, caller: assertionCaller) }

            let regRatio = rawCreate.perSecond / registrations.perSecond
            let asrtRatio = rawSign.perSecond / assertions.perSecond
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

    static func profileGet(count: Int) throws {
        let directory = NSTemporaryDirectory() + "credemu-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try Vault.open(path: directory + "/vault.db", key: .raw(SecureRandom.bytes(32)))
        let engine = Engine(vault: vault)
        let caller = try Caller(origin: "https://example.com")
        let registered = try engine.create(try CreationOptions(json: creationOptions(algorithm: .es256, user: 0)), caller: caller)
        let request = try RequestOptions(json: """
            {"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com",
             "allowCredentials": [{"type": "public-key", "id": "\(Base64URL.encode(registered.credentialID))"}]}
            """)
        for _ in 0..<count { _ = try engine.get(request, caller: caller) }
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
