import SQLKit

extension AdminResource {
    /// One video per book, as the video pipeline reports it.
    static let videoAssets = AdminResource(
        slug: "video_assets", table: "video_assets", singular: "Video asset", plural: "Video assets",
        displayName: "(SELECT b.title FROM books b WHERE b.id = t.book_id)",
        list: .init(
            // An inner join (every video has its book): a page sorted by title walks the books' title
            // index and stops after its rows. Queries that need no book leave the join out.
            joins: [AdminJoin(left: false, table: "books", alias: "b", on: "b.id = t.book_id")],
            columns: [
                AdminColumn("book", "Book", sql: "b.title", sortable: true, format: .link),
                AdminColumn("status", "Status", sortable: true, format: .badge),
                AdminColumn("duration", "Duration", sql: BookSQL.readyDuration("t"), format: .duration),
                AdminColumn("has_captions", "Captions", format: .boolean),
                AdminColumn("updated_at", "Updated", sortable: true, format: .datetime),
            ],
            search: AdminSearch(label: "Search book title") { q in TextMatch.contains("b.title", q) },
            filters: [
                AdminFilter(name: "status", label: "Status", kind: .choices(videoStatuses)) { value in
                    videoStatuses.contains { $0.value == value } ? "t.status = \(bind: value)" : nil
                },
            ],
            defaultSort: "updated_at",
            defaultDescending: true
        ),
        form: .init(
            fields: [
                AdminField(name: "book_id", label: "Book ID", kind: .integer(1...Int(Int32.max)), required: true,
                           help: "The book this video belongs to (one video per book)."),
                AdminField(name: "status", label: "Status", kind: .choice(videoStatuses), required: true, defaultValue: "pending"),
                AdminField(name: "duration_seconds", label: "Duration (seconds)", kind: .integer(0...86_400), nullable: true),
                AdminField(name: "has_captions", label: "Has captions", kind: .checkbox),
            ],
            constraintMessages: [
                "video_assets_book_key": FieldMessage(field: "book_id", message: "That book already has a video asset."),
                "video_assets_book_id_fkey": FieldMessage(field: "book_id", message: "No book has this ID."),
                "video_assets_duration_check": FieldMessage(field: "duration_seconds", message: "A duration cannot be negative."),
            ],
            validate: { values in
                if case .text("ready")? = values["status"], values.integer("duration_seconds") == nil {
                    return ["duration_seconds": "A ready video needs its duration."]
                }
                return [:]
            }
        ),
        detail: .init(
            columns: [
                AdminColumn("book", "Book", sql: "b.title"), AdminColumn("book_id", "Book ID"),
                AdminColumn("status", "Status", format: .badge),
                AdminColumn("duration", "Duration", sql: BookSQL.readyDuration("t"), format: .duration),
                AdminColumn("duration_seconds", "Duration in seconds (stored)"),
                AdminColumn("has_captions", "Captions", format: .boolean),
                AdminColumn("caption_languages", "Caption tracks", sql: "array_to_string(t.captions, ', ')"),
                AdminColumn("failure_reason", "Failure reason"), AdminColumn("pipeline_asset_id", "Pipeline asset"),
                AdminColumn("last_event_at", "Last pipeline event", format: .datetime),
                AdminColumn("updated_at", "Updated", format: .datetime),
            ],
            related: [
                AdminRelated(title: "Pipeline events",
                             columns: [AdminColumn("type", "Event"), AdminColumn("occurred_at", "Happened", format: .datetime),
                                       AdminColumn("outcome", "Outcome", format: .badge), AdminColumn("received_at", "Received", format: .datetime),
                                       AdminColumn("replayed_at", "Replayed", format: .datetime), AdminColumn("webhook_id", "Webhook id")],
                             query: { id in
                                 """
                                 SELECT e.id, e.type, e.occurred_at, e.outcome, e.received_at, e.replayed_at, e.webhook_id
                                   FROM video_events e JOIN video_assets v ON v.book_id = e.book_id
                                  WHERE v.id = \(bind: id) ORDER BY e.received_at DESC, e.id DESC LIMIT 50
                                 """
                             },
                             emptyText: "The pipeline has sent no events for this video."),
            ],
            recordActions: [RecordAction(label: "Replay last event", path: VideoReplayController.path, adminOnly: true)]
        )
    )
}
