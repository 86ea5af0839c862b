import Foundation
import SQLKit

/// The delivery log's statements: the latest deliveries, and sending one again.
enum WebhookDeliveriesQueries {
    struct Row: Decodable {
        let id: Int
        let endpointId: Int
        let url: String
        let eventType: String
        let messageId: String
        let createdAt: Date
        let attempts: Int
        let nextAttemptAt: Date
        let deliveredAt: Date?
        let failedAt: Date?
        let lastStatus: Int?
        let lastError: String?
        let payload: String
    }

    /// The latest 200 deliveries, of every endpoint (`endpoint` nil) or one.
    static func log(endpoint: Int?, on sql: any SQLDatabase) async throws -> [Row] {
        try await sql.raw("""
            SELECT d.id, d.endpoint_id, e.url, d.event_type, d.message_id, d.created_at, d.attempts, d.next_attempt_at,
                   d.delivered_at, d.failed_at, d.last_status, d.last_error, d.payload::text AS payload
              FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
             WHERE \(bind: endpoint)::bigint IS NULL OR d.endpoint_id = \(bind: endpoint)
             ORDER BY d.id DESC LIMIT 200
            """).all(decoding: Row.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// Makes the delivery due again now; false when there is no such delivery.
    static func redeliver(_ id: Int, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            UPDATE webhook_deliveries SET delivered_at = NULL, failed_at = NULL, next_attempt_at = now(), locked_until = NULL
             WHERE id = \(bind: id) RETURNING id
            """).first() != nil
    }
}
