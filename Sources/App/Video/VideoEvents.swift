import Foundation
import SQLKit

/// Applies the video pipeline's events to `video_assets`: each `webhook-id` once, the latest event
/// winning (by the pipeline's timestamp, then by stage), audited as the pipeline (through `AuditWriter`). The asset's
/// change reaches the catalog through the usual change log (its triggers).
enum VideoEvents {
    enum Outcome: String, Sendable { case applied, superseded, duplicate }

    /// Who the audit log names for the pipeline's changes.
    static let auditName = "video pipeline"

    /// Records and applies one event in one transaction. `nil`: no book has the event's id.
    /// A replay (`replaying`) applies a stored event again, whatever came after it.
    /// `replayedBy`: the admin who replayed a stored event (audited as them).
    static func apply(_ event: VideoEvent, webhookID: String, payload: Data, replaying: Bool = false,
                      replayedBy staff: StaffUser? = nil, on sql: any SQLDatabase) async throws -> Outcome? {
        guard try await sql.raw("SELECT id FROM books WHERE id = \(bind: event.bookID) FOR KEY SHARE").first() != nil else { return nil }
        if !replaying {
            let payloadText = String(decoding: payload, as: UTF8.self)
            let inserted = try await sql.raw("""
                INSERT INTO video_events (webhook_id, book_id, type, occurred_at, payload, outcome)
                VALUES (\(bind: webhookID), \(bind: event.bookID), \(bind: event.kind.rawValue), \(bind: event.occurredAt), \(bind: payloadText)::jsonb, 'applied')
                ON CONFLICT (webhook_id) DO NOTHING RETURNING id
                """).first()
            guard inserted != nil else { return .duplicate }
        }
        // The asset's row exists (a first event of any kind makes it) and is locked: events of one
        // asset are judged one after another.
        try await sql.raw("INSERT INTO video_assets (book_id) VALUES (\(bind: event.bookID)) ON CONFLICT (book_id) DO NOTHING").run()
        let current = try await sql.raw("""
            SELECT id, status, to_jsonb(v)::text AS snapshot,
                   last_event_at IS NULL OR last_event_at < \(bind: event.occurredAt) AS later, last_event_at = \(bind: event.occurredAt) AS same_instant
              FROM video_assets v WHERE book_id = \(bind: event.bookID) FOR UPDATE
            """).first(decoding: Current.self, keyDecodingStrategy: .convertFromSnakeCase)!
        let assetID = current.id
        if !replaying, !Self.wins(event, later: current.later, sameInstant: current.sameInstant ?? false, status: current.status) {
            try await sql.raw("UPDATE video_events SET outcome = 'superseded' WHERE webhook_id = \(bind: webhookID)").run()
            return .superseded
        }
        // A failure keeps what a ready video had; any other event describes the media anew.
        let media: SQLQueryString = event.kind == .failed ? "status = \(bind: event.kind.status)" : """
            status = \(bind: event.kind.status), duration_seconds = \(bind: event.durationSeconds),
            captions = \(bind: event.captions)::text[], has_captions = \(bind: !event.captions.isEmpty)
            """
        let after = try await sql.raw("""
            UPDATE video_assets v SET \(media), failure_reason = \(bind: event.failureReason),
                   pipeline_asset_id = COALESCE(\(bind: event.pipelineAssetID), v.pipeline_asset_id),
                   last_event_at = GREATEST(v.last_event_at, \(bind: event.occurredAt)), updated_at = now()
             WHERE v.id = \(bind: assetID) RETURNING to_jsonb(v)::text AS snapshot
            """).first(decoding: Written.self)!.snapshot
        let audited: AuditAction = replaying ? .pipelineReplay : .pipeline
        let writer = staff.map(AuditWriter.init(staff:)) ?? AuditWriter(system: auditName)
        try await writer.record(audited, detail: event.kind.rawValue, table: "video_assets", ids: [assetID],
                                before: [assetID: current.snapshot], after: [assetID: after], on: sql)
        return .applied
    }

    /// The asset's row, locked, as an event is judged against it: whether the event is later than
    /// the last applied one or at the same instant (null: none applied yet), and its snapshot.
    private struct Current: Decodable { let id: Int; let status: String; let snapshot: String; let later: Bool; let sameInstant: Bool? }
    /// The asset's row after the event.
    private struct Written: Decodable { let snapshot: String }

    /// Whether `event` comes after the last applied one (compared in SQL, where both instants are
    /// microseconds): later in time, or at the same instant a later stage (or the same) than `status`.
    static func wins(_ event: VideoEvent, later: Bool, sameInstant: Bool, status: String) -> Bool {
        if later { return true }
        guard sameInstant else { return false }
        let lastStage = VideoEvent.Kind.allCases.first { $0.status == status }?.stage ?? 0
        return event.kind.stage >= lastStage
    }
}
