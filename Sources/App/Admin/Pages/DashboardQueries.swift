import SQLKit
import Vapor

/// The dashboard's statements: the counts, the rights windows of the next 30 days and the active
/// books that need attention.
enum DashboardQueries {
    struct Counts: Decodable, Sendable { let booksEstimate: Int; let categories: Int; let publishers: Int; let staff: Int }

    /// Estimates for the big table (exact counts of a million rows stall a page); exact for the rest.
    static func counts(on sql: any SQLDatabase) async throws -> Counts {
        try await sql.raw("""
            SELECT (SELECT GREATEST(reltuples, 0)::bigint FROM pg_class WHERE oid = 'books'::regclass) AS books_estimate,
                   (SELECT count(*) FROM categories) AS categories, (SELECT count(*) FROM publishers) AS publishers,
                   (SELECT count(*) FROM staff_users) AS staff
            """).first(decoding: Counts.self, keyDecodingStrategy: .convertFromSnakeCase)!
    }

    /// The exact number of books (only asked when the estimate is small).
    static func bookCount(on sql: any SQLDatabase) async throws -> Int {
        try await sql.number("SELECT count(*) AS n FROM books")
    }

    /// A book of a panel: its id, title and what is said of it.
    struct Item: Decodable, Sendable { let id: Int; let title: String; let detail: String }

    /// A rights window's book and the instant it starts or ends (shown in the staff member's zone).
    struct WindowItem: Decodable, Sendable { let id: Int; let title: String; let at: Date }

    /// Rights windows starting in the next 30 days, soonest first.
    static func starting(on sql: any SQLDatabase) async throws -> [WindowItem] {
        try await sql.raw("""
            SELECT b.id, b.title, r.starts_at AS at
              FROM rights_windows r JOIN books b ON b.id = r.book_id
             WHERE r.starts_at > now() AND r.starts_at <= now() + interval '30 days' ORDER BY r.starts_at, r.id LIMIT 5
            """).all(decoding: WindowItem.self)
    }

    /// Rights windows ending in the next 30 days, soonest first.
    static func ending(on sql: any SQLDatabase) async throws -> [WindowItem] {
        try await sql.raw("""
            SELECT b.id, b.title, r.ends_at AS at
              FROM rights_windows r JOIN books b ON b.id = r.book_id
             WHERE r.ends_at > now() AND r.ends_at <= now() + interval '30 days' ORDER BY r.ends_at, r.id LIMIT 5
            """).all(decoding: WindowItem.self)
    }

    private static let noVideoCondition: SQLQueryString = "b.status = 'active' AND NOT EXISTS (SELECT 1 FROM video_assets v WHERE v.book_id = b.id AND v.status = 'ready')"
    // Books without a category are kept in their own table (`migrations/0014`).
    private static let noCategoryCondition: SQLQueryString = "b.status = 'active' AND b.id IN (SELECT u.book_id FROM uncategorized_books u)"

    /// The newest active books without a ready video.
    static func noVideo(on sql: any SQLDatabase) async throws -> [Item] {
        try await sql.raw("""
            SELECT b.id, b.title, COALESCE((SELECT 'video ' || v.status FROM video_assets v WHERE v.book_id = b.id), 'no video asset') AS detail
              FROM books b WHERE \(noVideoCondition) ORDER BY b.id DESC LIMIT 5
            """).all(decoding: Item.self)
    }

    /// The newest active books without a category.
    static func noCategory(on sql: any SQLDatabase) async throws -> [Item] {
        try await sql.raw("SELECT b.id, b.title, 'no category' AS detail FROM books b WHERE \(noCategoryCondition) ORDER BY b.id DESC LIMIT 5")
            .all(decoding: Item.self)
    }

    /// The newest active books no rights window covers now: walking the id index with one probe
    /// each (counting them all would be a pass over the whole catalog, so the panel links to the
    /// filtered book list instead).
    static func noRights(on sql: any SQLDatabase) async throws -> [Item] {
        try await sql.raw("""
            SELECT b.id, b.title, 'no rights window covers now' AS detail FROM books b
             WHERE b.status = 'active' AND NOT \(BookSQL.rightsAvailable("b")) ORDER BY b.id DESC LIMIT 5
            """).all(decoding: Item.self)
    }

    struct ProblemCounts: Decodable, Sendable { let noVideo: Int; let noCategory: Int }

    /// How many active books have no ready video, and no category, counted to 10,001.
    static func problemCounts(on sql: any SQLDatabase) async throws -> ProblemCounts {
        try await sql.raw("""
            SELECT (SELECT count(*) FROM (SELECT 1 FROM books b WHERE \(noVideoCondition) LIMIT 10001) x) AS no_video,
                   (SELECT count(*) FROM (SELECT 1 FROM books b WHERE \(noCategoryCondition) LIMIT 10001) y) AS no_category
            """).first(decoding: ProblemCounts.self, keyDecodingStrategy: .convertFromSnakeCase)!
    }
}
