import Core
import Foundation
import Testing

/// Days, bedtimes and the play verdict of family controls, at their edges: midnight, a bedtime
/// crossing it, DST changes, a zone far from UTC.
@Suite("Family clock")
struct FamilyClockTests {
    /// An instant from an RFC 3339 text.
    static func at(_ text: String) -> Date { Instants.dateTime(text)! }
    static func bedtime(_ start: String, _ end: String) -> Bedtime { Bedtime(start: TimeOfDay(start)!, end: TimeOfDay(end)!)! }

    @Test("times of day are exactly HH:MM, 00:00 to 23:59; a bedtime must end at another time")
    func timesOfDay() {
        #expect(TimeOfDay("00:00")?.minutes == 0 && TimeOfDay("23:59")?.minutes == 1439 && TimeOfDay("07:05")?.text == "07:05")
        for bad in ["24:00", "7:30", "07:60", "07:3a", "", "07:300", "-1:00", "07-30", "٠٧:٣٠"] { #expect(TimeOfDay(bad) == nil, "\(bad)") }
        #expect(Bedtime(start: TimeOfDay("19:30")!, end: TimeOfDay("19:30")!) == nil)
    }

    @Test("a bedtime crossing midnight holds from the evening to the next morning, in the family's zone")
    func crossingMidnight() throws {
        let paris = try #require(FamilyClock(timeZone: "Europe/Paris"))   // UTC+1 in November
        let night = Self.bedtime("19:30", "07:00")
        // 20:00 in Paris: inside, until 07:00 tomorrow.
        let evening = paris.bedtime(night, around: Self.at("2026-11-23T19:00:00Z"))
        #expect(evening.start == Self.at("2026-11-23T18:30:00Z") && evening.end == Self.at("2026-11-24T06:00:00Z"))
        // 06:59 the next morning: the same night.
        #expect(paris.bedtime(night, around: Self.at("2026-11-24T05:59:00Z")) == evening)
        // 07:00 sharp is awake; the next bedtime is that evening.
        let next = paris.bedtime(night, around: Self.at("2026-11-24T06:00:00Z"))
        #expect(next.start == Self.at("2026-11-24T18:30:00Z"))
        #expect(paris.decision(now: Self.at("2026-11-24T06:00:00Z"), bedtime: night, dailySeconds: nil, usedToday: 0) == .allowed)
        #expect(paris.decision(now: Self.at("2026-11-24T05:59:59Z"), bedtime: night, dailySeconds: nil, usedToday: 0)
                == .bedtime(until: Self.at("2026-11-24T06:00:00Z")))
        // 19:29:59 is still awake.
        #expect(paris.decision(now: Self.at("2026-11-24T18:29:59Z"), bedtime: night, dailySeconds: nil, usedToday: 0) == .allowed)
    }

