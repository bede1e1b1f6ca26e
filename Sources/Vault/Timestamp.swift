import Foundation
import WebAuthn

/// RFC 3339 UTC times, with milliseconds only when there are any.
public enum Timestamp {
    public static func format(_ date: Date) -> String {
        let millis = date.vaultMillis
        var seconds = time_t(millis >= 0 ? millis / 1000 : (millis - 999) / 1000)
        let fraction = Int(millis - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var out = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        if fraction != 0 { out += "." + String(String(fraction + 1000).dropFirst()) }
        return out + "Z"
    }

    public static func parse(_ s: String) -> Date? {
        guard s.hasSuffix("Z") else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = s.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.date(from: s).map { Date(vaultMillis: $0.vaultMillis) }
    }

    public static func json(_ date: Date?) -> JSONValue { date.map { .string(format($0)) } ?? .null }
}
