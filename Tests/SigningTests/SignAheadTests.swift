import Foundation
import XCTest
@testable import Signing
import WebAuthn

/// The ES256 setups and key pairs `SignAhead` makes on an idle core: each used once, each signature and key real.
final class SignAheadTests: XCTestCase {
    override func setUpWithError() throws {
        XCTAssertTrue(SignAhead.start(), "the filler thread starts")
        // Both stocks full: made counts every setup and every key pair since the start.
        let deadline = Date().addingTimeInterval(30)
        while SignAhead.counts.made < 2 * UInt(SignAhead.pool), Date() < deadline { usleep(2_000) }
        XCTAssertGreaterThanOrEqual(SignAhead.counts.made, 2 * UInt(SignAhead.pool), "the stocks filled within 30 s")
    }

    /// r of a DER ECDSA-Sig-Value (SEQUENCE { INTEGER r, INTEGER s }); r and k are one-to-one for a signer's use.
    private func r(of signature: [UInt8]) -> [UInt8] {
        XCTAssertEqual(signature.first, 0x30)
        XCTAssertEqual(signature[2], 0x02)
        return Array(signature[4..<(4 + Int(signature[3]))])
    }

    func testSignaturesWithSetupsMadeAheadVerifyAndNoTwoShareANonce() throws {
        let keys = try (0..<3).map { _ in try SigningKeys.generate(.es256) }
        let before = SignAhead.counts
        var signed: [(key: SigningKey, message: [UInt8], signature: [UInt8])] = []
        for i in 0..<300 {
            let key = keys[i % keys.count], message = Array("authData || clientDataHash \(i)".utf8)
            signed.append((key, message, try key.sign(message)))
        }
        let after = SignAhead.counts
        XCTAssertEqual((after.taken + after.missed) - (before.taken + before.missed), 300, "every signature asked the stock")
        XCTAssertGreaterThan(after.taken - before.taken, 0, "signatures took setups made ahead")
        for (key, message, signature) in signed {
            XCTAssertTrue(key.publicKey.verify(signature: signature, message: message))
            XCTAssertFalse(key.publicKey.verify(signature: signature, message: message + [0]))
        }
        XCTAssertEqual(Set(signed.map { r(of: $0.signature) }).count, 300, "a nonce is never used twice")
    }

    /// Signing faster than one idle core makes setups empties the stock; a signature then makes its own.
    func testSignaturesOutrunningTheStockMakeTheirOwnSetups() throws {
        let key = try SigningKeys.generate(.es256)
        let before = SignAhead.counts
        let messages = (0..<2_000).map { Array("message \($0)".utf8) }
        let signatures = try messages.map { try key.sign($0) }
        XCTAssertGreaterThan(SignAhead.counts.missed - before.missed, 0, "2,000 signatures in a row outrun the filler")
        for (message, signature) in zip(messages, signatures) {
            XCTAssertTrue(key.publicKey.verify(signature: signature, message: message))
        }
        XCTAssertEqual(Set(signatures.map(r(of:))).count, signatures.count)
    }

    func testKeyPairsMadeAheadAreKeyPairsOpenSSLsDecoderReadsAlike() throws {
        let before = SignAhead.counts
        let keys = try (0..<100).map { _ in try SigningKeys.generate(.es256) }
        XCTAssertGreaterThan(SignAhead.counts.taken - before.taken, 0, "keys came from the stock")
        var scalars = Set<[UInt8]>()
        for key in keys {
            guard let (scalar, point) = OpenSSLKey.p256Parts(key.pkcs8) else { return XCTFail("credemu's layout") }
            XCTAssertNoThrow(try KeyCheck.p256(scalar: scalar, point: point), "the point is the scalar's")
            XCTAssertEqual(try OpenSSLKey.importDecoding(key.pkcs8).publicKey, key.publicKey)
            XCTAssertTrue(key.publicKey.verify(signature: try key.sign([7]), message: [7]))
            scalars.insert(scalar)
        }
        XCTAssertEqual(scalars.count, keys.count, "a key pair is handed out once")
    }

    /// The thread runs only when a core would otherwise idle: SCHED_IDLE (policy 5, field 41 of its stat).
    func testTheFillerThreadIsInTheIdleSchedulingClass() throws {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let filler = tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) == "credemu-ahead\n"
        }
        XCTAssertEqual(filler.count, 1)
        let stat = try String(contentsOfFile: "/proc/self/task/\(filler[0])/stat", encoding: .utf8)
        // Fields after the command's closing parenthesis start at field 3.
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        XCTAssertEqual(fields[41 - 3], "5", "SCHED_IDLE")
    }
}