    @Test("DST: days of 23 and 25 hours; a bedtime over the change night; an end the clocks skip")
    func daylightSaving() throws {
        let newYork = try #require(FamilyClock(timeZone: "America/New_York"))
        // 2026-03-08: clocks go from 02:00 to 03:00 (EST → EDT). 2026-11-01: from 02:00 back to 01:00.
        let spring = newYork.day(containing: Self.at("2026-03-08T12:00:00Z"))
        #expect(spring.start == Self.at("2026-03-08T05:00:00Z") && spring.duration == 23 * 3600)
        let autumn = newYork.day(containing: Self.at("2026-11-01T12:00:00Z"))
        #expect(autumn.start == Self.at("2026-11-01T04:00:00Z") && autumn.duration == 25 * 3600)
        // 22:00 → 07:00 over the spring night lasts 8 hours, over the autumn night 10.
        let night = Self.bedtime("22:00", "07:00")
        let short = newYork.bedtime(night, around: Self.at("2026-03-08T04:00:00Z"))   // 23:00 EST on the 7th
        #expect(short.start == Self.at("2026-03-08T03:00:00Z") && short.end == Self.at("2026-03-08T11:00:00Z") && short.duration == 8 * 3600)
        let long = newYork.bedtime(night, around: Self.at("2026-11-01T05:00:00Z"))    // 01:00 EDT on the 1st
        #expect(long.start == Self.at("2026-11-01T02:00:00Z") && long.end == Self.at("2026-11-01T12:00:00Z") && long.duration == 10 * 3600)
        // A bedtime ending at 02:30, a time that does not exist on 2026-03-08, ends when the clocks reach 03:00.
        let skipped = newYork.bedtime(Self.bedtime("01:00", "02:30"), around: Self.at("2026-03-08T06:30:00Z"))   // 01:30 EST
        #expect(skipped.start == Self.at("2026-03-08T06:00:00Z") && skipped.end == Self.at("2026-03-08T07:00:00Z"))
        // The budget used on the short day is given back at its own midnight, 23 hours after the last.
        #expect(newYork.decision(now: Self.at("2026-03-08T20:00:00Z"), bedtime: nil, dailySeconds: 600, usedToday: 600)
                == .timeLimitReached(until: Self.at("2026-03-09T04:00:00Z")))
    }

    @Test("a zone far from UTC (UTC+14): its day and its date are its own, not UTC's")
    func farZone() throws {
        let kiritimati = try #require(FamilyClock(timeZone: "Pacific/Kiritimati"))
        let now = Self.at("2026-11-23T09:30:00Z")   // 23:30 on the 23rd there
        #expect(kiritimati.date(of: now) == "2026-11-23")
        #expect(kiritimati.day(containing: now) == DateInterval(start: Self.at("2026-11-22T10:00:00Z"), end: Self.at("2026-11-23T10:00:00Z")))
        #expect(kiritimati.date(of: Self.at("2026-11-23T10:00:00Z")) == "2026-11-24")
        #expect(kiritimati.decision(now: now, bedtime: nil, dailySeconds: 1800, usedToday: 1800)
                == .timeLimitReached(until: Self.at("2026-11-23T10:00:00Z")))
    }

    @Test("the next allowed moment follows both rules: a used budget waits for midnight, and a bedtime over midnight for its end")
    func nextAllowedMoment() throws {
        let utc = try #require(FamilyClock(timeZone: "UTC"))
        let night = Self.bedtime("20:00", "07:00"), nap = Self.bedtime("13:00", "14:00")
        // Under the budget: allowed; at it: refused (the play that crossed it was the last one).
        #expect(utc.decision(now: Self.at("2026-11-23T18:00:00Z"), bedtime: night, dailySeconds: 1800, usedToday: 1799) == .allowed)
        // Budget used at 18:00; midnight is inside bedtime, so the next play is at 07:00.
        #expect(utc.decision(now: Self.at("2026-11-23T18:00:00Z"), bedtime: night, dailySeconds: 1800, usedToday: 1800)
                == .timeLimitReached(until: Self.at("2026-11-24T07:00:00Z")))
        // In a nap with the budget used: the nap ends at 14:00, but the budget waits for midnight.
        #expect(utc.decision(now: Self.at("2026-11-23T13:30:00Z"), bedtime: nap, dailySeconds: 1800, usedToday: 1800)
                == .bedtime(until: Self.at("2026-11-24T00:00:00Z")))
        // In a nap with budget left: until 14:00.
        #expect(utc.decision(now: Self.at("2026-11-23T13:30:00Z"), bedtime: nap, dailySeconds: 1800, usedToday: 60)
                == .bedtime(until: Self.at("2026-11-23T14:00:00Z")))
        // At 23:00 in bedtime with the day's budget used: tomorrow's budget is fresh, so 07:00.
        #expect(utc.decision(now: Self.at("2026-11-23T23:00:00Z"), bedtime: night, dailySeconds: 1800, usedToday: 5000)
                == .bedtime(until: Self.at("2026-11-24T07:00:00Z")))
    }

    @Test("a weekly schedule across the spring DST change: each day's limit and each evening's bedtime are its weekday's")
    func weekScheduleAcrossDST() throws {
        let london = try #require(FamilyClock(timeZone: "Europe/London"))   // BST from 2026-03-29 01:00 UTC
        let weekday = DayLimits(dailySeconds: 30 * 60, bedtime: Self.bedtime("19:00", "07:00"))
        let weekend = DayLimits(dailySeconds: 120 * 60, bedtime: Self.bedtime("20:00", "07:00"))
        let schedule = WeekSchedule(everyDay: weekday, days: [nil, nil, nil, nil, nil, weekend, weekend])
        #expect(london.weekday(ofDayStarting: london.day(containing: Self.at("2026-03-29T12:00:00Z")).start) == 6)
        // Friday 19:30 GMT: the weekday bedtime, until Saturday 07:00 GMT.
        #expect(london.decision(now: Self.at("2026-03-27T19:30:00Z"), schedule: schedule, usedToday: 0) == .bedtime(until: Self.at("2026-03-28T07:00:00Z")))
        // Saturday 19:30: the weekend's bedtime starts at 20:00, so still allowed.
        #expect(london.decision(now: Self.at("2026-03-28T19:30:00Z"), schedule: schedule, usedToday: 0) == .allowed)
        // Saturday 23:30 GMT: Saturday's bedtime ends Sunday 07:00 BST (06:00 UTC), across the 23-hour night.
        #expect(london.decision(now: Self.at("2026-03-28T23:30:00Z"), schedule: schedule, usedToday: 0) == .bedtime(until: Self.at("2026-03-29T06:00:00Z")))
        // Sunday noon BST, a 23-hour day: 100 minutes used of the weekend's 120 is fine; 120 is not,
        // until Sunday's bedtime (from 20:00) ends Monday 07:00 BST.
        #expect(london.day(containing: Self.at("2026-03-29T11:00:00Z")).duration == 23 * 3600)
        #expect(london.decision(now: Self.at("2026-03-29T11:00:00Z"), schedule: schedule, usedToday: 100 * 60) == .allowed)
        #expect(london.decision(now: Self.at("2026-03-29T11:00:00Z"), schedule: schedule, usedToday: 120 * 60)
                == .timeLimitReached(until: Self.at("2026-03-30T06:00:00Z")))
        // Monday noon BST: the weekday's 30 minutes.
        #expect(london.decision(now: Self.at("2026-03-30T11:00:00Z"), schedule: schedule, usedToday: 29 * 60) == .allowed)
        #expect(london.decision(now: Self.at("2026-03-30T11:00:00Z"), schedule: schedule, usedToday: 30 * 60)
                == .timeLimitReached(until: Self.at("2026-03-31T06:00:00Z")))
        // A day without a bedtime of its own or every day's: the next one found is the next day's.
        let noFriday = WeekSchedule(everyDay: DayLimits(), days: [nil, nil, nil, nil, nil, weekend, nil])
        #expect(london.bedtime(noFriday, around: Self.at("2026-03-27T19:30:00Z"))?.start == Self.at("2026-03-28T20:00:00Z"))
        #expect(london.bedtime(WeekSchedule(everyDay: DayLimits()), around: Self.at("2026-03-27T19:30:00Z")) == nil)
    }
}
