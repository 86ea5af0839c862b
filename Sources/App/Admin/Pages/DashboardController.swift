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
        let counts = try await DashboardQueries.counts(on: sql)
        let booksText: String
        if counts.booksEstimate > 20_000 {
            booksText = "about \(counts.booksEstimate.formatted())"
        } else {
            booksText = (try await DashboardQueries.bookCount(on: sql)).formatted()
        }
        let time = StaffTime(req.adminSession.user)
        let starting = try await DashboardQueries.starting(on: sql).map { Item(title: $0.title, href: AdminPath.record("books", $0.id), detail: "starts " + time.format($0.at)) }
        let ending = try await DashboardQueries.ending(on: sql).map { Item(title: $0.title, href: AdminPath.record("books", $0.id), detail: "ends " + time.format($0.at)) }
        let problems = try await cachedProblems(req)
        let page = Page(
            layout: LayoutView(req, title: "Dashboard", section: "dashboard"),
            counts: [
                Count(label: "Books", value: booksText, href: AdminPath.list("books")),
                Count(label: "Categories", value: counts.categories.formatted(), href: AdminPath.list("categories")),
                Count(label: "Publishers", value: counts.publishers.formatted(), href: AdminPath.list("publishers")),
                Count(label: "Staff", value: counts.staff.formatted(), href: AdminPath.audit),
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

    static func items(_ rows: [DashboardQueries.Item]) -> [Item] {
        rows.map { Item(title: $0.title, href: AdminPath.record("books", $0.id), detail: $0.detail) }
    }

    private func cachedProblems(_ req: Request) async throws -> Attention {
        let version = try await req.appServices.catalogCache.current(for: req).generation.version
        let kept = req.appServices.dashboardAttention
        if let known = kept.attention(at: version, now: req.now) { return known }
        let sql = req.sql
        let noVideo = Self.items(try await DashboardQueries.noVideo(on: sql))
        let noCategory = Self.items(try await DashboardQueries.noCategory(on: sql))
        let noRights = Self.items(try await DashboardQueries.noRights(on: sql))
        let counts = try await DashboardQueries.problemCounts(on: sql)
        let problems = Attention(noVideo: noVideo, noVideoCount: Self.capped(counts.noVideo),
                                noCategory: noCategory, noCategoryCount: Self.capped(counts.noCategory),
                                noRights: noRights, computedAt: req.now)
        kept.keep(problems, at: version)
        return problems
    }
}

/// The dashboard's "needs attention" panels, kept for a minute at one catalog version — in a store
/// of their own, not the catalog's response cache.
final class DashboardAttention: Sendable {
    private let kept = NIOLockedValueBox<(attention: DashboardController.Attention, version: Int)?>(nil)

    func attention(at version: Int, now: Date) -> DashboardController.Attention? {
        kept.withLockedValue { kept in
            guard let kept, kept.version == version, now.timeIntervalSince(kept.attention.computedAt) < 60 else { return nil }
            return kept.attention
        }
    }

    func keep(_ attention: DashboardController.Attention, at version: Int) {
        kept.withLockedValue { $0 = (attention, version) }
    }
}

