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
