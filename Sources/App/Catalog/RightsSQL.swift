import Foundation
import SQLKit

/// "Rights available now" for the book aliased `book`, in one place.
///
/// Written as a scalar subquery with LIMIT 1, not EXISTS: for a page of rows the planner may turn
/// an EXISTS in the select list into a hashed subplan that reads every rights window (13 ms at
/// 100,000 books, more with every book); this form is one index probe per row.
func rightsAvailableSQL(_ book: String) -> String {
    """
    COALESCE((SELECT true FROM rights_windows r WHERE r.book_id = \(book).id AND r.starts_at <= now() \
    AND (r.ends_at IS NULL OR r.ends_at > now()) LIMIT 1), false)
    """
}

/// The next instant after now at which the rights of the book aliased `book` start or end (null:
/// none ahead), so an answer showing its availability knows when it stops being right.
func nextRightsChangeSQL(_ book: String) -> String {
    """
    (SELECT min(x.t) FROM rights_windows r CROSS JOIN LATERAL (VALUES (r.starts_at), (r.ends_at)) x(t) \
    WHERE r.book_id = \(book).id AND x.t > now())
    """
}

/// The earliest `next_rights_change` column of `rows` (see `nextRightsChangeSQL`).
func nextRightsChange(of rows: [any SQLRow]) throws -> Date? {
    try rows.compactMap { try $0.decode(column: "next_rights_change", as: Date?.self) }.min()
}
