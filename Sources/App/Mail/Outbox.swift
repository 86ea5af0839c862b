import SQLKit
import Vapor

/// Mail to send, written in the caller's transaction (so a change that rolls back sends nothing)
/// and delivered afterwards by `MailDelivery`.
enum Outbox {
    static func enqueue(_ mail: AccountMail, to recipient: String, parent: Int?, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO mail_outbox (parent_id, kind, recipient, subject, text_body, html_body)
            VALUES (\(bind: parent), \(bind: mail.kind.rawValue), \(bind: recipient), \(bind: mail.subject), \(bind: mail.text), \(bind: mail.html))
            """).run()
    }

    struct Row: Codable, Sendable {
        let id: Int
        let kind: String
        let recipient: String
        let subject: String
        let textBody: String
        let htmlBody: String
        let createdAt: Date
        let attempts: Int
        let sentAt: Date?
        let failedAt: Date?
        let lastError: String?
    }

    /// The latest mails, newest first (the console's Outbox page).
    static func latest(limit: Int, on sql: any SQLDatabase) async throws -> [Row] {
        try await sql.raw("""
            SELECT id, kind, recipient, subject, text_body, html_body, created_at, attempts, sent_at, failed_at, last_error
              FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
            """).all(decoding: Row.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
