import Foundation
import SQLKit

/// The statements of the console's replay of a video asset's last pipeline event.
enum VideoReplayQueries {
    /// The asset's book and its title.
    struct Asset: Decodable, Sendable { let bookId: Int; let title: String }

    static func asset(id: Int, on sql: any SQLDatabase) async throws -> Asset? {
        try await sql.raw("SELECT v.book_id, b.title FROM video_assets v JOIN books b ON b.id = v.book_id WHERE v.id = \(bind: id)")
            .first(decoding: Asset.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// A stored pipeline event, its payload as JSON text.
    struct Event: Decodable, Sendable { let webhookId: String; let type: String; let occurredAt: Date; let payload: String }

    /// The book's latest event by the pipeline's timestamp (then by arrival), or nil when none came.
    static func lastEvent(book: Int, on sql: any SQLDatabase) async throws -> Event? {
        try await sql.raw("""
            SELECT webhook_id, type, occurred_at, payload::text AS payload FROM video_events
             WHERE book_id = \(bind: book) ORDER BY occurred_at DESC, id DESC LIMIT 1
            """).first(decoding: Event.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    static func markReplayed(webhookID: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE video_events SET replayed_at = now() WHERE webhook_id = \(bind: webhookID)").run()
    }
}
