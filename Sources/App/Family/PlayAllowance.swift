import Core
import Foundation
import SQLKit
import Vapor

/// Whether a child may start or continue a play now: not a blocked book, not bedtime, and the
/// day's minutes not used up (docs/api.md, "Family controls").
enum PlayAllowance {
    /// Seconds of `child`'s daily budget spent in `day`: each play counts by the viewing-history
    /// rule (its position minus the position of the same book's play before it, whenever that was,
    /// when that one was not completed and the position went forward; otherwise its position) and
    /// is charged to the day it **arrived** (`recorded_at`), not the day it says it was watched — a
    /// backdated play cannot dodge today's budget.
    static func secondsWatched(child: Int, in day: DateInterval, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            SELECT COALESCE(sum(\(PlaySeconds.ofPlay)), 0)::bigint AS seconds
              FROM plays p \(PlaySeconds.previous)
             WHERE p.child_id = \(bind: child)
               AND COALESCE(p.recorded_at, p.played_at) >= \(bind: day.start) AND COALESCE(p.recorded_at, p.played_at) < \(bind: day.end)
            """).first(decoding: Watched.self)?.seconds ?? 0
    }

    struct Watched: Decodable { let seconds: Int }
    /// Whether the book is in the child's library, and blocked by the controls.
    struct Verdict: Decodable { let present: Bool; let blocked: Bool }

    static func decision(_ controls: ChildControls, now: Date, usedToday: Int) -> PlayDecision {
        controls.clock.decision(now: now, schedule: controls.schedule, usedToday: usedToday)
    }

    /// Throws the 403 the controls give a play of `book` by `child` now; returns when it is
    /// allowed (or the book is not in the child's library: the play's own 404 follows). Run it in
    /// the transaction that stores the play, after `lockChild`, so concurrent plays are judged one
    /// after another, each seeing the minutes of those before it.
    /// `controls` are the child's as the request found them (`req.child`); the minutes used are
    /// read under the lock, on the transaction's connection (a second one from the pool while
    /// holding the child's lock would let concurrent plays exhaust the pool and wait on each other).
    /// Returns the seconds watched today when today has a daily limit (nil: no limit today).
    @discardableResult
    static func requireAllowed(child: Int, controls: ChildControls, book: Int, on sql: any SQLDatabase, now: Date) async throws -> Int? {
        let hasBlocks = controls.maxAge != nil || !controls.blockedBooks.isEmpty || !controls.blockedPublishers.isEmpty
            || !controls.blockedCategories.isEmpty
        let schedule = controls.schedule
        guard hasBlocks || schedule.limitsAnything else { return nil }
        let day = controls.clock.day(containing: now)
        let row = try await sql.raw("""
            SELECT EXISTS (SELECT 1 FROM library_entries WHERE child_id = \(bind: child) AND book_id = \(bind: book)) AS present,
                   \(bind: hasBlocks) AND storytime_blocked_for_child(\(bind: child), \(bind: book)) AS blocked
            """).first(decoding: Verdict.self)
        guard row?.present == true else { return nil }
        if row?.blocked == true {
            throw Problem(status: .forbidden, code: "blocked_by_controls", detail: "This book is blocked by the child's family controls.")
        }
        let todays = schedule.limits(weekday: controls.clock.weekday(ofDayStarting: day.start))
        let used = todays.dailySeconds == nil ? 0 : try await secondsWatched(child: child, in: day, on: sql)
        switch decision(controls, now: now, usedToday: used) {
        case .allowed: return todays.dailySeconds == nil ? nil : used
        case .bedtime(let until):
            throw Problem(status: .forbidden, code: "bedtime", detail: "It is bedtime; plays are allowed again at \(Self.stamp(until)).",
                          headers: retryAfter(until, now: now))
        case .timeLimitReached(let until):
            throw Problem(status: .forbidden, code: "time_limit_reached",
                          detail: "Today's \((todays.dailySeconds ?? 0) / 60) minutes are used; plays are allowed again at \(Self.stamp(until)).",
                          headers: retryAfter(until, now: now))
        }
    }

    /// Takes the child's row lock (the one the play's own trigger takes) for the transaction: the
    /// allowance check and the insert of one child's plays are serialized. False: not the parent's child.
    static func lockChild(_ child: Int, parent: Int, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT id FROM children WHERE id = \(bind: child) AND family_id = \(FamilyRole.family(of: parent)) FOR NO KEY UPDATE").first() != nil
    }

    private static func retryAfter(_ until: Date, now: Date) -> HTTPHeaders {
        ["Retry-After": String(max(1, Int(until.timeIntervalSince(now).rounded(.up))))]
    }

    private static func stamp(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
