import CatalogIndexing
import Core
import Foundation
import SQLKit
import Vapor

/// A child's family controls (`child_controls`, migrations/0011) with the parent's time zone
/// they are read in. A child without a row has none: every field at its "no limit" value.
struct ChildControls: Sendable, Equatable {
    var maxAge: Int?
    var approvedOnly = false
    var blockedCategories: [Int] = []
    var blockedPublishers: [Int] = []
    var blockedBooks: [Int] = []
    var dailyMinutes: Int?
    var bedtime: Bedtime?
    /// Days with their own minutes and bedtime (index 0 is Monday); nil: the every-day values.
    var days: [DayLimits?] = Array(repeating: nil, count: 7)
    var timeZone = "UTC"
    var updatedAt: Date?

    static let listLimit = 1000

    /// What the controls leave of the catalog; `library` is the child's library (approved-only).
    func scope(library: [Int]?) -> CatalogScope {
        CatalogScope(maxAge: maxAge, allowed: approvedOnly ? (library ?? []) : nil,
                     blockedCategories: blockedCategories, blockedPublishers: blockedPublishers, blockedBooks: blockedBooks)
    }

    /// The week's limits: `dailyMinutes` and `bedtime` every day but the days that have their own.
    var schedule: WeekSchedule {
        WeekSchedule(everyDay: DayLimits(dailySeconds: dailyMinutes.map { $0 * 60 }, bedtime: bedtime), days: days)
    }

    /// The clock of the parent's zone (UTC if Foundation does not know a name PostgreSQL accepted).
    var clock: FamilyClock { FamilyClock(timeZone: timeZone) ?? FamilyClock(timeZone: "UTC")! }

    /// The columns `init(row:)` reads, for the child aliased `c` (joined to its family's organizer `p` and
    /// `child_controls cc`, see `joins`).
    static let columns: SQLQueryString = """
        p.time_zone, cc.max_age, COALESCE(cc.approved_only, false) AS approved_only,
        COALESCE(cc.blocked_categories, '{}') AS blocked_categories, COALESCE(cc.blocked_publishers, '{}') AS blocked_publishers,
        COALESCE(cc.blocked_books, '{}') AS blocked_books, cc.daily_minutes,
        to_char(cc.bedtime_start, 'HH24:MI') AS bedtime_start, to_char(cc.bedtime_end, 'HH24:MI') AS bedtime_end, cc.updated_at,
        COALESCE(cc.schedule, '{}')::text AS schedule
        """
    static let joins: SQLQueryString = "\(FamilyRole.organizer(ofChild: "c", as: "p")) LEFT JOIN child_controls cc ON cc.child_id = c.id"

    init() {}

    /// The row `columns` selects.
    struct Row: Decodable {
        let maxAge: Int?
        let approvedOnly: Bool
        let blockedCategories: [Int]
        let blockedPublishers: [Int]
        let blockedBooks: [Int]
        let dailyMinutes: Int?
        let bedtimeStart: String?
        let bedtimeEnd: String?
        let schedule: String
        let timeZone: String
        let updatedAt: Date?
        /// The columns by name (no key conversion per row: this row is read on every request of a child's tablet).
        enum CodingKeys: String, CodingKey {
            case maxAge = "max_age", approvedOnly = "approved_only", blockedCategories = "blocked_categories", blockedPublishers = "blocked_publishers"
            case blockedBooks = "blocked_books", dailyMinutes = "daily_minutes", bedtimeStart = "bedtime_start", bedtimeEnd = "bedtime_end"
            case schedule, timeZone = "time_zone", updatedAt = "updated_at"
        }
    }

    /// The controls of a row holding `columns` (and maybe more).
    init(row: any SQLRow) throws {
        let r = try row.decode(model: Row.self)
        maxAge = r.maxAge
        approvedOnly = r.approvedOnly
        blockedCategories = r.blockedCategories
        blockedPublishers = r.blockedPublishers
        blockedBooks = r.blockedBooks
        dailyMinutes = r.dailyMinutes
        if let start = r.bedtimeStart.flatMap(TimeOfDay.init), let end = r.bedtimeEnd.flatMap(TimeOfDay.init) {
            bedtime = Bedtime(start: start, end: end)
        }
        days = try Self.days(json: r.schedule)
        timeZone = r.timeZone
        updatedAt = r.updatedAt
    }

    /// A stored day: `{"daily_minutes": 60, "bedtime_start": "19:30", "bedtime_end": "07:00"}`.
    struct StoredDay: Codable, Equatable {
        var dailyMinutes: Int?
        var bedtimeStart: String?
        var bedtimeEnd: String?
    }

    static func days(json: String) throws -> [DayLimits?] {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let stored = try decoder.decode([String: StoredDay].self, from: Data(json.utf8))
        return WeekSchedule.dayNames.map { name in
            stored[name].map { day in
                DayLimits(dailySeconds: day.dailyMinutes.map { $0 * 60 },
                          bedtime: day.bedtimeStart.flatMap(TimeOfDay.init).flatMap { start in
                              day.bedtimeEnd.flatMap(TimeOfDay.init).flatMap { Bedtime(start: start, end: $0) } })
            }
        }
    }

    /// The days as stored (`migrations/0024`): only the days that have their own limits.
    var daysJSON: String {
        var stored: [String: StoredDay] = [:]
        for (index, day) in days.enumerated() {
            guard let day else { continue }
            stored[WeekSchedule.dayNames[index]] = StoredDay(dailyMinutes: day.dailySeconds.map { $0 / 60 },
                                                             bedtimeStart: day.bedtime?.start.text, bedtimeEnd: day.bedtime?.end.text)
        }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(stored)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
