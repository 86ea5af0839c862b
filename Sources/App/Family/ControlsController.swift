import Core
import Foundation
import SQLKit
import Vapor

/// `GET/PUT /api/v1/children/:child_id/controls` and `GET /api/v1/children/:child_id/today`.
struct ControlsController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.parent.get("controls", use: show)
        child.parent.put("controls", use: update)
        child.family.get("today", use: today)
    }

    struct ControlsDTO: Content, Equatable {
        struct BedtimeDTO: Content, Equatable {
            let start: String; let end: String
            init(start: String, end: String) { self.start = start; self.end = end }
            init(_ bedtime: Bedtime) { self.init(start: bedtime.start.text, end: bedtime.end.text) }
        }
        let childId: Int
        @ExplicitNull var maxAge: Int?
        let approvedOnly: Bool
        let blockedCategories: [Int]
        let blockedPublishers: [Int]
        let blockedBooks: [Int]
        @ExplicitNull var dailyMinutes: Int?
        @ExplicitNull var bedtime: BedtimeDTO?
        /// The days with their own limits, by name (`monday` … `sunday`).
        let schedule: [String: DayDTO]
        let timeZone: String
        @ExplicitNull var updatedAt: Date?

        struct DayDTO: Content, Equatable {
            @ExplicitNull var dailyMinutes: Int?
            @ExplicitNull var bedtime: BedtimeDTO?
        }

        init(child: Int, _ c: ChildControls) {
            childId = child; maxAge = c.maxAge; approvedOnly = c.approvedOnly
            blockedCategories = c.blockedCategories; blockedPublishers = c.blockedPublishers; blockedBooks = c.blockedBooks
            dailyMinutes = c.dailyMinutes; bedtime = c.bedtime.map(BedtimeDTO.init)
            var days: [String: DayDTO] = [:]
            for (index, day) in c.days.enumerated() {
                if let day { days[WeekSchedule.dayNames[index]] = DayDTO(dailyMinutes: day.dailySeconds.map { $0 / 60 }, bedtime: day.bedtime.map(BedtimeDTO.init)) }
            }
            schedule = days
            timeZone = c.timeZone; updatedAt = c.updatedAt
        }

    }

    @Sendable
    func show(req: Request) async throws -> ItemDTO<ControlsDTO> {
        let child = try req.child
        return ItemDTO(data: ControlsDTO(child: child.id, child.controls))
    }

    /// Fields left out keep their value; `null` clears one (no limit). Every id must exist.
    /// The change and its audit row are one transaction.
    @Sendable
    func update(req: Request) async throws -> ItemDTO<ControlsDTO> {
        let child = try req.child.id
        let body = try JSONBody(req)
        let before = try req.child.controls
        let after = try Self.applying(body, to: before)
        try await Self.requireKnownIDs(after, on: req.sql)
        let parent = try req.parentID
        let saved: ChildControls = try await req.transaction { sql in
            var after = after
            after.updatedAt = try await ControlsQueries.save(after, child: child, on: sql)
            try await ControlsQueries.audit(parent: parent, child: child, before: try Self.json(child, before), after: try Self.json(child, after), on: sql)
            return after
        }
        return ItemDTO(data: ControlsDTO(child: child, saved))
    }

    private static func json(_ child: Int, _ controls: ChildControls) throws -> String {
        String(buffer: try ByteBuffer.json(ControlsDTO(child: child, controls)))
    }

    /// `controls` with the body's fields applied, each validated with its field named.
    static func applying(_ body: JSONBody, to controls: ChildControls) throws -> ChildControls {
        var c = controls
        if body.has("max_age") { c.maxAge = try body.optionalInteger("max_age", in: 0...18) }
        if body.has("approved_only") { c.approvedOnly = try body.bool("approved_only") }
        if let list = try body.integerList("blocked_categories", limit: ChildControls.listLimit) { c.blockedCategories = list }
        if let list = try body.integerList("blocked_publishers", limit: ChildControls.listLimit) { c.blockedPublishers = list }
        if let list = try body.integerList("blocked_books", limit: ChildControls.listLimit) { c.blockedBooks = list }
        if body.has("daily_minutes") { c.dailyMinutes = try body.optionalInteger("daily_minutes", in: 1...1440) }
        if body.has("bedtime") { c.bedtime = try bedtime(in: body) }
        if body.has("schedule") {
            if let schedule = try body.object("schedule") {
                for (name, value) in schedule.fields ?? [:] {
                    guard let indexes = Self.scheduleKeys[name] else {
                        throw Problem.invalidParameter("schedule.\(name)", "schedule's keys are the days monday … sunday, weekdays and weekend")
                    }
                    var limits: DayLimits?
                    if case .null = value {} else {
                        guard let day = try schedule.object(name) else { continue }
                        limits = DayLimits(dailySeconds: try day.optionalInteger("daily_minutes", in: 1...1440).map { $0 * 60 },
                                           bedtime: day.has("bedtime") ? try bedtime(in: day) : nil)
                    }
                    for index in indexes { c.days[index] = limits }
                }
            } else {
                c.days = Array(repeating: nil, count: 7)
            }
        }
        return c
    }

    /// `schedule`'s keys: a day, or the two groups a family usually means.
    static let scheduleKeys: [String: [Int]] = {
        var keys = Dictionary(uniqueKeysWithValues: WeekSchedule.dayNames.enumerated().map { ($1, [$0]) })
        keys["weekdays"] = [0, 1, 2, 3, 4]
        keys["weekend"] = [5, 6]
        return keys
    }()

    /// `body`'s `bedtime`: `{start, end}` or null.
    private static func bedtime(in body: JSONBody) throws -> Bedtime? {
        guard let object = try body.object("bedtime") else { return nil }
        let field = object.path
        let time = { (name: String) throws -> TimeOfDay in
            guard let time = TimeOfDay(try object.string(name, maxLength: 5)) else {
                throw Problem.invalidParameter(field + name, "\(field + name) must be a time of day HH:MM, such as 19:30")
            }
            return time
        }
        guard let bedtime = Bedtime(start: try time("start"), end: try time("end")) else {
            throw Problem.invalidParameter(String(field.dropLast()), "\(field.dropLast()) must end at another time than it starts")
        }
        return bedtime
    }

    /// Every blocked id names a category, publisher or book that exists (a book in any status).
    private static func requireKnownIDs(_ c: ChildControls, on sql: any SQLDatabase) async throws {
        guard !(c.blockedCategories.isEmpty && c.blockedPublishers.isEmpty && c.blockedBooks.isEmpty) else { return }
        let unknown = try await ControlsQueries.unknownIDs(c, on: sql)
        for (id, field, what) in [(unknown?.category, "blocked_categories", "category"), (unknown?.publisher, "blocked_publishers", "publisher"),
                                  (unknown?.book, "blocked_books", "book")] {
            if let id { throw Problem.invalidParameter(field, "\(field) names no \(what) with id \(id)") }
        }
    }

    struct TodayDTO: Content {
        let childId: Int
        let date: String
        let timeZone: String
        @ExplicitNull var dailyMinutes: Int?
        let minutesUsed: Int
        @ExplicitNull var minutesLeft: Int?
        @ExplicitNull var bedtime: ControlsDTO.BedtimeDTO?
        let inBedtime: Bool
        @ExplicitNull var nextBedtimeStart: Date?
        @ExplicitNull var nextBedtimeEnd: Date?
        let canPlay: Bool
        @ExplicitNull var blockedReason: String?
        @ExplicitNull var nextAllowedAt: Date?

    }

    /// Today in the parent's zone: today's limits (its weekday's), minutes used (played, or held
    /// by today's playback grants) and left, the bedtime now or next (whichever evening it belongs
    /// to), and whether a video may start now (the verdict a playback grant gets).
    @Sendable
    func today(req: Request) async throws -> ItemDTO<TodayDTO> {
        let child = try req.child.id
        let controls = try req.child.controls
        let now = req.now
        let clock = controls.clock
        let day = clock.day(containing: now)
        // Minutes held by today's playback grants are spent as played ones are (`PlaybackReservations`).
        let used = try await PlayAllowance.secondsWatched(child: child, in: day, on: req.sql)
            + PlaybackReservations.held(child: child, in: day, on: req.sql)
        let decision = PlayAllowance.decision(controls, now: now, usedToday: used)
        let todays = controls.schedule.limits(weekday: clock.weekday(ofDayStarting: day.start))
        let bedtime = clock.bedtime(controls.schedule, around: now)
        let dailyMinutes = todays.dailySeconds.map { $0 / 60 }
        let usedMinutes = used / 60
        var reason: String?, until: Date?
        switch decision {
        case .allowed: break
        case .bedtime(let t): (reason, until) = ("bedtime", t)
        case .timeLimitReached(let t): (reason, until) = ("time_limit_reached", t)
        }
        return ItemDTO(data: TodayDTO(
            childId: child, date: clock.date(of: now), timeZone: controls.timeZone, dailyMinutes: dailyMinutes,
            minutesUsed: usedMinutes, minutesLeft: dailyMinutes.map { max(0, $0 - usedMinutes) },
            bedtime: todays.bedtime.map(ControlsDTO.BedtimeDTO.init),
            inBedtime: bedtime.map { $0.start <= now && now < $0.end } ?? false,
            nextBedtimeStart: bedtime?.start, nextBedtimeEnd: bedtime?.end,
            canPlay: decision == .allowed, blockedReason: reason, nextAllowedAt: until))
    }
}
