import Foundation
import SQLKit

/// The SQL of a child's family controls (reading them is part of `req.child`).
enum ControlsQueries {
    /// Writes the controls (a row per child, created on first save); the new `updated_at`.
    static func save(_ c: ChildControls, child: Int, on sql: any SQLDatabase) async throws -> Date? {
        try await sql.raw("""
            INSERT INTO child_controls AS cc (child_id, max_age, approved_only, blocked_categories, blocked_publishers, blocked_books,
                                              daily_minutes, bedtime_start, bedtime_end, schedule, updated_at)
            VALUES (\(bind: child), \(bind: c.maxAge), \(bind: c.approvedOnly), \(bind: c.blockedCategories),
                    \(bind: c.blockedPublishers), \(bind: c.blockedBooks), \(bind: c.dailyMinutes),
                    \(bind: c.bedtime?.start.text)::time, \(bind: c.bedtime?.end.text)::time, \(bind: c.daysJSON)::jsonb, now())
            ON CONFLICT (child_id) DO UPDATE SET max_age = EXCLUDED.max_age, approved_only = EXCLUDED.approved_only,
                blocked_categories = EXCLUDED.blocked_categories, blocked_publishers = EXCLUDED.blocked_publishers,
                blocked_books = EXCLUDED.blocked_books, daily_minutes = EXCLUDED.daily_minutes,
                bedtime_start = EXCLUDED.bedtime_start, bedtime_end = EXCLUDED.bedtime_end, schedule = EXCLUDED.schedule, updated_at = now()
            RETURNING updated_at
            """).first(decoding: Saved.self, keyDecodingStrategy: .convertFromSnakeCase)?.updatedAt
    }

    struct Saved: Decodable { let updatedAt: Date }

    /// The parent's audit row of a change (`before` and `after` as the API shows them).
    static func audit(parent: Int, child: Int, before: String, after: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO parent_audit_log (parent_id, child_id, action, before, after)
            VALUES (\(bind: parent), \(bind: child), 'controls.update', \(bind: before)::jsonb, \(bind: after)::jsonb)
            """).run()
    }

    /// The smallest blocked id of each kind that names nothing.
    struct UnknownIDs: Decodable { let category: Int?; let publisher: Int?; let book: Int? }

    static func unknownIDs(_ c: ChildControls, on sql: any SQLDatabase) async throws -> UnknownIDs? {
        try await sql.raw("""
            SELECT (SELECT min(x) FROM unnest(\(bind: c.blockedCategories)::bigint[]) x WHERE NOT EXISTS (SELECT 1 FROM categories WHERE id = x)) AS category,
                   (SELECT min(x) FROM unnest(\(bind: c.blockedPublishers)::bigint[]) x WHERE NOT EXISTS (SELECT 1 FROM publishers WHERE id = x)) AS publisher,
                   (SELECT min(x) FROM unnest(\(bind: c.blockedBooks)::bigint[]) x WHERE NOT EXISTS (SELECT 1 FROM books WHERE id = x)) AS book
            """).first(decoding: UnknownIDs.self)
    }
}
