import SQLKit

extension AdminResource {
    /// The lists on a book's page: its categories, its video asset, its rights windows.
    static let bookRelated = [
        AdminRelated(title: "Categories", columns: [AdminColumn("name", "Name"), AdminColumn("slug", "Slug")],
                     query: { id in "SELECT c.id, c.name, c.slug FROM book_categories bc JOIN categories c ON c.id = bc.category_id WHERE bc.book_id = \(bind: id) ORDER BY c.display_order, c.name" },
                     rowLink: { _, categoryID in AdminPath.record("categories", categoryID) },
                     manageLink: { id in ("Edit categories", AdminPath.path("books", String(id), ResourcePath.edit)) }, emptyText: "No categories yet."),
        AdminRelated(title: "Video asset",
                     columns: [AdminColumn("status", "Status", format: .badge), AdminColumn("duration", "Duration", format: .duration),
                               AdminColumn("captions", "Captions", format: .boolean)],
                     query: { id in "SELECT v.id, v.status, \(BookSQL.readyDuration("v"))::text AS duration, CASE WHEN v.has_captions THEN 'Yes' ELSE 'No' END AS captions FROM video_assets v WHERE v.book_id = \(bind: id)" },
                     rowLink: { _, videoID in AdminPath.record("video_assets", videoID) }, emptyText: "No video asset."),
        AdminRelated(title: "Rights windows",
                     columns: [AdminColumn("starts_at", "Starts"), AdminColumn("ends_at", "Ends"), AdminColumn("state", "State", format: .badge)],
                     query: { id in """
                        SELECT r.id, to_char(r.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS starts_at,
                               COALESCE(to_char(r.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), 'open-ended') AS ends_at,
                               \(BookSQL.windowState("r")) AS state
                          FROM rights_windows r WHERE r.book_id = \(bind: id) ORDER BY r.starts_at, r.id
                        """ },
                     rowLink: { bookID, windowID in AdminPath.path("books", String(bookID), "rights_windows", String(windowID), ResourcePath.edit) },
                     manageLink: { id in ("Manage rights windows", AdminPath.path("books", String(id), "rights_windows")) },
                     emptyText: "No rights windows: the book cannot be watched."),
    ]
}
