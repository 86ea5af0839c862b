import Core
import Foundation
import Testing

@Suite("Play log: rewatches, seconds watched and local days, computed once")
struct PlayLogTests {
    private static let zones = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati", "Australia/Lord_Howe",
                                "Asia/Kathmandu", "America/St_Johns", "Pacific/Apia", "Pacific/Chatham", "America/Santiago", "Africa/Casablanca"]

    @Test("a play's local day, asked once per stretch between a zone's transitions, is the calendar's day — across DST, odd offsets and skipped days")
    func localDays() throws {
        var random = SystemRandomNumberGenerator()
        // Instants from 2009 to 2031, with a thick layer of them in the hours around transitions.
        var instants = (0..<3_000).map { _ in Date(timeIntervalSince1970: Double.random(in: 1_230_000_000...1_950_000_000, using: &random)) }
        for name in Self.zones {
            let zone = try #require(TimeZone(identifier: name))
            var t = Date(timeIntervalSince1970: 1_230_000_000)
            while let next = zone.nextDaylightSavingTimeTransition(after: t), next.timeIntervalSince1970 < 1_950_000_000 {
                instants += (0..<6).map { _ in next.addingTimeInterval(Double.random(in: -7_200...7_200, using: &random)) }
                instants.append(next)
                instants.append(next.addingTimeInterval(-0.000_001))
                t = next
            }
        }
        let log = PlayLog(instants.enumerated().map { PlayLog.Play(id: $0 + 1, book: 1, position: 0, completed: false, playedAt: $1) })
        for name in Self.zones {
            let zone = try #require(TimeZone(identifier: name))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let days = log.days(in: zone)
            var wrong = 0
            for (play, day) in zip(log.plays, days) {
                let c = calendar.dateComponents([.year, .month, .day], from: play.playedAt)
                let (year, month, dayOfMonth) = CivilDays.date(of: day)
                if (year, month, dayOfMonth) != (c.year!, c.month!, c.day!) { wrong += 1 }
            }
            #expect(wrong == 0, "\(name): \(wrong) of \(log.count) days differ from the calendar's")
        }
    }

    @Test("day numbers and dates convert both ways, leap days included")
    func civilDays() {
        #expect(CivilDays.text(of: 0) == "1970-01-01")
        #expect(CivilDays.text(of: -1) == "1969-12-31")
        #expect(CivilDays.text(of: 11_016) == "2000-02-29")
        #expect(CivilDays.monthText(of: 20_513) == "2026-03")
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for day in stride(from: -40_000, through: 60_000, by: 37) {
            let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(day) * 86_400))
            let (year, month, dayOfMonth) = CivilDays.date(of: day)
            #expect((year, month, dayOfMonth) == (c.year!, c.month!, c.day!), "day \(day)")
            #expect(CivilDays.days(year: year, month: month, day: dayOfMonth) == day)
            #expect(CivilDays.weekday(of: day) == (calendar.component(.weekday, from: Date(timeIntervalSince1970: Double(day) * 86_400)) + 5) % 7)
        }
    }

    @Test("rewatch: an earlier play of the book was completed; seconds: the forward delta after an unfinished play, else the position")
    func rules() {
        let at = { (s: Double) in Date(timeIntervalSince1970: 1_700_000_000 + s) }
        // Given out of order; two plays at one instant are ordered by id.
        let log = PlayLog([
            .init(id: 4, book: 7, position: 100, completed: false, playedAt: at(300)),
            .init(id: 1, book: 7, position: 120, completed: false, playedAt: at(0)),
            .init(id: 2, book: 7, position: 300, completed: false, playedAt: at(100)),
            .init(id: 3, book: 7, position: 600, completed: true, playedAt: at(100)),
            .init(id: 5, book: 8, position: 50, completed: false, playedAt: at(300)),
        ])
        #expect(log.plays.map(\.id) == [1, 2, 3, 4, 5])
        #expect(log.plays.map(\.rewatch) == [false, false, false, true, false])
        #expect(log.plays.map(\.watched) == [120, 180, 300, 100, 50])
        #expect(log.newestFirst(offset: 0, limit: 2).map(\.id) == [5, 4])
        #expect(log.newestFirst(offset: 3, limit: 10).map(\.id) == [2, 1])
        #expect(log.newestFirst(offset: 1, limit: 2, book: 7).map(\.id) == [3, 2])
        #expect(log.newestFirst(offset: 9, limit: 2).isEmpty)
        #expect(log.count(book: 7) == 4 && log.count(book: nil) == 5 && log.count(book: 9) == 0)
    }
}
