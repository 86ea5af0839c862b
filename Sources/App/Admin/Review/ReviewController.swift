import SQLKit
import Vapor

/// Review before families see a book (`CONSOLE_REVIEW=on`): an editor submits a draft; another
/// editor or an admin approves it or returns it with a comment; only approved books become active
/// (held by a trigger on every write path, `migrations/0030` and `0034`). Nobody approves what they
/// submitted or changed since the last approval, nor content other than the version the page
/// showed; any content change after an approval ends it. Each step is one conditional update on
/// the locked row (two reviewers clicking at once: one wins, the other is told), audited.
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
        let version: Int
        let authoredPending: Bool
    }

    private func load(_ req: Request) async throws -> ReviewQueries.State {
        guard let id = req.parameters.get("id", as: Int.self),
              let state = try await ReviewQueries.load(id, viewer: try req.staff.id, on: req.sql) else { throw Abort(.notFound) }
        return state
    }

    private func render(_ req: Request, _ book: ReviewQueries.State, error: String? = nil, status: HTTPStatus = .ok) async throws -> Response {
        let user = try req.staff
        let base = AdminPath.record(AdminResource.books.slug, book.id) + "/" + Self.path
        let pending = book.reviewState == "pending"
        let page = Page(layout: LayoutView(req, title: "Review: \(book.title)", section: AdminResource.books.slug), title: book.title,
                        bookURL: AdminPath.record(AdminResource.books.slug, book.id), required: req.application.settings.consoleReview,
                        state: Self.label(book.reviewState), comment: book.reviewComment,
                        submitter: book.submitter.map { user.name(ofStaff: book.submittedBy, email: $0) }, reviewer: book.reviewer.map { user.name(ofStaff: nil, email: $0) },
                        canSubmit: user.canEdit && book.status != "active" && !pending && book.reviewState != "approved",
                        canDecide: user.canEdit && pending && book.submittedBy != user.id && !book.authored,
                        ownSubmission: pending && book.submittedBy == user.id, error: error,
                        submitURL: base + "/submit", approveURL: base + "/approve", returnURL: base + "/return",
                        version: book.contentVersion, authoredPending: pending && book.submittedBy != user.id && book.authored)
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
        return try await step(req, action: .reviewSubmitted, .submit, refused: "This book is active, already waiting for review or approved.", done: "Submitted for review.")
    }

    @Sendable
    func approve(req: Request) async throws -> Response {
        try req.requireEditor()
        // The content version the page showed (required): an edit since then is not approved unseen.
        guard let version = try FormBody(req).value("version").flatMap({ Int($0) }) else {
            return try await render(req, try await load(req), error: "Approve from the book's review page, which shows what you approve.", status: .badRequest)
        }
        return try await step(req, action: .reviewApproved, .approve(version: version),
                              refused: "Only a pending book can be approved, by someone who neither submitted it nor changed its content since the last approval, and only as the page showed it: reload to see its latest content.", done: "Approved: it can now be made active or scheduled.")
    }

    @Sendable
    func giveBack(req: Request) async throws -> Response {
        try req.requireEditor()
        let comment = (try FormBody(req).value("comment") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !comment.isEmpty, comment.count <= 2000 else {
            return try await render(req, try await load(req), error: comment.isEmpty ? "Say what needs changing." : "Keep the comment under 2,000 characters.", status: .badRequest)
        }
        return try await step(req, action: .reviewReturned, .giveBack(comment: comment), refused: "Only a pending book can be returned, and by someone other than who submitted it.", done: "Returned to its editor with your comment.")
    }

    /// One conditional update and its audit row in one transaction; refused when the condition no
    /// longer holds (someone else acted first).
    private func step(_ req: Request, action: AuditAction, _ statement: ReviewQueries.Step, refused: String, done: String) async throws -> Response {
        let user = try req.staff
        guard let id = req.parameters.get("id", as: Int.self) else { throw Abort(.notFound) }
        let changed = try await req.transaction { sql in
            try await ReviewQueries.run(statement, id, user: user, action: action, on: sql)
        }
        guard changed else { return try await render(req, try await load(req), error: refused, status: .conflict) }
        req.adminSession.flash(done)
        return req.redirect(to: AdminPath.record(AdminResource.books.slug, id) + "/" + Self.path)
    }

    struct QueuePage: Encodable {
        let layout: LayoutView
        let required: Bool
        let rows: [ReviewQueries.QueueRow]
    }

    /// The books waiting for review, oldest first.
    @Sendable
    func queue(req: Request) async throws -> View {
        let user = try req.staff
        var rows = try await ReviewQueries.queue(on: req.sql)
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
