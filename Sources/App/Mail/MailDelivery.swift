import Fluent
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Hands the outbox to SMTP. Each pass runs in a transaction that first takes a PostgreSQL
/// advisory lock, so of several instances one delivers at a time (the others find the lock taken
/// and try again later); a mail is marked sent in that transaction. A refusal or an outage is
/// retried with doubling waits (`MAIL_RETRY_SECONDS`, at most an hour); a 5xx answer, or 12 failed
/// attempts, marks the mail failed. Passes run every 2 seconds, and at once after a request wrote mail.
/// Started only with `SMTP_URL`; without it mail stays in the outbox (the console's Outbox page).
final class MailDelivery: Sendable {
    static let lockKey = 7_316_001
    static let batch = 20
    static let maxAttempts = 12
    static let interval: Duration = .seconds(2)
    static let keepSent = "7 days"

    private let ticker = Ticker()

    /// Asks for a pass now (after a transaction that wrote mail committed).
    func wake() { ticker.wake() }

    func start(database: any Database, client: SMTPClient, from sender: String, retry: Double, logger: Logger) {
        let lastPurge = NIOLockedValueBox(ContinuousClock.now - .seconds(3600))
        ticker.start(every: Self.interval) {
            do {
                try await Self.pass(database: database, client: client, from: sender, retry: retry, logger: logger)
                if lastPurge.withLockedValue({ ContinuousClock.now - $0 > .seconds(600) }) {
                    lastPurge.withLockedValue { $0 = .now }
                    let sql = database as! any SQLDatabase
                    try await sql.raw("DELETE FROM mail_outbox WHERE sent_at < now() - \(unsafeRaw: "interval '\(Self.keepSent)'")").run()
                    try await AccountTokens.purge(on: sql)
                }
            } catch {
                logger.warning("mail delivery pass failed", metadata: ["error": .string(String(describing: error))])
            }
        }
    }

    func shutdown() async { await ticker.shutdown() }

    private struct Due: Decodable { let id: Int; let recipient: String; let subject: String; let textBody: String; let htmlBody: String; let attempts: Int }

    /// One pass over the due mail, under the delivery lock. Stops at the first transient failure
    /// (the server is likely down for the rest too); that mail waits its backoff, the others their turn.
    static func pass(database: any Database, client: SMTPClient, from sender: String, retry: Double, logger: Logger) async throws {
        try await database.transaction { db in
            let sql = db as! any SQLDatabase
            guard try await sql.raw("SELECT pg_try_advisory_xact_lock(\(bind: lockKey)) AS locked").one().decode(column: "locked", as: Bool.self) else { return }
            let due = try await sql.raw("""
                SELECT id, recipient, subject, text_body, html_body, attempts FROM mail_outbox
                 WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
                 ORDER BY next_attempt_at, id LIMIT \(bind: batch) FOR UPDATE SKIP LOCKED
                """).all(decoding: Due.self, keyDecodingStrategy: .convertFromSnakeCase)
            for mail in due {
                let message = MIMEMessage(from: sender, to: mail.recipient, subject: mail.subject, text: mail.textBody, html: mail.htmlBody,
                                          messageID: "\(mail.id).\(UUID().uuidString.lowercased())@storytime", date: Date())
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


/// Starts `MailDelivery` with the server when `SMTP_URL` is set, and stops it before the pool closes.
struct MailDeliveryStarter: LifecycleHandler {
    // Synchronous: VaporTesting boots with `boot()`, which calls only `didBoot`.
    func didBoot(_ app: Application) throws {
        guard let url = app.settings.smtpURL, let server = SMTPServer(url: url) else {
            if app.environment == .production {
                app.logger.warning("SMTP_URL is not set: mail stays in the outbox (console → Outbox) and nobody receives it")
            }
            return
        }
        app.appServices.mailDelivery.start(database: app.db, client: SMTPClient(server: server, group: app.eventLoopGroup),
                               from: app.settings.mailFrom, retry: app.settings.mailRetrySeconds, logger: app.logger)
    }

    func shutdownAsync(_ app: Application) async {
        await app.appServices.mailDelivery.shutdown()
    }
}
