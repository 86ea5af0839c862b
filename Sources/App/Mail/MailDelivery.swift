import Fluent
import SQLKit
import Vapor

/// Hands the outbox to SMTP: the job `mail delivery` (`Jobs.swift`), one instance at a time by
/// the job runner's lock, every 2 seconds and at once after a request wrote mail. A pass runs in a
/// transaction and marks each mail sent in it. A refusal or an outage is retried with doubling
/// waits (`MAIL_RETRY_SECONDS`, at most an hour); a 5xx answer, or 12 failed attempts, marks the
/// mail failed. Only with `SMTP_URL`; without it mail stays in the outbox (the console's Outbox page).
enum MailDelivery {
    static let batch = 20
    static let maxAttempts = 12
    static let interval: Duration = .seconds(2)
    static let keepSent = "7 days"

    /// Its job's name (`Jobs.swift`): a request that wrote mail wakes it.
    static let job = "mail delivery"

    /// Sent mail leaves the outbox after `keepSent`; used tokens after theirs.
    static func purge(on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM mail_outbox WHERE sent_at < now() - \(unsafeRaw: "interval '\(Self.keepSent)'")").run()
        try await AccountTokens.purge(on: sql)
    }


    private struct Due: Decodable { let id: Int; let recipient: String; let subject: String; let textBody: String; let htmlBody: String; let attempts: Int }

    /// One pass over the due mail, under the delivery lock; each mail dated by `clock`. Stops at the
    /// first transient failure (the server is likely down for the rest too); that mail waits its
    /// backoff, the others their turn.
    static func pass(database: any Database, client: SMTPClient, from sender: String, retry: Double, clock: AppClock, logger: Logger) async throws {
        try await database.transaction { db in
            let sql = db as! any SQLDatabase
            let due = try await sql.raw("""
                SELECT id, recipient, subject, text_body, html_body, attempts FROM mail_outbox
                 WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
                 ORDER BY next_attempt_at, id LIMIT \(bind: batch) FOR UPDATE SKIP LOCKED
                """).all(decoding: Due.self, keyDecodingStrategy: .convertFromSnakeCase)
            for mail in due {
                let message = MIMEMessage(from: sender, to: mail.recipient, subject: mail.subject, text: mail.textBody, html: mail.htmlBody,
                                          messageID: "\(mail.id).\(UUID().uuidString.lowercased())@storytime", date: clock.now())
                do {
                    try await client.send(from: sender, to: mail.recipient, message: message.rendered)
                    try await sql.raw("UPDATE mail_outbox SET sent_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = \(bind: mail.id)").run()
                } catch {
                    let permanent = (error as? SMTPClient.SMTPError)?.permanent ?? false
                    let wait = min(retry * pow(2, Double(mail.attempts)), 3600)
                    try await sql.raw("""
                        UPDATE mail_outbox SET attempts = attempts + 1, last_error = \(bind: String(String(describing: error).prefix(500))),
                               next_attempt_at = now() + make_interval(secs => \(bind: wait)),
                               failed_at = CASE WHEN \(bind: permanent) OR attempts + 1 >= \(bind: maxAttempts) THEN now() END
                         WHERE id = \(bind: mail.id)
                        """).run()
                    logger.warning("mail not delivered", metadata: ["mail": .stringConvertible(mail.id), "attempt": .stringConvertible(mail.attempts + 1),
                                                                    "permanent": .stringConvertible(permanent), "error": .string(String(describing: error))])
                    if !permanent { return }
                }
            }
        }
    }
}
