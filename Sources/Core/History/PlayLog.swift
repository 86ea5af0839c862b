import Foundation

/// A child's plays in memory, oldest first, with what the history and statistics derive from
/// each play computed once: whether it is a rewatch and how many seconds it watched.
///
/// The rules are the SQL's they replace (docs/api.md, "Viewing history, insights and libraries across children"), proven equal
/// by a differential test:
/// - a play is a **rewatch** when an earlier play of the same book, in (played_at, id) order, was
///   completed;
/// - its **seconds watched** are its position minus the position of the book's play before it
///   when that one was not completed and the position went forward; otherwise the position itself.
public struct PlayLog: Sendable {
    public struct Play: Sendable, Equatable {
        public let id: Int
        public let book: Int
        public let position: Int
        public let completed: Bool
        public let playedAt: Date
        public fileprivate(set) var rewatch = false
        public fileprivate(set) var watched = 0

        public init(id: Int, book: Int, position: Int, completed: Bool, playedAt: Date) {
            self.id = id; self.book = book; self.position = position; self.completed = completed; self.playedAt = playedAt
        }
    }

    /// Oldest first: ascending (played_at, id).
    public let plays: [Play]

    public init(_ plays: [Play]) {
        var sorted = plays.sorted { ($0.playedAt, $0.id) < ($1.playedAt, $1.id) }
        struct Before { var completed = false; var position = 0; var lastCompleted = false }
        var books: [Int: Before] = [:]
        for i in sorted.indices {
            let play = sorted[i]
            if let before = books[play.book] {
                sorted[i].rewatch = before.completed
                sorted[i].watched = !before.lastCompleted && play.position >= before.position
                    ? play.position - before.position : play.position
            } else {
                sorted[i].watched = play.position
            }
            var before = books[play.book] ?? Before()
            before.completed = before.completed || play.completed
            before.position = play.position
            before.lastCompleted = play.completed
            books[play.book] = before
        }
        self.plays = sorted
    }

    public var count: Int { plays.count }

    /// The history's order, newest first: `limit` plays from `offset`, only `book`'s when given.
    public func newestFirst(offset: Int, limit: Int, book: Int? = nil) -> [Play] {
        guard offset >= 0, limit > 0 else { return [] }
        if book == nil {
            let end = plays.count - min(offset, plays.count)
            return plays[max(0, end - limit)..<end].reversed()
        }
        var page: [Play] = []
        var skipped = 0
        for play in plays.reversed() where book == nil || play.book == book {
            if skipped < offset { skipped += 1; continue }
            page.append(play)
            if page.count == limit { break }
        }
        return page
    }

    /// How many plays of `book` (of all, without one).
    public func count(book: Int?) -> Int {
        guard let book else { return plays.count }
        return plays.reduce(0) { $0 + ($1.book == book ? 1 : 0) }
    }

    /// Each play's local day in `zone` (days since 1970-01-01), in the order of `plays`.
    ///
    /// A zone's offset is asked once per stretch between its transitions, not once per play:
    /// plays are in time order, so each transition is crossed once.
    public func days(in zone: TimeZone) -> [Int] {
        var days: [Int] = []
        days.reserveCapacity(plays.count)
        var offset = 0
        var validFrom = Date.distantFuture, validUntil = Date.distantPast
        for play in plays {
            let instant = play.playedAt
            if instant < validFrom || instant >= validUntil {
                offset = zone.secondsFromGMT(for: instant)
                validFrom = instant
                validUntil = zone.nextDaylightSavingTimeTransition(after: instant) ?? .distantFuture
            }
            days.append(CivilDays.day(of: instant, offset: offset))
        }
        return days
    }
}

/// Calendar days as numbers (days since 1970-01-01) and back, proleptic Gregorian.
public enum CivilDays {
    /// The local day of `instant` at `offset` seconds east of UTC.
    public static func day(of instant: Date, offset: Int) -> Int {
        Int(((instant.timeIntervalSince1970 + Double(offset)) / 86_400).rounded(.down))
    }

    /// Today's day number in `zone`, `now` being the caller's clock's time.
    public static func today(in zone: TimeZone, now: Date) -> Int {
        day(of: now, offset: zone.secondsFromGMT(for: now))
    }

    /// (year, month, day) of a day number (H. Hinnant's `civil_from_days`).
    public static func date(of days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The day number of a date (H. Hinnant's `days_from_civil`).
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// 0 for Monday … 6 for Sunday.
    public static func weekday(of days: Int) -> Int { ((days % 7) + 7 + 3) % 7 }

    /// `YYYY-MM-DD`.
    public static func text(of days: Int) -> String {
        let (year, month, day) = date(of: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    /// `YYYY-MM` of the day's month.
    public static func monthText(of days: Int) -> String {
        let (year, month, _) = date(of: days)
        return monthText(year: year, month: month)
    }

    public static func monthText(year: Int, month: Int) -> String { pad(year, 4) + "-" + pad(month, 2) }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
