import Foundation

/// A wall-clock time of day, written `HH:MM` (24-hour).
public struct TimeOfDay: Sendable, Equatable, Hashable {
    /// Minutes after midnight, 0..<1440.
    public let minutes: Int

    public init?(minutes: Int) {
        guard (0..<1440).contains(minutes) else { return nil }
        self.minutes = minutes
    }

    /// Exactly `HH:MM` with HH 00–23 and MM 00–59.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
              bytes.indices.allSatisfy({ $0 == 2 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) }) else { return nil }
        let digit = { (i: Int) in Int(bytes[i] - UInt8(ascii: "0")) }
        let hour = digit(0) * 10 + digit(1), minute = digit(3) * 10 + digit(4)
        guard hour < 24, minute < 60 else { return nil }
        self.minutes = hour * 60 + minute
    }

    public var text: String {
        let h = minutes / 60, m = minutes % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}

/// A nightly bedtime: from `start` to `end` in local time, crossing midnight when `end` is earlier.
public struct Bedtime: Sendable, Equatable {
    public let start: TimeOfDay
    public let end: TimeOfDay

    public init?(start: TimeOfDay, end: TimeOfDay) {
        guard start != end else { return nil }
        self.start = start
        self.end = end
    }
}

/// What the family controls say about a play at an instant.
public enum PlayDecision: Sendable, Equatable {
    case allowed
    /// It is bedtime; plays are allowed again at `until` (the end of bedtime, or later if the
    /// day's minutes are still used up then).
    case bedtime(until: Date)
    /// The day's minutes are used; plays are allowed again at `until` (the next local midnight,
    /// or the end of a bedtime that covers it).
    case timeLimitReached(until: Date)
}

/// Days and bedtimes in a family's time zone. Days start at local midnight (23 or 25 hours long
/// across a DST change); a wall time a DST change skips is read as the first instant after the
/// gap, a repeated one as its first occurrence.
public struct FamilyClock: Sendable {
    public let calendar: Calendar

    public init?(timeZone identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
    }

    /// The local day holding `instant`: from its midnight to the next.
    public func day(containing instant: Date) -> DateInterval {
        let start = calendar.startOfDay(for: instant)
        return DateInterval(start: start, end: nextDay(after: start))
    }

    /// The local date of `instant`, `YYYY-MM-DD`.
    public func date(of instant: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: instant)
        let pad = { (n: Int, width: Int) in String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        return pad(c.year ?? 0, 4) + "-" + pad(c.month ?? 0, 2) + "-" + pad(c.day ?? 0, 2)
    }

    private func nextDay(after dayStart: Date) -> Date {
        // Noon never falls in a DST gap, so a day added to it lands on the next local date.
        let noon = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: dayStart) ?? dayStart.addingTimeInterval(43_200)
        return calendar.startOfDay(for: calendar.date(byAdding: .day, value: 1, to: noon) ?? noon.addingTimeInterval(86_400))
    }

    private func previousDay(before dayStart: Date) -> Date {
        calendar.startOfDay(for: dayStart.addingTimeInterval(-3_600))
    }

    /// The instant of wall time `time` on the local day starting at `dayStart`.
    func instant(_ time: TimeOfDay, onDayStarting dayStart: Date) -> Date {
        calendar.date(bySettingHour: time.minutes / 60, minute: time.minutes % 60, second: 0, of: dayStart,
                      matchingPolicy: .nextTime, repeatedTimePolicy: .first, direction: .forward)
            ?? dayStart.addingTimeInterval(TimeInterval(time.minutes * 60))
    }

    /// The bedtime that starts on the local day starting at `dayStart`.
    func bedtime(_ bedtime: Bedtime, startingOn dayStart: Date) -> DateInterval {
        let start = instant(bedtime.start, onDayStarting: dayStart)
        let endDay = bedtime.end.minutes > bedtime.start.minutes ? dayStart : nextDay(after: dayStart)
        let end = instant(bedtime.end, onDayStarting: endDay)
        return DateInterval(start: start, end: max(end, start))
    }

    /// Monday-first index (0–6) of the local day starting at `dayStart`.
    public func weekday(ofDayStarting dayStart: Date) -> Int {
        (calendar.component(.weekday, from: dayStart) + 5) % 7
    }

    /// The bedtime holding `instant`, or else the next one.
    public func bedtime(_ bedtime: Bedtime, around instant: Date) -> DateInterval {
        self.bedtime(WeekSchedule(everyDay: DayLimits(bedtime: bedtime)), around: instant)!
    }

    /// The bedtime of `schedule` holding `instant`, or else the next one within a week (each
    /// evening's bedtime is the one of the day it starts on); nil when no day has one.
    public func bedtime(_ schedule: WeekSchedule, around instant: Date) -> DateInterval? {
        var day = previousDay(before: calendar.startOfDay(for: instant))
        for _ in 0..<9 {
            if let bedtime = schedule.limits(weekday: weekday(ofDayStarting: day)).bedtime {
                let interval = self.bedtime(bedtime, startingOn: day)
                if interval.end > instant { return interval }
            }
            day = nextDay(after: day)
        }
        return nil
    }

    /// The controls' verdict on a play at `now`, given the seconds already watched today (later
    /// days start at zero: no play is ever recorded in the future).
    public func decision(now: Date, bedtime: Bedtime?, dailySeconds: Int?, usedToday: Int) -> PlayDecision {
        decision(now: now, schedule: WeekSchedule(everyDay: DayLimits(dailySeconds: dailySeconds, bedtime: bedtime)), usedToday: usedToday)
    }

    /// The verdict under a weekly schedule: today's daily limit is the one of today's weekday.
    public func decision(now: Date, schedule: WeekSchedule, usedToday: Int) -> PlayDecision {
        let today = day(containing: now)
        let limit = schedule.limits(weekday: weekday(ofDayStarting: today.start)).dailySeconds
        var t = now
        var verdict: PlayDecision = .allowed
        for _ in 0..<8 {
            if let interval = self.bedtime(schedule, around: t), interval.start <= t && t < interval.end {
                if verdict == .allowed { verdict = .bedtime(until: interval.end) }
                t = interval.end
                continue
            }
            if let limit, today.contains(t) && t < today.end, usedToday >= limit {
                if verdict == .allowed { verdict = .timeLimitReached(until: today.end) }
                t = today.end
                continue
            }
            break
        }
        switch verdict {
        case .allowed: return .allowed
        case .bedtime: return .bedtime(until: t)
        case .timeLimitReached: return .timeLimitReached(until: t)
        }
    }
}
