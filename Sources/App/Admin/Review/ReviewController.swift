import SQLKit
import Vapor

/// Review before families see a book (`CONSOLE_REVIEW=on`): an editor submits a draft; another
/// editor or an admin approves it or returns it with a comment; only approved books become active
/// (held by a trigger on every write path, `migrations/0030`). Each step is one conditional
/// update (two reviewers clicking at once: one wins, the other is told), audited.
struct ReviewController: RouteCollection {
    static let path = "review"

    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.reviews), use: queue)
        let book = [.constant(AdminResource.books.slug), .parameter("id"), .constant(Self.path)] as [PathComponent]
        routes.get(book, use: page)
        routes.post(book + [.constant("submit")], use: submit)
        routes.post(book + [.constant("approve")], use: approve)
        routes.post(book + [.constant("return")], use: giveBack)
    }

    struct State: Decodable {
        let id: Int
        let title: String
        let status: String
        let reviewState: String?
        let reviewComment: String?
        let submittedBy: Int?
        let submitter: String?
        let submittedAt: Date?
        let reviewer: String?
    }

    struct Page: Encodable {
        let layout: LayoutView
        let title: String
        let bookURL: String
        let required: Bool
        let state: String
        let comment: String?
        let submitter: String?
        let reviewer: String?
        let canSubmit: Bool
        let canDecide: Bool
        let ownSubmission: Bool
        let error: String?
        let submitURL: String, approveURL: String, returnURL: String
    }

    private func load(_ req: Request) async throws -> State {
        guard let id = req.parameters.get("id", as: Int.self), let state = try await req.sql.raw("""
            SELECT b.id, b.title, b.status, b.review_state, b.review_comment, b.review_submitted_by AS submitted_by,
                   s.email AS submitter, b.review_submitted_at AS submitted_at, r.email AS reviewer
              FROM books b LEFT JOIN staff_users s ON s.id = b.review_submitted_by LEFT JOIN staff_users r ON r.id = b.reviewed_by
             WHERE b.id = \(bind: id)
            """).first(decoding: State.self, keyDecodingStrategy: .convertFromSnakeCase) else { throw Abort(.notFound) }
        return state
    }

    private func render(_ req: Request, _ book: State, error: String? = nil, status: HTTPStatus = .ok) async throws -> Response {
        let user = try req.staff
        let base = AdminPath.record(AdminResource.books.slug, book.id) + "/" + Self.path
        let pending = book.reviewState == "pending"
        let page = Page(layout: LayoutView(req, title: "Review: \(book.title)", section: AdminResource.books.slug), title: book.title,
                        bookURL: AdminPath.record(AdminResource.books.slug, book.id), required: req.application.settings.consoleReview,
                        state: Self.label(book.reviewState), comment: book.reviewComment,
                        submitter: book.submitter.map { user.name(ofStaff: book.submittedBy, email: $0) }, reviewer: book.reviewer.map { user.name(ofStaff: nil, email: $0) },
                        canSubmit: user.canEdit && book.status != "active" && !pending && book.reviewState != "approved",
                        canDecide: user.canEdit && pending && book.submittedBy != user.id,
                        ownSubmission: pending && book.submittedBy == user.id, error: error,
                        submitURL: base + "/submit", approveURL: base + "/approve", returnURL: base + "/return")
        return try await req.page("review", page, status: status)
    }

    static func label(_ state: String?) -> String {
        switch state {
        case "pending": return "Waiting for review"
        case "approved": return "Approved"
        case "returned": return "Returned for changes"
        default: return "Not submitted"
        }
    }

    @Sendable func page(req: Request) async throws -> Response { try await render(req, try await load(req)) }

    @Sendable
    func submit(req: Request) async throws -> Response {
        try req.requireEditor()
        return try await step(req, action: "review: submitted", sql: { id, user in """
            UPDATE books SET review_state = 'pending', review_comment = NULL, review_submitted_by = \(bind: user), review_submitted_at = now(),
                   reviewed_by = NULL, reviewed_at = NULL
             WHERE id = \(bind: id) AND status <> 'active' AND review_state IS DISTINCT FROM 'pending' AND review_state IS DISTINCT FROM 'approved'
            """ }, refused: "This book is active, already waiting for review or approved.", done: "Submitted for review.")
    }

    @Sendable
    func approve(req: Request) async throws -> Response {
        try req.requireEditor()
        return try await step(req, action: "review: approved", sql: { id, user in """
            UPDATE books SET review_state = 'approved', review_comment = NULL, reviewed_by = \(bind: user), reviewed_at = now()
             WHERE id = \(bind: id) AND review_state = 'pending' AND review_submitted_by IS DISTINCT FROM \(bind: user)
            """ }, refused: "Only a pending book can be approved, and by someone other than who submitted it.", done: "Approved: it can now be made active or scheduled.")
    }

    @Sendable
    func giveBack(req: Request) async throws -> Response {
        try req.requireEditor()
        let comment = (try FormBody(req).value("comment") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !comment.isEmpty, comment.count <= 2000 else {
            return try await render(req, try await load(req), error: comment.isEmpty ? "Say what needs changing." : "Keep the comment under 2,000 characters.", status: .badRequest)
        }
        return try await step(req, action: "review: returned", sql: { id, user in """
            UPDATE books SET review_state = 'returned', review_comment = \(bind: comment), reviewed_by = \(bind: user), reviewed_at = now()
             WHERE id = \(bind: id) AND review_state = 'pending' AND review_submitted_by IS DISTINCT FROM \(bind: user)
            """ }, refused: "Only a pending book can be returned, and by someone other than who submitted it.", done: "Returned to its editor with your comment.")
    }

    /// One conditional update and its audit row in one transaction; refused when the condition no
    /// longer holds (someone else acted first).
    private func step(_ req: Request, action: String, sql statement: @escaping @Sendable (Int, Int) -> SQLQueryString,
                      refused: String, done: String) async throws -> Response {
        let user = try req.staff
        guard let id = req.parameters.get("id", as: Int.self) else { throw Abort(.notFound) }
        let changed = try await req.transaction { sql -> Bool in
            let before = try await sql.raw("SELECT jsonb_build_object('review_state', review_state)::text AS j FROM books WHERE id = \(bind: id) FOR UPDATE").first()
            guard let before else { throw Abort(.notFound) }
            guard try await sql.raw(statement(id, user.id) + " RETURNING id").first() != nil else { return false }
            let after = try await sql.raw("SELECT jsonb_build_object('review_state', review_state, 'review_comment', review_comment)::text AS j FROM books WHERE id = \(bind: id)").first()!
            try await AuditWriter(staff: user).record(action, table: "books", ids: [id], before: [id: try before.decode(column: "j", as: String.self)],
                                                      after: [id: try after.decode(column: "j", as: String.self)], on: sql)
            return true
        }
        guard changed else { return try await render(req, try await load(req), error: refused, status: .conflict) }
        req.adminSession.flash(done)
        return req.redirect(to: AdminPath.record(AdminResource.books.slug, id) + "/" + Self.path)
    }

    struct QueueRow: Decodable, Encodable {
        let id: Int
        let title: String
        let submitter: String?
        let submittedBy: Int?
        let submittedAt: Date
        var href: String?
        var when: String?
        var by: String?
    }

    struct QueuePage: Encodable {
        let layout: LayoutView
        let required: Bool
        let rows: [QueueRow]
    }

    /// The books waiting for review, oldest first.
    @Sendable
    func queue(req: Request) async throws -> View {
        let user = try req.staff
        var rows = try await req.sql.raw("""
            SELECT b.id, b.title, s.email AS submitter, b.review_submitted_by AS submitted_by, b.review_submitted_at AS submitted_at
              FROM books b LEFT JOIN staff_users s ON s.id = b.review_submitted_by
             WHERE b.review_state = 'pending' ORDER BY b.review_submitted_at, b.id LIMIT 500
            """).all(decoding: QueueRow.self, keyDecodingStrategy: .convertFromSnakeCase)
        let zone = StaffTime(user)
        for index in rows.indices {
            rows[index].href = AdminPath.record(AdminResource.books.slug, rows[index].id) + "/" + Self.path
            rows[index].when = zone.format(rows[index].submittedAt)
            rows[index].by = rows[index].submitter.map { user.name(ofStaff: rows[index].submittedBy, email: $0) } ?? "—"
        }
        return try await req.view.render("reviews", QueuePage(layout: LayoutView(req, title: "Review queue", section: "reviews"),
                                                              required: req.application.settings.consoleReview, rows: rows))
    }
}

/// Writes `CONSOLE_REVIEW` where the trigger reads it (`review_policy`), when the app is
/// configured. Before migrations have run (`App migrate` itself) there is no table yet: nothing to do.
enum ReviewPolicy {
    static func write(_ required: Bool, on app: Application) async throws {
        let sql = app.db as! any SQLDatabase
        do {
            try await sql.raw("UPDATE review_policy SET required = \(bind: required)").run()
        } catch {
            app.logger.debug("review policy not written", metadata: ["error": .string(String(describing: error))])
        }
    }
}
