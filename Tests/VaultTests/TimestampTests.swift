import CredemuTestSupport
import Foundation
import XCTest
@testable import Vault

final class TimestampTests: XCTestCase {
    func testCanonicalTimesRoundTripFromYear0000To9999() {
        for text in ["0000-01-01T00:00:00Z", "0000-02-29T00:00:00Z", "0000-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z",
                     "0099-03-01T00:00:00Z", "1582-10-15T00:00:00Z", "1600-02-29T12:00:00Z", "1969-12-31T23:59:59.999Z",
                     "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.001Z", "2000-02-29T00:00:00Z", "2024-02-29T08:30:15.250Z",
                     "2026-11-29T10:00:00Z", "9999-12-31T23:59:59.999Z"] {
            XCTAssertEqual(Timestamp.parse(text).map(Timestamp.format), text)
        }
    }

    func testEveryFewDaysAcrossTheRangeRoundTripsAndIsADayApart() {
        var previous: Date?
        var day = Timestamp.earliest
        while day <= Timestamp.latest {
            let text = Timestamp.format(day)
            XCTAssertEqual(Timestamp.parse(text), day, text)
            if let previous { XCTAssertEqual(day.timeIntervalSince(previous), 86_400 * 37, text) }
            previous = day
            day = day.addingTimeInterval(86_400 * 37)
        }
    }

    func testFormattingAgreesWithTheCLibraryFromYear1() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let millis = Int64.random(in: -62_135_596_800_000...Timestamp.latestMillis, using: &generator)  // 0001-01-01 on
            var seconds = time_t(millis >= 0 ? millis / 1000 : (millis - 999) / 1000)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                                  parts.tm_hour, parts.tm_min, parts.tm_sec)
            XCTAssertTrue(Timestamp.format(Date(vaultMillis: millis)).hasPrefix(expected), "\(millis)")
        }
    }

    func testFractionsAreTruncatedToMilliseconds() {
        XCTAssertEqual(Timestamp.parse("2024-01-01T00:00:00.123999Z").map(Timestamp.format), "2024-01-01T00:00:00.123Z")
        XCTAssertEqual(Timestamp.parse("2024-01-01T00:00:00.5Z").map(Timestamp.format), "2024-01-01T00:00:00.500Z")
        XCTAssertEqual(Timestamp.parse("2024-01-01T00:00:00.000Z").map(Timestamp.format), "2024-01-01T00:00:00Z")
        XCTAssertEqual(Timestamp.parse("9999-12-31T23:59:59.9999999Z"), Timestamp.latest)
    }

    func testImpossibleDatesAndOtherSpellingsAreRefused() {
        for bad in ["1900-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-13-01T00:00:00Z",
                    "2024-00-10T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T23:60:00Z",
                    "2024-01-01T23:59:60Z", "2024-01-01T00:00:00", "2024-01-01T00:00:00+00:00", "2024-01-01t00:00:00z",
                    "2024-01-01 00:00:00Z", "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00.1a2Z", "2024-1-01T00:00:00Z",
                    "-001-01-01T00:00:00Z", "10000-01-01T00:00:00Z", " 2024-01-01T00:00:00Z", "\u{FF12}024-01-01T00:00:00Z",
                    "2024-01-01T00:00:00ZZ", "", "Z"] {
            XCTAssertNil(Timestamp.parse(bad), bad)
        }
    }

    func testDatesBeyondTheBoundsFormatAndStoreAsTheBoundsWithoutTrapping() throws {
        XCTAssertEqual(Timestamp.format(Timestamp.earliest), "0000-01-01T00:00:00Z")
        XCTAssertEqual(Timestamp.format(Timestamp.latest), "9999-12-31T23:59:59.999Z")
        for (seconds, bound) in [(1e300, Timestamp.latest), (-1e300, Timestamp.earliest), (Double.infinity, Timestamp.latest),
                                 (-Double.infinity, Timestamp.earliest), (Double.nan, Timestamp.earliest),
                                 (Double.greatestFiniteMagnitude, Timestamp.latest)] {
            let date = Date(timeIntervalSince1970: seconds)
            XCTAssertEqual(Timestamp.format(date), Timestamp.format(bound), "\(seconds)")
            XCTAssertEqual(date.vaultMillis, bound.vaultMillis, "\(seconds)")
        }
        let (vault, _directory) = try makeTestVault()
        _ = _directory
        try vault.storeClockTime(Date(timeIntervalSince1970: 1e300))
        XCTAssertEqual(try vault.storedClockTime(), Timestamp.latest)
        try vault.storeClockTime(Date(timeIntervalSince1970: -1e300))
        XCTAssertEqual(try vault.storedClockTime(), Timestamp.earliest)
    }
}
