import Foundation
import SQLKit

/// The statements of playback grants (the reservations are `PlaybackReservations`').
enum PlaybackQueries {
    /// A book of the child's library as a grant sees it in the family's country.
    struct Entry: Decodable {
        /// In the catalog of the country (else the book is unknown there: a 404).
        let visible: Bool
        /// Live and with rights available now.
        let available: Bool
        /// When that stops (rights or schedule); nil: not available, or no end.
        let availableUntil: Date?
        let assetId: Int?
        let assetStatus: String?
        /// The video's length in seconds, when known.
        let durationSeconds: Int?
    }

    /// `book` in `child`'s library; nil when it is not there.
    static func entry(child: Int, book: Int, country: String, on sql: any SQLDatabase) async throws -> Entry? {
        try await sql.raw("""
            SELECT \(BookSQL.visible("b", country: "\(bind: country)::text")) AS visible,
                   \(BookSQL.live("b")) AND \(BookSQL.rightsAvailable("b", in: country)) AS available,
                   LEAST(\(BookSQL.rightsEndsAt("b", in: country)), b.live_until) AS available_until,
                   v.id AS asset_id, v.status AS asset_status, v.duration_seconds
              FROM library_entries le JOIN books b ON b.id = le.book_id LEFT JOIN video_assets v ON v.book_id = b.id
             WHERE le.child_id = \(bind: child) AND le.book_id = \(bind: book)
            """).first(decoding: Entry.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
