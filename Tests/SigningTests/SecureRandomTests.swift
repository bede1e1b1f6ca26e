import Foundation
import Synchronization
import XCTest
@testable import Signing

final class SecureRandomTests: XCTestCase {
    func testPooledDrawsAreDistinctAndNeverTheZeroedPool() {
        // Sizes that straddle the pool's refills, and many 16-byte IDs: none repeats, zero bytes are as rare as chance.
        var seen = Set<[UInt8]>()
        var zeros = 0, total = 0
        for n in 0..<20_000 {
            let draw = SecureRandom.bytes(n % 7 == 0 ? 1 + n % 128 : 16)
            XCTAssertEqual(draw.count, n % 7 == 0 ? 1 + n % 128 : 16)
            if draw.count == 16 { XCTAssertTrue(seen.insert(draw).inserted) }
            zeros += draw.filter { $0 == 0 }.count
            total += draw.count
        }
        XCTAssertLessThan(Double(zeros) / Double(total), 2.0 / 256, "about 1 in 256 bytes is zero by chance")
    }

    func testLargeDrawsComeStraightFromTheKernel() {
        let a = SecureRandom.bytes(4096), b = SecureRandom.bytes(4096)
        XCTAssertEqual(a.count, 4096)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(SecureRandom.bytes(0), [])
    }

    func testConcurrentDrawsNeverShareBytes() {
        let draws = Mutex([[UInt8]]())
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<2000 {
                let draw = SecureRandom.bytes(16)
                draws.withLock { $0.append(draw) }
            }
        }
        draws.withLock { all in
            XCTAssertEqual(all.count, 16_000)
            XCTAssertEqual(Set(all).count, 16_000)
        }
    }
}
