import CredemuTestSupport
import Foundation
import XCTest
import CredemuEngine

/// Durations are read strictly: nothing out of range gets as far as a conversion that could trap.
final class DurationTests: XCTestCase {
    func testDurationsOutOfRangeAreRefusedNotTrapped() {
        for text in ["1e300", "99999999999999999999s", "300000000000000d", "-5s", "", "s", "1.2.3m", "１０s", "nan", "inf", ".5s"] {
            XCTAssertNil(parseDuration(text), text)
        }
        XCTAssertEqual(parseDuration("90s"), 90)
        XCTAssertEqual(parseDuration("6m"), 360)
        XCTAssertEqual(parseDuration("1.5"), 1.5)
    }
}
