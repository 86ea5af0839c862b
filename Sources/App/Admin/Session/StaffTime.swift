import Foundation

/// Times as a staff member reads them: in their time zone (`staff_users.time_zone`, chosen on
/// their account page), minutes, no seconds — "2026-11-24 14:05".
struct StaffTime: Sendable {
    let zone: TimeZone

    init(_ user: StaffUser?) {
        zone = user.flatMap { TimeZone(identifier: $0.timeZone) } ?? TimeZone(identifier: "UTC")!
    }

    func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!)
    }

    /// The zone's short name for page footers ("CET", "UTC").
    var abbreviation: String { zone.abbreviation() ?? zone.identifier }
}
