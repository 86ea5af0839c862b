/// A child's statistics for a period, from its `PlayLog` — the figures the SQL of the statistics
/// route computes, by the same rules (docs/api.md, "Viewing history, insights and libraries across children"):
/// - the period is `first...last` in local days: today and the `periodDays` before, or (all time)
///   from the first play's day (today when there is none, or when it is in the future);
/// - books completed are library books with a completed play in the period; a rewatch and seconds
///   watched are the log's; the favourite category is the one most played in the period (each
///   play counts once for every category of its book), ties to the category listed first;
/// - the most active month has the most plays in the period, ties to the later month;
/// - streaks are over all play days, whatever the period (`Streaks`).
public struct PlayStatistics: Sendable, Equatable {
    public struct Day: Sendable, Equatable {
        public let day: Int
        public let plays: Int
        public let seconds: Int
    }

    public let first: Int
    public let last: Int
    public let libraryBooks: Int
    public let libraryCompleted: Int
    public let plays: Int
    public let rewatches: Int
    public let completedBooks: Int
    public let playsOfCompleted: Int
    public let seconds: Int
    public let mostActiveMonth: String?
    public let favouriteCategory: Int?
    public let series: [Day]
    public let currentStreak: Int
    public let longestStreak: Int

    /// - Parameters:
    ///   - days: each play's local day (`PlayLog.days(in:)`);
    ///   - periodDays: 6 for a week, 29 for a month, nil for all time;
    ///   - categories: a book's category ids; `rank`: a category's place in the listing order.
    public init(log: PlayLog, days: [Int], today: Int, periodDays: Int?, library: Set<Int>,
                categories: (Int) -> [Int], rank: (Int) -> Int) {
        let first = periodDays.map { today - $0 } ?? min(days.min() ?? today, today)
        self.first = first
        last = today
        var completed = Set<Int>()
        var plays = 0, rewatches = 0, seconds = 0
        var perDay = [Int](repeating: 0, count: today - first + 1), secondsPerDay = perDay
        var perBook: [Int: Int] = [:], perMonth: [Int: Int] = [:]
        for (play, day) in zip(log.plays, days) where day >= first && day <= today {
            plays += 1
            if play.rewatch { rewatches += 1 }
            if play.completed { completed.insert(play.book) }
            seconds += play.watched
            perDay[day - first] += 1
            secondsPerDay[day - first] += play.watched
            perBook[play.book, default: 0] += 1
            let (year, month, _) = CivilDays.date(of: day)
            perMonth[year * 12 + month - 1, default: 0] += 1
        }
        self.plays = plays
        self.rewatches = rewatches
        self.seconds = seconds
        completedBooks = completed.count
        playsOfCompleted = completed.reduce(0) { $0 + (perBook[$1] ?? 0) }
        libraryBooks = library.count
        libraryCompleted = library.intersection(completed).count
        mostActiveMonth = perMonth.max { ($0.value, $0.key) < ($1.value, $1.key) }.map { month in
            let (year, number) = month.key.quotientAndRemainder(dividingBy: 12)
            return CivilDays.monthText(year: year, month: number + 1)
        }
        var perCategory: [Int: Int] = [:]
        for (book, count) in perBook {
            for category in categories(book) { perCategory[category, default: 0] += count }
        }
        favouriteCategory = perCategory.max { ($0.value, -rank($0.key)) < ($1.value, -rank($1.key)) }?.key
        series = perDay.indices.map { Day(day: first + $0, plays: perDay[$0], seconds: secondsPerDay[$0]) }
        (currentStreak, longestStreak) = Streaks.of(days: days, today: today)
    }
}
