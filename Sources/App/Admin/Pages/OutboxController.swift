import Vapor

/// `/admin/outbox` (admins, signed in — no API token): the latest mails, sent or waiting, so support
/// can see whether a family's mail went out. It never shows a usable link or token: a mail's text
/// is shown with its links replaced, and a link is named by its kind and expiry. The real bodies
/// go only to SMTP and are emptied once delivered (`OutboxQueries`, migration 0032).
struct OutboxController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.outbox), use: page)
    }

    static let limit = 50

    struct MailView: Encodable {
        let id: Int
        let created: String
        let kind: String
        let recipient: String
        let subject: String
        let state: String
        let error: String?
        /// "Password reset link, works until 2026-11-24 15:05" — never the link.
        let link: String?
        let text: String
    }

    struct Page: Encodable {
        let layout: LayoutView
        let mails: [MailView]
        let delivering: Bool
    }

    @Sendable
    func page(req: Request) async throws -> Response {
        try req.requireAdmin()
        let time = StaffTime(try req.staff)
        let mails = try await OutboxQueries.latest(limit: Self.limit, on: req.sql).map { row in
            MailView(id: row.id, created: time.format(row.createdAt), kind: row.kind, recipient: row.recipient, subject: row.subject,
                     state: row.sentAt.map { "sent " + time.format($0) } ?? (row.failedAt != nil ? "failed" : row.attempts == 0 ? "waiting" : "retrying (\(row.attempts) attempts)"),
                     error: row.lastError, link: OutboxQueries.link(kind: row.kind).map { link in
                         link.lifetime > 0 ? "\(link.label), works until \(time.format(row.createdAt.addingTimeInterval(link.lifetime)))" : link.label
                     }, text: row.displayText)
        }
        return try await req.page("outbox", Page(layout: LayoutView(req, title: "Outbox", section: "outbox"), mails: mails,
                                                 delivering: req.application.settings.smtpURL != nil), headers: ["Cache-Control": "no-store"])
    }

    /// The first http(s) link of a mail's text (for tests reading a mail that waits undelivered).
    static func link(in text: String) -> String? {
        text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://") || $0.hasPrefix("https://") }.map(String.init)
    }
}
