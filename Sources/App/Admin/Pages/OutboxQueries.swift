import SQLKit
import Vapor

/// What the console's Outbox page reads of `mail_outbox`: never a mail's bodies — only the text a
/// trigger wrote with the mail, its links and token-like words replaced (migration 0032).
enum OutboxQueries {
    struct Row: Decodable, Sendable {
        let id: Int
        let kind: String
        let recipient: String
        let subject: String
        let displayText: String
        let createdAt: Date
        let attempts: Int
        let sentAt: Date?
        let failedAt: Date?
        let lastError: String?
    }

    /// The latest mails, newest first.
    static func latest(limit: Int, on sql: any SQLDatabase) async throws -> [Row] {
        try await sql.raw("""
            SELECT id, kind, recipient, subject, display_text, created_at, attempts, sent_at, failed_at, last_error
              FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
            """).all(decoding: Row.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// What a mail of `kind` carried, said without the link: its purpose and how long it works.
    static func link(kind: String) -> (label: String, lifetime: TimeInterval)? {
        switch AccountMail.Kind(rawValue: kind) {
        case .verify: ("Address confirmation link", AccountTokens.Purpose.verify.lifetime)
        case .reset: ("Password reset link", AccountTokens.Purpose.reset.lifetime)
        case .newEmail: ("New address confirmation link", AccountTokens.Purpose.email.lifetime)
        case .signUpExisting: ("Password reset link", AccountTokens.Purpose.reset.lifetime)
        case .familyInvitation: ("Family invitation link", FamilyInvitations.lifetime)
        case .emailChangeRequested, .addressInUse: nil
        case nil: ("A link, if any (not shown)", 0)
        }
    }
}
