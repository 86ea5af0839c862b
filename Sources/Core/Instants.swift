import Foundation

/// Instants and days as the parent API reads them: RFC 3339 date-times (with or without
/// fractional seconds) or, for a range bound, a calendar date.
public enum Instants {
    /// An RFC 3339 date-time (`2026-11-23T08:30:00Z`, `…08:30:00.250+01:00`).
    public static func dateTime(_ text: String) -> Date? {
        guard text.utf8.count <= 40 else { return nil }
        let whole = ISO8601DateFormatter()
        if let date = whole.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    /// A calendar date `YYYY-MM-DD` (a real day: 2026-02-30 is refused).
    public static func day(_ text: String) -> (year: Int, month: Int, day: Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysIn(year: year, month: month)
        else { return nil }
        return (year, month, day)
    }

    /// A month `YYYY-MM`.
    public static func month(_ text: String) -> (year: Int, month: Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
              let year = Int(parts[0]), let month = Int(parts[1]), (1...9999).contains(year), (1...12).contains(month)
        else { return nil }
        return (year, month)
    }

    /// Today's date `YYYY-MM-DD` in the IANA zone `zone` at `now`, the caller's clock's time (`""`
    /// for a zone Foundation does not know).
    public static func today(in zone: String, now: Date) -> String {
        guard let timeZone = TimeZone(identifier: zone) else { return "" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        guard let year = parts.year, let month = parts.month, let day = parts.day else { return "" }
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    public static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
