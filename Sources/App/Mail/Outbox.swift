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
}
