@testable import App
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Testing
import Vapor

/// `SMTP_URL`'s TLS rules (issue 48) against a real SMTP server (`tests/smtp_sink.py`, aiosmtpd)
/// that speaks STARTTLS, TLS from the first byte, or no TLS, with a CA made for the test.
@Suite("SMTP: STARTTLS required, no AUTH in clear")
struct SMTPTLSTests {
    struct OutboxState: Decodable {
        let attempts: Int
        let sentAt: Date?
        let failedAt: Date?
        let lastError: String?
    }

    /// One mail in the outbox, one delivery pass to `url`; the outbox row afterwards and the log lines.
    static func deliver(_ app: Application, to url: String) async throws -> (state: OutboxState, log: [String]) {
        try await Outbox.enqueue(AccountMail.addressInUse(), to: "ann@example.com", parent: nil, on: app.sql)
        let lines = NIOLockedValueBox<[String]>([])
        let logger = Logger(label: "test") { _ in ObservabilityTests.CaptureHandler(lines: lines) }
        let server = try #require(SMTPServer(url: url), "\(url)")
        try await MailDelivery.pass(database: app.db, client: SMTPClient(server: server, group: app.eventLoopGroup),
                                    from: "hello@storytime.test", retry: 1, clock: app.appServices.clock, logger: logger)
        let state = try #require(try await app.sql.raw("SELECT attempts, sent_at, failed_at, last_error FROM mail_outbox")
            .first(decoding: OutboxState.self, keyDecodingStrategy: .convertFromSnakeCase))
        return (state, lines.withLockedValue { $0 })
    }

    @Test("smtp:// upgrades with STARTTLS, checks the certificate against ?ca=, then AUTHs and delivers under TLS")
    func startTLSThenAuth() async throws {
        let sink = try await SMTPSink(user: "mailer", password: "mail secret", tls: .startTLS)
        defer { sink.stop() }
        try await withApp { app in
            let url = sink.url(user: "mailer", password: "mail secret")
            #expect(url.hasPrefix("smtp://") && SMTPServer(url: url)?.security == .startTLS)
            let (state, _) = try await Self.deliver(app, to: url)
            #expect(state.sentAt != nil && state.lastError == nil, "\(state)")
            let mail = try #require(try sink.received().first)
            #expect(mail.to == ["ann@example.com"] && mail.tls && mail.subject == AccountMail.addressInUse().subject)
            #expect(try sink.authAttempts().map(\.tls) == [true])
        }
    }

    @Test("smtps:// speaks TLS from the first byte, its certificate checked against ?ca=")
    func implicitTLS() async throws {
        let sink = try await SMTPSink(user: "mailer", password: "mail secret", tls: .implicit)
        defer { sink.stop() }
        try await withApp { app in
            let (state, _) = try await Self.deliver(app, to: sink.url(user: "mailer", password: "mail secret"))
            #expect(state.sentAt != nil, "\(state)")
            #expect(try sink.received().map(\.tls) == [true])
            #expect(try sink.authAttempts().map(\.tls) == [true])
        }
    }

    @Test("smtp:// to a server that offers no STARTTLS sends nothing, no AUTH in clear; the mail waits with the error, logged")
    func noStartTLSNothingSent() async throws {
        let sink = try await SMTPSink(user: "mailer", password: "mail secret")
        defer { sink.stop() }
        try await withApp { app in
            let (state, log) = try await Self.deliver(app, to: "smtp://mailer:mail%20secret@127.0.0.1:\(sink.port)")
            #expect(try sink.received().isEmpty)
            #expect(try sink.authAttempts().isEmpty)
            // Queued, to be retried like any transient failure.
            #expect(state.sentAt == nil && state.failedAt == nil && state.attempts == 1, "\(state)")
            #expect(state.lastError?.contains("does not offer STARTTLS") == true, "\(state)")
            #expect(log.contains { $0.contains("mail not delivered") && $0.contains("does not offer STARTTLS") }, "\(log)")
        }
    }

    @Test("smtp+insecure:// is the explicit opt-out: plain SMTP, AUTH allowed, to a relay without TLS")
    func insecureOptOut() async throws {
        let sink = try await SMTPSink(user: "mailer", password: "mail secret")
        defer { sink.stop() }
        try await withApp { app in
            let url = sink.url(user: "mailer", password: "mail secret")
            #expect(url.hasPrefix("smtp+insecure://") && SMTPServer(url: url)?.security == .insecure && SMTPServer(url: url)?.user == "mailer")
            let (state, _) = try await Self.deliver(app, to: url)
            #expect(state.sentAt != nil, "\(state)")
            #expect(try sink.received().map(\.tls) == [false])
            #expect(try sink.authAttempts().map(\.tls) == [false])
        }
    }

    @Test("a certificate the client does not trust (no ?ca=: the system's roots) is refused before AUTH or MAIL", arguments: [SMTPSink.TLS.startTLS, .implicit])
    func untrustedCertificate(_ tls: SMTPSink.TLS) async throws {
        let sink = try await SMTPSink(user: "mailer", password: "mail secret", tls: tls)
        defer { sink.stop() }
        try await withApp { app in
            let scheme = tls == .implicit ? "smtps" : "smtp"
            let (state, _) = try await Self.deliver(app, to: "\(scheme)://mailer:mail%20secret@127.0.0.1:\(sink.port)")
            #expect(state.sentAt == nil && state.failedAt == nil && state.lastError?.contains("TLS with 127.0.0.1") == true,
                    "\(state)")
            #expect(state.lastError?.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(state)")
            #expect(try sink.received().isEmpty)
            #expect(try sink.authAttempts().isEmpty)
        }
    }

    @Test("SMTP_URL: the schemes and their ports; ?ca= only with TLS and only a file that exists; nothing else in the query")
    func parsing() throws {
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString).pem").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: ca))
        defer { try? FileManager.default.removeItem(atPath: ca) }
        let submission = try #require(SMTPServer(url: "smtp://mail.example"))
        #expect(submission.security == .startTLS && submission.port == 587 && submission.caFile == nil)
        let implicit = try #require(SMTPServer(url: "smtps://mail.example"))
        #expect(implicit.security == .implicitTLS && implicit.port == 465)
        let relay = try #require(SMTPServer(url: "smtp+insecure://relay:2525"))
        #expect(relay.security == .insecure && relay.port == 2525)
        #expect(SMTPServer(url: "smtp+insecure://relay")?.port == 25)
        #expect(SMTPServer(url: "smtp://mail.example?ca=\(ca)")?.caFile == ca)
        #expect(SMTPServer(url: "smtps://mail.example:2465?ca=\(ca)")?.caFile == ca)
        for refused in ["smtp+insecure://relay?ca=\(ca)", "smtp://mail.example?ca=/nonexistent/ca.pem", "smtp://mail.example?tls=none",
                        "smtp://mail.example?ca=", "smtp://mail.example?ca=\(ca)&ca=\(ca)", "smtp+tls://mail.example", "smtp://"] {
            #expect(SMTPServer(url: refused) == nil, "\(refused)")
        }
    }
}
