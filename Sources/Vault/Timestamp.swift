import Foundation
import WebAuthn

/// RFC 3339 UTC times, `YYYY-MM-DDTHH:MM:SS[.fff]Z`, with milliseconds only when there are any: the text form of
/// the vault's times. Years 0000 to 9999 only (proleptic Gregorian), so every time written has four year digits
/// and reads back as the same time.
public enum Timestamp {
    /// 0000-01-01T00:00:00Z, the earliest time the text form holds.
    public static let earliest = Date(vaultMillis: earliestMillis)
    /// 9999-12-31T23:59:59.999Z, the latest.
    public static let latest = Date(vaultMillis: latestMillis)

    static let earliestMillis: Int64 = -62_167_219_200_000
    static let latestMillis: Int64 = 253_402_300_799_999
    private static let millisPerDay: Int64 = 86_400_000

    /// Milliseconds since the Unix epoch, rounded, and clamped to `earliest...latest` (NaN gives `earliest`), so no
    /// date can trap the conversion. The callers that take times from users refuse out-of-range ones first.
    public static func millis(_ date: Date) -> Int64 {
        let millis = (date.timeIntervalSince1970 * 1000).rounded()
        guard millis >= Double(earliestMillis) else { return earliestMillis }
        guard millis <= Double(latestMillis) else { return latestMillis }
        return Int64(millis)
    }

    /// The date, as `millis` clamps it.
    public static func format(_ date: Date) -> String {
        let millis = millis(date)
        let days = (millis - earliestMillis) / millisPerDay + earliestMillis / millisPerDay
        var rest = (millis - earliestMillis) % millisPerDay
        let (year, month, day) = civil(days: days)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func digits(_ n: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(n / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4); out.append(UInt8(ascii: "-")); digits(month, 2); out.append(UInt8(ascii: "-")); digits(day, 2)
        out.append(UInt8(ascii: "T"))
        digits(rest / 3_600_000, 2); out.append(UInt8(ascii: ":")); rest %= 3_600_000
        digits(rest / 60_000, 2); out.append(UInt8(ascii: ":")); rest %= 60_000
        digits(rest / 1000, 2)
        if rest % 1000 != 0 {
            out.append(UInt8(ascii: "."))
            digits(rest % 1000, 3)
        }
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.f...]Z` with ASCII digits, a real calendar date of year 0000 to 9999, hours 00-23,
    /// minutes and seconds 00-59; a fraction is truncated to milliseconds. Nil for anything else.
    public static func parse(_ s: String) -> Date? {
        var text = s
        return text.withUTF8 { (b: UnsafeBufferPointer<UInt8>) -> Date? in
            guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
                  b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[b.count - 1] == UInt8(ascii: "Z") else { return nil }
            func number(_ range: Range<Int>) -> Int64? {
                var n: Int64 = 0
                for i in range {
                    guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) else { return nil }
                    n = n * 10 + Int64(b[i] - UInt8(ascii: "0"))
                }
                return n
            }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
                  let minute = number(14..<16), let second = number(17..<19),
                  (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second < 60
            else { return nil }
            // A fraction: a '.' and at least one digit before the 'Z'; digits past the third are dropped.
            var millis: Int64 = 0
            if b.count > 20 {
                guard b[19] == UInt8(ascii: "."), b.count > 21 else { return nil }
                var scale: Int64 = 100
                for i in 20..<(b.count - 1) {
                    guard let digit = number(i..<(i + 1)) else { return nil }
                    millis += digit * scale
                    scale /= 10
                }
            }
            let days = daysSinceEpoch(year: year, month: month, day: day)
            let total = days * millisPerDay + ((hour * 60 + minute) * 60 + second) * 1000 + millis
            return Date(vaultMillis: total)
        }
    }

    public static func json(_ date: Date?) -> JSONValue { date.map { .string(format($0)) } ?? .null }

    // MARK: The proleptic Gregorian calendar (H. Hinnant's days_from_civil and civil_from_days)

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the date.
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01.
    static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension JSONFields {
    /// A member holding a `Timestamp`.
    func time(_ key: String) throws(Failure) -> Date? {
        guard let s = try string(key) else { return nil }
        guard let date = Timestamp.parse(s) else { throw invalid(key, "must be an RFC 3339 UTC time such as 2026-01-31T09:30:00Z") }
        return date
    }
}
