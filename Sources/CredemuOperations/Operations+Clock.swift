import CredemuEngine
import Foundation
import Vault
import WebAuthn

extension Operations {
    /// The times a clock may show: RFC 3339's years 0000 to 9999, so every time prints and parses back.
    static let clockRange = Date(timeIntervalSince1970: -62_167_219_200)...Date(timeIntervalSince1970: 253_402_300_799.999)

    /// `{"now", "mode"}`: what the clock says.
    public func clockState() -> JSONValue {
        .object([("now", .string(Timestamp.format(clock.now()))), ("mode", .string(clock.isVirtual ? "virtual" : "system"))])
    }

    /// Makes the clock virtual, standing at `text` (an RFC 3339 UTC time); logged under `profile`.
    public func setClock(_ text: String, profile: String) throws(OperationError) -> JSONValue {
        guard let date = Timestamp.parse(text), Operations.clockRange.contains(date) else {
            throw .invalidInput("The clock takes an RFC 3339 UTC time from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, such as 2026-11-29T10:00:00Z; not '\(text)'.")
        }
        return try moveClock(to: date, outcome: "set", profile: profile)
    }

    /// Moves the clock on by a duration ("90s", "6m", "2h", "1d" or seconds), making it virtual.
    public func advanceClock(_ text: String, profile: String) throws(OperationError) -> JSONValue {
        guard let seconds = parseDuration(text) else {
            throw .invalidInput("The clock advances by a duration such as 90s, 6m, 2h, 1d or plain seconds (0 or more); not '\(text)'.")
        }
        return try advanceClock(seconds: seconds, profile: profile)
    }

    /// Moves the clock on by `seconds`, which must keep it within years 0000 to 9999.
    public func advanceClock(seconds: Double, profile: String) throws(OperationError) -> JSONValue {
        let now = clock.now()
        guard seconds.isFinite, seconds >= 0, seconds <= Operations.clockRange.upperBound.timeIntervalSince(now) else {
            throw .invalidInput("The clock cannot advance by \(seconds) seconds: it would pass 9999-12-31T23:59:59.999Z.")
        }
        return try moveClock(to: now.addingTimeInterval(seconds), outcome: "advanced", profile: profile)
    }

    /// Back to the system's time.
    public func systemClock(profile: String) throws(OperationError) -> JSONValue {
        try stored { () throws(VaultError) in try vault.storeClockTime(nil) }
        clock.useSystemTime()
        log(profile, "clock", "system", [("now", .string(Timestamp.format(clock.now())))])
        return clockState()
    }

    private func moveClock(to date: Date, outcome: String, profile: String) throws(OperationError) -> JSONValue {
        try stored { () throws(VaultError) in try vault.storeClockTime(date) }
        clock.set(date)
        log(profile, "clock", outcome, [("now", .string(Timestamp.format(date)))])
        return clockState()
    }
}
