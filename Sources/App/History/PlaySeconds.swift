import SQLKit

/// "Seconds watched" by one play, defined once for every statement that counts it (today's
/// minutes, a grant's reservation, statistics, retention's totals, the console's Most played):
/// a play that continues the book's previous play — that one not completed, the position not
/// moved back — counts the difference; any other play counts its position. The in-memory twin is
/// `Core/History/PlayLog` (`PlayLogDifferentialTests` holds the two equal).
enum PlaySeconds {
    /// The seconds of a play at `position`, given the book's previous play's position and
    /// completion (SQL expressions; NULL when there was none).
    static func watched(position: String, previousPosition: String, previousCompleted: String) -> SQLQueryString {
        """
        CASE WHEN \(unsafeRaw: previousPosition) IS NOT NULL AND NOT \(unsafeRaw: previousCompleted)
                  AND \(unsafeRaw: position) >= \(unsafeRaw: previousPosition)
             THEN \(unsafeRaw: position) - \(unsafeRaw: previousPosition) ELSE \(unsafeRaw: position) END
        """
    }

    /// The same over a window `window` of the book's plays in order (`lag` gives the previous one).
    static func watched(of play: String, over window: String) -> SQLQueryString {
        watched(position: "\(play).position_seconds", previousPosition: "lag(\(play).position_seconds) OVER \(window)",
                previousCompleted: "lag(\(play).completed) OVER \(window)")
    }

    /// For one play `p`: `LEFT JOIN LATERAL (…) prev ON true`, the book's previous play — its last
    /// kept play before `p`, else its last folded one (`play_fold_tails`, written by `PlayRetention`).
    static let previous: SQLQueryString = """
        LEFT JOIN LATERAL (
            SELECT position_seconds, completed FROM (
                (SELECT q.position_seconds, q.completed, 0 AS source FROM plays q
                  WHERE q.child_id = p.child_id AND q.book_id = p.book_id AND (q.played_at, q.id) < (p.played_at, p.id)
                  ORDER BY q.played_at DESC, q.id DESC LIMIT 1)
                UNION ALL
                SELECT t.position_seconds, t.completed, 1 FROM play_fold_tails t WHERE t.child_id = p.child_id AND t.book_id = p.book_id
            ) earlier ORDER BY source LIMIT 1) prev ON true
        """

    /// The seconds of play `p` joined to `previous`.
    static let ofPlay = watched(position: "p.position_seconds", previousPosition: "prev.position_seconds", previousCompleted: "prev.completed")
}
