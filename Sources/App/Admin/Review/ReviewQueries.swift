import Foundation
import SQLKit
import Vapor

/// The review workflow's statements. Each step is one conditional update on the locked row,
/// audited through the books' `ResourceStore`; the trigger of `migrations/0034` holds the same
/// rules for every other write path.
enum ReviewQueries {
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
        let contentVersion: Int
        /// The viewer submitted it or changed its content since the last approval.
        let authored: Bool
    }

    static func load(_ id: Int, viewer: Int, on sql: any SQLDatabase) async throws -> State? {
        try await sql.raw("""
            SELECT b.id, b.title, b.status, b.review_state, b.review_comment, b.review_submitted_by AS submitted_by,
                   s.email AS submitter, b.review_submitted_at AS submitted_at, r.email AS reviewer, b.content_version,
                   EXISTS (SELECT 1 FROM book_review_authors a WHERE a.book_id = b.id AND a.staff_user_id = \(bind: viewer)) AS authored
              FROM books b LEFT JOIN staff_users s ON s.id = b.review_submitted_by LEFT JOIN staff_users r ON r.id = b.reviewed_by
             WHERE b.id = \(bind: id)
            """).first(decoding: State.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// A step of the workflow: one conditional update.
    enum Step: Sendable {
        case submit
        /// Approves the content the reviewer saw (`version`, when the page sent it), if the
        /// reviewer neither submitted it nor changed it since the last approval.
        case approve(version: Int)
        case giveBack(comment: String)
    }

    /// What a review step's audit row keeps of the book.
    static let snapshot: SQLFragment = "jsonb_build_object('review_state', t.review_state, 'review_comment', t.review_comment)"

    /// Runs `step` on the book through the books' `ResourceStore.audited` — locked first (the
    /// conditional update then reads what a concurrent edit committed), with its audit row; false
    /// when its condition no longer holds.
    static func run(_ step: Step, _ id: Int, user: StaffUser, action: AuditAction, on sql: any SQLDatabase) async throws -> Bool {
        let changed = try await ResourceStore.books(sql).audited(action, [id], snapshot: snapshot, locking: true,
                                                                 in: sql, audit: AuditWriter(staff: user)) { sql, before in
            guard !before.isEmpty else { throw Abort(.notFound) }
            do {
                // A savepoint: the trigger's refusal leaves the transaction usable.
                try await sql.raw("SAVEPOINT review_step").run()
                return try await sql.raw(statement(step, id, by: user.id)).first() == nil ? [] : [id]
            } catch let error where ConstraintViolation(error)?.constraint == "books_review_approver" {
                try await sql.raw("ROLLBACK TO SAVEPOINT review_step").run()
                return []   // the trigger's word on a path the condition did not cover
            }
        }
        return !changed.isEmpty
    }

    private static func statement(_ step: Step, _ id: Int, by user: Int) -> SQLQueryString {
        switch step {
        case .submit:
            return """
                UPDATE books SET review_state = 'pending', review_comment = NULL, review_submitted_by = \(bind: user), review_submitted_at = now(),
                       reviewed_by = NULL, reviewed_at = NULL
                 WHERE id = \(bind: id) AND status <> 'active' AND review_state IS DISTINCT FROM 'pending' AND review_state IS DISTINCT FROM 'approved'
                 RETURNING id
                """
        case .approve(let version):
            return """
                UPDATE books SET review_state = 'approved', review_comment = NULL, reviewed_by = \(bind: user), reviewed_at = now()
                 WHERE id = \(bind: id) AND review_state = 'pending' AND review_submitted_by IS DISTINCT FROM \(bind: user)
                   AND NOT EXISTS (SELECT 1 FROM book_review_authors a WHERE a.book_id = books.id AND a.staff_user_id = \(bind: user))
                   AND content_version = \(bind: version)
                 RETURNING id
                """
        case .giveBack(let comment):
            return """
                UPDATE books SET review_state = 'returned', review_comment = \(bind: comment), reviewed_by = \(bind: user), reviewed_at = now()
                 WHERE id = \(bind: id) AND review_state = 'pending' AND review_submitted_by IS DISTINCT FROM \(bind: user)
                 RETURNING id
                """
        }
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

    /// The books waiting for review, oldest first.
    static func queue(on sql: any SQLDatabase) async throws -> [QueueRow] {
        try await sql.raw("""
            SELECT b.id, b.title, s.email AS submitter, b.review_submitted_by AS submitted_by, b.review_submitted_at AS submitted_at
              FROM books b LEFT JOIN staff_users s ON s.id = b.review_submitted_by
             WHERE b.review_state = 'pending' ORDER BY b.review_submitted_at, b.id LIMIT 500
            """).all(decoding: QueueRow.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
