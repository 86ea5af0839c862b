import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import SQLKit
import Vapor

/// Delivers the webhook outbox (`webhook_deliveries`, written by triggers in the transaction of
/// each change): the job `webhook delivery` (`Jobs.swift`), one instance at a time by the job
/// runner's lock; a pass also claims due rows with a 60-second lease (`FOR UPDATE SKIP LOCKED`:
/// a pass run by hand, as tests do, never takes a row a running one holds), POSTs each signed the
/// Standard Webhooks way, and records the answer. A 2xx is delivered; anything else is retried
/// after `WEBHOOK_RETRY_SECONDS` × 5ⁿ (at most 6 hours) until 8 attempts, then failed — the
/// console's delivery log can send it again. Each attempt checks the endpoint's address first
/// (`WebhookTargets`: public internet only, unless `WEBHOOK_ALLOW_PRIVATE`), connects to the
/// address checked, and follows no redirect; what went wrong short of an HTTP answer is logged
/// as one generic text (the reason goes to the server log only), so the log maps no ports.
enum WebhookDelivery {
    static let maxAttempts = 8
    static let lease = 60
    static let batch = 20
    static let timeout: TimeAmount = .seconds(10)
    /// How long an answer's body is read after its status arrived.
    static let bodyWait: Duration = .seconds(2)

    /// Its job's name (`Jobs.swift`): a request that wrote deliveries wakes it.
    static let job = "webhook delivery"

    /// Delivered and failed deliveries are kept this long in the log.
    static let keep = "30 days"

    /// Drops deliveries older than `keep` from the log.
    static func purge(on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM webhook_deliveries WHERE COALESCE(delivered_at, failed_at) < now() - \(unsafeRaw: "interval '\(Self.keep)'")").run()
    }


    private struct Due: Decodable { let id: Int; let messageId: String; let payload: String; let url: String; let secret: String; let attempts: Int }

    /// One pass: claims what is due and sends it (each signed with `clock`'s time). Returns how many were delivered.
    @discardableResult
    static func pass(sql: any SQLDatabase, client: HTTPClient, retry: Double, targets: WebhookTargets, clock: AppClock, logger: Logger) async throws -> Int {
        let due = try await sql.raw("""
            UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => \(bind: lease))
              FROM webhook_endpoints e
             WHERE e.id = d.endpoint_id AND d.id IN (
                   SELECT id FROM webhook_deliveries
                    WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
                    ORDER BY next_attempt_at, id LIMIT \(bind: batch) FOR UPDATE SKIP LOCKED)
            RETURNING d.id, d.message_id, d.payload::text AS payload, e.url, e.secret, d.attempts
            """).all(decoding: Due.self, keyDecodingStrategy: .convertFromSnakeCase)
        var delivered = 0
        for item in due.sorted(by: { $0.id < $1.id }) {
            let outcome = await send(item, group: client.eventLoopGroup, targets: targets, clock: clock, logger: logger)
            if outcome.ok { delivered += 1 }
            let attempts = item.attempts + 1
            let wait = min(retry * pow(5, Double(attempts - 1)), 6 * 3600)
            try await sql.raw("""
                UPDATE webhook_deliveries SET attempts = \(bind: attempts), locked_until = NULL, last_status = \(bind: outcome.status),
                       last_error = \(bind: outcome.error),
                       delivered_at = CASE WHEN \(bind: outcome.ok) THEN now() END,
                       failed_at = CASE WHEN NOT \(bind: outcome.ok) AND \(bind: attempts) >= \(bind: maxAttempts) THEN now() END,
                       next_attempt_at = now() + make_interval(secs => \(bind: wait))
                 WHERE id = \(bind: item.id)
                """).run()
            if !outcome.ok {
                logger.info("webhook delivery failed", metadata: ["delivery": .stringConvertible(item.id), "attempt": .stringConvertible(attempts),
                                                                  "error": .string(outcome.error ?? "HTTP \(outcome.status ?? 0)")])
            }
        }
        return delivered
    }

    /// What the delivery log says of every attempt that got no HTTP answer (a refused address, no
    /// connection, a timeout, a TLS failure alike).
    static let notDelivered = "not delivered: no answer from an allowed address"

    private static func send(_ item: Due, group: any EventLoopGroup, targets: WebhookTargets, clock: AppClock,
                             logger: Logger) async -> (ok: Bool, status: Int?, error: String?) {
        guard let key = WebhookSignature.key(secret: item.secret) else { return (false, nil, "the endpoint's secret is not a usable key") }
        let target: WebhookTargets.Checked
        switch await targets.check(item.url) {
        case .success(let checked): target = checked
        case .failure(let refusal):
            logger.notice("webhook target refused", metadata: ["delivery": .stringConvertible(item.id), "reason": .string("\(refusal)")])
            return (false, nil, notDelivered)
        }
        let timestamp = Int(clock.now().timeIntervalSince1970)
        let body = Data(item.payload.utf8)
        var request = HTTPClientRequest(url: item.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Storytime-Webhooks/1")
        request.headers.add(name: "webhook-id", value: item.messageId)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: WebhookSignature.sign(id: item.messageId, timestamp: timestamp, body: body, key: key))
        request.body = .bytes(ByteBuffer(data: body))
        // A client of its own: connects to the address checked (the name still in Host and TLS
        // SNI), follows no redirect, and keeps no connection for the next delivery.
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(5), read: timeout)
        configuration.dnsOverride = [target.host: target.address.description]
        let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
        let outcome: (ok: Bool, status: Int?, error: String?)
        do {
            let response = try await client.execute(request, timeout: timeout)
            let status = Int(response.status.code)
            // The status is the answer. The body is read for a moment at most: a receiver that
            // trickles it byte by byte would otherwise hold this pass, and every delivery behind it.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { _ = try? await response.body.collect(upTo: 64 * 1024) }
                group.addTask { try? await Task.sleep(for: Self.bodyWait) }
                await group.next()
                group.cancelAll()
            }
            outcome = ((200..<300).contains(status), status, (200..<300).contains(status) ? nil : "HTTP \(status)")
        } catch {
            logger.info("webhook delivery attempt failed", metadata: ["delivery": .stringConvertible(item.id), "error": .string(String(String(describing: error).prefix(300)))])
            outcome = (false, nil, notDelivered)
        }
        try? await client.shutdown()
        return outcome
    }
}
