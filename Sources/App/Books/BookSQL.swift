import Foundation
import SQLKit

/// The SQL fragments about a book that several features share, each in one place. `book`,
/// `video` and `window` name the aliases of the book, its video asset and a rights window.
/// What depends on the time takes `at now` — the app's clock (`req.now`), bound — so a test moves
/// the clock instead of waiting for the database's `now()`.
enum BookSQL {
    /// Rights available now, by the database's clock (the console's columns and filters, declared
    /// once; the parent API asks `rightsAvailable(_:in:at:)` at the app's clock). A scalar subquery with LIMIT 1, not EXISTS: for a page of rows the
    /// planner may turn an EXISTS in the select list into a hashed subplan that reads every rights
    /// window (13 ms at 100,000 books, more with every book); this form is one index probe per row.
    static func rightsAvailable(_ book: StaticString) -> SQLFragment {
        SQLFragment(trusted: """
            COALESCE((SELECT true FROM rights_windows r WHERE r.book_id = \(book).id AND r.starts_at <= now() \
            AND (r.ends_at IS NULL OR r.ends_at > now()) LIMIT 1), false)
            """)
    }

    /// In the parent catalog at `now` (the app's clock, bound): active, and inside its scheduled
    /// publishing (`live_from` ..< `live_until`, kept by triggers from explicit times or its rights windows).
    static func live(_ book: StaticString, at now: Date) -> SQLQueryString {
        let b = book.description
        return "(\(unsafeRaw: b).status = 'active' AND (\(unsafeRaw: b).live_from IS NULL OR \(unsafeRaw: b).live_from <= \(at: now)) AND (\(unsafeRaw: b).live_until IS NULL OR \(unsafeRaw: b).live_until > \(at: now)))"
    }

    /// Whether parents see the book now: "live", "scheduled" (active, going live later), "ended"
    /// (active, its schedule over) or "hidden" (not active).
    static func catalogState(_ book: StaticString) -> SQLFragment {
        SQLFragment(trusted: """
            CASE WHEN \(book).status <> 'active' THEN 'hidden' WHEN \(book).live_from > now() THEN 'scheduled' \
            WHEN \(book).live_until <= now() THEN 'ended' ELSE 'live' END
            """)
    }

    /// The schedule for people: "Live from … until …" (UTC), "With its rights: …", or "Not scheduled".
    static func scheduleText(_ book: StaticString) -> SQLFragment {
        SQLFragment(trusted: """
            (CASE WHEN \(book).auto_publish THEN 'With its rights: ' ELSE '' END) || \
            CASE WHEN \(book).live_from IS NULL AND \(book).live_until IS NULL THEN CASE WHEN \(book).auto_publish THEN 'no window, no end' ELSE 'Not scheduled' END \
            WHEN \(book).live_from = 'infinity' THEN 'no rights window yet' \
            ELSE COALESCE('live from ' || to_char(\(book).live_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), 'live now') \
            || COALESCE(' until ' || to_char(\(book).live_until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), '') || ' (UTC)' END
            """)
    }

    /// The next instant after `now` the book enters or leaves the catalog by its schedule (null: none ahead).
    static func nextLiveChange(_ book: StaticString, at now: Date) -> SQLQueryString {
        let b = book.description
        return "CASE WHEN \(unsafeRaw: b).live_from > \(at: now) THEN \(unsafeRaw: b).live_from WHEN \(unsafeRaw: b).live_until > \(at: now) THEN \(unsafeRaw: b).live_until END"
    }

    /// Rights available at `now` in `country` (nil: in any territory), as `rightsAvailable(_:)`.
    static func rightsAvailable(_ book: StaticString, in country: String?, at now: Date) -> SQLQueryString {
        rightsAvailable(book, country: "\(bind: country)::text", at: now)
    }

    /// Rights available at `now` in the country `country` computes (SQL of a text value).
    static func rightsAvailable(_ book: StaticString, country: SQLQueryString, at now: Date) -> SQLQueryString {
        """
        COALESCE((SELECT true FROM rights_windows r WHERE r.book_id = \(unsafeRaw: book.description).id AND r.starts_at <= \(at: now) \
        AND (r.ends_at IS NULL OR r.ends_at > \(at: now)) AND storytime_window_applies(r.territories, r.exclude_territories, \(country)) LIMIT 1), false)
        """
    }

