import CredemuTestSupport
import Foundation
import XCTest
@testable import CredemuOperations

/// The clock operations refuse what would leave RFC 3339's years 0000-9999, before anything is stored.
final class ClockTests: XCTestCase {
    func testDurationsOutOfRangeAreRefusedNotTrapped() {
        for text in ["1e300", "99999999999999999999s", "300000000000000d", "-5s", "", "s", "1.2.3m", "１０s", "nan", "inf", ".5s"] {
            XCTAssertNil(Operations.duration(text), text)
        }
        XCTAssertEqual(Operations.duration("90s"), 90)
        XCTAssertEqual(Operations.duration("6m"), 360)
        XCTAssertEqual(Operations.duration("1.5"), 1.5)
    }
}
