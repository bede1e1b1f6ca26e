import Signing
import WebAuthn
import XCTest
@testable import CredemuEngine

/// The engine's cache of parsed signing keys (`SigningKeyCache`): two generations, a key in use carried over, the
/// memory bounded at two generations.
final class SigningKeyCacheTests: XCTestCase {
    private func id(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 255), 7, 7] }

    private func keys(_ count: Int) throws -> [any SigningKey] {
        try (0..<count).map { _ in try SigningKeys.generate(.es256) }
    }

    func testAKeyInUseSurvivesAnyNumberOfOtherKeysPassingThrough() throws {
        let cache = SigningKeyCache(limit: 4)
        let all = try keys(2)
        cache.remember(all[0], for: id(0))
        for n in 1...50 {
            cache.remember(all[1], for: id(n))
            XCTAssertNotNil(cache.key(for: id(0)), "the key used all along, after \(n) others")
        }
        XCTAssertEqual(cache.key(for: id(0))?.publicKey.encoded, all[0].publicKey.encoded)
    }

    func testAKeyUnusedForTwoGenerationsIsDroppedAndTheCacheStaysBounded() throws {
        let cache = SigningKeyCache(limit: 4)
        let key = try SigningKeys.generate(.es256)
        for n in 0..<9 {   // 0-3 fill the first generation, 4-7 the second, 8 retires the first
            cache.remember(key, for: id(n))
            XCTAssertLessThanOrEqual(cache.count, 8)
        }
        XCTAssertNil(cache.key(for: id(0)), "two generations later")
        XCTAssertNotNil(cache.key(for: id(4)), "one generation later, in the previous one")
        XCTAssertNotNil(cache.key(for: id(8)))
        XCTAssertLessThanOrEqual(cache.count, 8)
    }

    func testAForgottenKeyIsGoneFromBothGenerations() throws {
        let cache = SigningKeyCache(limit: 2)
        let key = try SigningKeys.generate(.es256)
        cache.remember(key, for: id(1))
        cache.remember(key, for: id(2))
        cache.remember(key, for: id(3))   // 1 and 2 are now the previous generation
        cache.forget(id(1))
        cache.forget(id(3))
        XCTAssertNil(cache.key(for: id(1)))
        XCTAssertNil(cache.key(for: id(3)))
        XCTAssertNotNil(cache.key(for: id(2)))
    }
}