    /// In the catalog of `country` (SQL of a text value): not a book whose rights windows all apply
    /// elsewhere. Such a book is unknown there — a 404 on every route, never a hint that it exists.
    /// (The first probe is of a partial index that holds only windows limited to territories:
    /// empty unless rights differ by country.)
    static func visible(_ book: StaticString, country: SQLQueryString) -> SQLQueryString {
        let b = book.description
        return """
            NOT (EXISTS (SELECT 1 FROM rights_windows r WHERE r.book_id = \(unsafeRaw: b).id AND (r.territories <> '{}' OR r.exclude_territories <> '{}'))
                 AND NOT EXISTS (SELECT 1 FROM rights_windows r WHERE r.book_id = \(unsafeRaw: b).id
                                    AND storytime_window_applies(r.territories, r.exclude_territories, \(country))))
            """
    }

    /// When the book's rights stop being available in `country`, following back-to-back windows
    /// (null: not available at `now`, or no end).
    static func rightsEndsAt(_ book: StaticString, in country: String?, at now: Date) -> SQLQueryString {
        "storytime_rights_ends_at(\(unsafeRaw: book.description).id, \(at: now), \(bind: country)::text)"
    }

    /// The next instant after `now` at which the book's rights start or end (null: none ahead), so an
    /// answer showing its availability knows when it stops being right.
    static func nextRightsChange(_ book: StaticString, at now: Date) -> SQLQueryString {
        """
        (SELECT min(x.t) FROM rights_windows r CROSS JOIN LATERAL (VALUES (r.starts_at), (r.ends_at)) x(t) \
        WHERE r.book_id = \(unsafeRaw: book.description).id AND x.t > \(at: now))
        """
    }

    /// A video's duration, shown only once the video is ready.
    static func readyDuration(_ video: StaticString) -> SQLFragment {
        SQLFragment(trusted: "CASE WHEN \(video).status = 'ready' THEN \(video).duration_seconds END")
    }

    /// A rights window's state now: upcoming, expired or active.
    static func windowState(_ window: StaticString) -> SQLFragment {
        SQLFragment(trusted: "CASE WHEN \(window).starts_at > now() THEN 'upcoming' WHEN \(window).ends_at IS NOT NULL AND \(window).ends_at <= now() THEN 'expired' ELSE 'active' END")
    }

    /// Where a rights window applies, for people: "Worldwide", "FR, BE", "Worldwide except US".
    static func windowTerritories(_ window: StaticString) -> SQLFragment {
        SQLFragment(trusted: """
            CASE WHEN \(window).territories = '{}' THEN 'Worldwide' ELSE array_to_string(\(window).territories, ', ') END \
            || CASE WHEN \(window).exclude_territories = '{}' THEN '' ELSE ' except ' || array_to_string(\(window).exclude_territories, ', ') END
            """)
    }

    /// How far through a book a play got: 1 when it was completed, position ÷ duration (at most 1)
    /// when the duration is known, null otherwise. `v` is the book's video asset.
    static func progress(position: StaticString, completed: StaticString) -> SQLFragment {
        SQLFragment(trusted: """
            CASE WHEN \(completed) THEN 1.0::float8
                 WHEN v.status = 'ready' AND v.duration_seconds > 0 THEN LEAST(\(position)::float8 / v.duration_seconds, 1.0)
            END
            """)
    }
}

extension BookSQL {
    /// How many live books a list has, and when one of its scheduled books next enters or leaves the catalog.
    struct LiveCount: Decodable { let n: Int; let nextLiveChange: Date? }

    /// The earliest `next_rights_change` column of `rows` (see `BookSQL.nextRightsChange`).
    static func nextRightsChange(of rows: [any SQLRow]) throws -> Date? {
        try rows.compactMap { try $0.decode(model: NextRightsChange.self, keyDecodingStrategy: .convertFromSnakeCase).nextRightsChange }.min()
    }

    /// The `next_rights_change` column of a row.
    private struct NextRightsChange: Decodable { let nextRightsChange: Date? }
}

extension SQLQueryString {
    /// An instant of the app's clock, bound as a `timestamptz`.
    mutating func appendInterpolation(at instant: Date) {
        appendInterpolation(bind: instant)
        appendLiteral("::timestamptz")
    }
}
