import Vapor

/// `/admin/outbox` (admins): the latest mails, sent or waiting, with their links — so that in
/// development (no `SMTP_URL`) a newcomer can follow a verification link, and in production
/// support can see whether a family's mail went out.
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
        let link: String?
        let text: String
    }

    struct Page: Encodable {
        let layout: LayoutView
        let mails: [MailView]
        let delivering: Bool
    }

    @Sendable
    func page(req: Request) async throws -> View {
        try req.requireAdmin()
        let mails = try await Outbox.latest(limit: Self.limit, on: req.sql).map { row in
            MailView(id: row.id, created: Self.time(row.createdAt), kind: row.kind, recipient: row.recipient, subject: row.subject,
                     state: row.sentAt.map { "sent " + Self.time($0) } ?? (row.failedAt != nil ? "failed" : row.attempts == 0 ? "waiting" : "retrying (\(row.attempts) attempts)"),
                     error: row.lastError, link: Self.link(in: row.textBody), text: row.textBody)
        }
        return try await req.view.render("outbox", Page(layout: LayoutView(req, title: "Outbox", section: "outbox"), mails: mails,
                                                        delivering: req.application.settings.smtpURL != nil))
    }

    /// The first http(s) link of a mail's text (our own links: `PUBLIC_BASE_URL` + a path + a token).
    static func link(in text: String) -> String? {
        text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://") || $0.hasPrefix("https://") }.map(String.init)
    }

    static func time(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon))
    }
}
