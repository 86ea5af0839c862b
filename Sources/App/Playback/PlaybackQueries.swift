import Foundation
import SQLKit

/// The statements of playback grants (the reservations are `PlaybackReservations`').
enum PlaybackQueries {
    /// A book of the child's library as a grant sees it in the family's country.
    struct Entry: Decodable {
        /// In the catalog of the country (else the book is unknown there: a 404).
        let visible: Bool
        /// When its availability stops (rights or schedule); nil: not available, or no end.
        let availableUntil: Date?
        let assetId: Int?
        /// The video's length in seconds, when known.
        let durationSeconds: Int?
        /// Blocked, available, the asset's status: `Playability`'s inputs.
        let playableBlocked: Bool
        let playableAvailable: Bool
        let playableAssetStatus: String?

        var playability: Playability.Row {
            .init(playableBlocked: playableBlocked, playableAvailable: playableAvailable, playableAssetStatus: playableAssetStatus)
        }
    }

    /// What `Playability` judges, for `library_entries le` joined to `books b` and its `video_assets v`:
    /// the child's controls block the book, it is live with rights available now in `country`, the
    /// asset's status. The one definition of a grant and of a library entry's `playable`.
    static func playabilityColumns(country: String?, at now: Date) -> SQLQueryString {
        """
        storytime_blocked_for_child(le.child_id, b.id) AS playable_blocked,
        \(BookSQL.live("b", at: now)) AND \(BookSQL.rightsAvailable("b", in: country, at: now)) AS playable_available,
        v.status AS playable_asset_status
        """
    }

    /// `book` in `child`'s library; nil when it is not there.
    static func entry(child: Int, book: Int, country: String, at now: Date, on sql: any SQLDatabase) async throws -> Entry? {
        try await sql.raw("""
            SELECT \(BookSQL.visible("b", country: "\(bind: country)::text")) AS visible,
                   LEAST(\(BookSQL.rightsEndsAt("b", in: country, at: now)), b.live_until) AS available_until,
                   v.id AS asset_id, v.duration_seconds, \(playabilityColumns(country: country, at: now))
              FROM library_entries le JOIN books b ON b.id = le.book_id LEFT JOIN video_assets v ON v.book_id = b.id
             WHERE le.child_id = \(bind: child) AND le.book_id = \(bind: book)
            """).first(decoding: Entry.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
