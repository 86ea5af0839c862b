import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// `/admin`: counts, rights windows starting and ending in the next 30 days, and active books
/// that parents cannot watch properly (no ready video, or no category).
struct DashboardController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(use: dashboard)
    }

    struct Count: Encodable { let label: String; let value: String; let href: String }
    struct Item: Encodable, Sendable { let title: String; let href: String; let detail: String }

    /// The expensive part (anti-joins over the whole catalog), kept per catalog version for at
    /// most a minute.
    struct Attention: Sendable {
        let noVideo: [Item]
        let noVideoCount: String
        let noCategory: [Item]
        let noCategoryCount: String
        let noRights: [Item]
        let computedAt: Date
    }
    struct Page: Encodable {
        let layout: LayoutView
        let counts: [Count]
        let starting: [Item]
        let ending: [Item]
        let noVideo: [Item]
        let noVideoCount: String
        let noCategory: [Item]
        let noCategoryCount: String
        let noRights: [Item]
        let noRightsURL: String
        let videoLinks: [LayoutView.NavItem]
    }

    static func capped(_ n: Int) -> String { n > 10_000 ? "more than 10,000" : n.formatted() }

    @Sendable
    func dashboard(req: Request) async throws -> View {
        let sql = req.sql
        // Estimates for the big table (exact counts of a million rows stall a page); exact for the rest.
        let counts = try await sql.raw("""
            SELECT (SELECT GREATEST(reltuples, 0)::bigint FROM pg_class WHERE oid = 'books'::regclass) AS books_estimate,
                   (SELECT count(*) FROM categories) AS categories, (SELECT count(*) FROM publishers) AS publishers,
                   (SELECT count(*) FROM staff_users) AS staff
            """).first()!
        let booksEstimate = try counts.decode(column: "books_estimate", as: Int.self)
        let booksText: String
        if booksEstimate > 20_000 {
            booksText = "about \(booksEstimate.formatted())"
        } else {
            booksText = (try await sql.number("SELECT count(*) AS n FROM books")).formatted()
        }
        func items(_ query: SQLQueryString) async throws -> [Item] {
            try await sql.raw(query).all().map {
                Item(title: try $0.decode(column: "title", as: String.self), href: AdminPath.record("books", try $0.decode(column: "id", as: Int.self)),
                     detail: try $0.decode(column: "detail", as: String.self))
            }
        }
        let starting = try await items("""
            SELECT b.id, b.title, 'starts ' || to_char(r.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS detail
              FROM rights_windows r JOIN books b ON b.id = r.book_id
             WHERE r.starts_at > now() AND r.starts_at <= now() + interval '30 days' ORDER BY r.starts_at, r.id LIMIT 5
            """)
        let ending = try await items("""
            SELECT b.id, b.title, 'ends ' || to_char(r.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS detail
              FROM rights_windows r JOIN books b ON b.id = r.book_id
             WHERE r.ends_at > now() AND r.ends_at <= now() + interval '30 days' ORDER BY r.ends_at, r.id LIMIT 5
            """)
        let problems = try await cachedProblems(req, items: items)
        let page = Page(
            layout: LayoutView(req, title: "Dashboard", section: "dashboard"),
            counts: [
                Count(label: "Books", value: booksText, href: AdminPath.list("books")),
                Count(label: "Categories", value: try counts.decode(column: "categories", as: Int.self).formatted(), href: AdminPath.list("categories")),
                Count(label: "Publishers", value: try counts.decode(column: "publishers", as: Int.self).formatted(), href: AdminPath.list("publishers")),
                Count(label: "Staff", value: try counts.decode(column: "staff", as: Int.self).formatted(), href: AdminPath.audit),
            ],
            starting: starting, ending: ending,
            noVideo: problems.noVideo, noVideoCount: problems.noVideoCount,
            noCategory: problems.noCategory, noCategoryCount: problems.noCategoryCount,
            noRights: problems.noRights, noRightsURL: AdminPath.list("books", query: "?status=active&rights=unavailable"),
            videoLinks: [("No video asset", "none"), ("Processing", "processing"), ("Failed", "failed")].map {
                .init(label: $0.0, href: AdminPath.list("books", query: "?status=active&video=\($0.1)"), current: false)
            })
        return try await req.view.render("dashboard", page)
    }

    private func cachedProblems(_ req: Request, items: (SQLQueryString) async throws -> [Item]) async throws -> Attention {
        let version = try await req.appServices.catalogCache.current(for: req).generation.version
        let kept = req.appServices.dashboardAttention
        if let known = kept.attention(at: version) { return known }
        let noVideoCondition: SQLQueryString = "b.status = 'active' AND NOT EXISTS (SELECT 1 FROM video_assets v WHERE v.book_id = b.id AND v.status = 'ready')"
        // Books without a category are kept in their own table (`migrations/0014`).
        let noCategoryCondition: SQLQueryString = "b.status = 'active' AND b.id IN (SELECT u.book_id FROM uncategorized_books u)"
        let noVideo = try await items("""
            SELECT b.id, b.title, COALESCE((SELECT 'video ' || v.status FROM video_assets v WHERE v.book_id = b.id), 'no video asset') AS detail
              FROM books b WHERE \(noVideoCondition) ORDER BY b.id DESC LIMIT 5
            """)
        let noCategory = try await items("SELECT b.id, b.title, 'no category' AS detail FROM books b WHERE \(noCategoryCondition) ORDER BY b.id DESC LIMIT 5")
        // Newest first, walking the id index with one probe each: counting them all would be a
        // pass over the whole catalog, so the panel links to the filtered book list instead.
        let noRights = try await items("""
            SELECT b.id, b.title, 'no rights window covers now' AS detail FROM books b
             WHERE b.status = 'active' AND NOT \(BookSQL.rightsAvailable("b")) ORDER BY b.id DESC LIMIT 5
            """)
        let counts = try await req.sql.raw("""
            SELECT (SELECT count(*) FROM (SELECT 1 FROM books b WHERE \(noVideoCondition) LIMIT 10001) x) AS no_video,
                   (SELECT count(*) FROM (SELECT 1 FROM books b WHERE \(noCategoryCondition) LIMIT 10001) y) AS no_category
            """).first()!
        let problems = Attention(noVideo: noVideo, noVideoCount: Self.capped(try counts.decode(column: "no_video", as: Int.self)),
                                noCategory: noCategory, noCategoryCount: Self.capped(try counts.decode(column: "no_category", as: Int.self)),
                                noRights: noRights, computedAt: Date())
        kept.keep(problems, at: version)
        return problems
    }
}

/// The dashboard's "needs attention" panels, kept for a minute at one catalog version — in a store
/// of their own, not the catalog's response cache.
final class DashboardAttention: Sendable {
    private let kept = NIOLockedValueBox<(attention: DashboardController.Attention, version: Int)?>(nil)

    func attention(at version: Int) -> DashboardController.Attention? {
        kept.withLockedValue { kept in
            guard let kept, kept.version == version, Date().timeIntervalSince(kept.attention.computedAt) < 60 else { return nil }
            return kept.attention
        }
    }

    func keep(_ attention: DashboardController.Attention, at version: Int) {
        kept.withLockedValue { $0 = (attention, version) }
    }
}

