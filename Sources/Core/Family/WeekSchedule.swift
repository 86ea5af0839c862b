import Foundation

/// One day's limits: the minutes a child may watch and the bedtime that starts that evening.
public struct DayLimits: Sendable, Equatable {
    public var dailySeconds: Int?
    public var bedtime: Bedtime?

    public init(dailySeconds: Int? = nil, bedtime: Bedtime? = nil) {
        self.dailySeconds = dailySeconds
        self.bedtime = bedtime
    }
}

/// Limits per weekday: the every-day values, replaced on the days that have their own.
public struct WeekSchedule: Sendable, Equatable {
    /// ISO order: Monday first.
    public static let dayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    public var everyDay: DayLimits
    /// Index 0 is Monday; nil: that day keeps `everyDay`.
    public var days: [DayLimits?]

    public init(everyDay: DayLimits, days: [DayLimits?] = Array(repeating: nil, count: 7)) {
        precondition(days.count == 7, "a week has seven days")
        self.everyDay = everyDay
        self.days = days
    }

    /// The limits of weekday `index` (0 is Monday).
    public func limits(weekday index: Int) -> DayLimits { days[index] ?? everyDay }

    /// Whether any day has a bedtime or a daily limit.
    public var limitsAnything: Bool {
        (0..<7).contains { let d = limits(weekday: $0); return d.bedtime != nil || d.dailySeconds != nil }
    }
}
