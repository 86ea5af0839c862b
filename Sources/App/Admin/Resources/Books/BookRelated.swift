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
                     columns: [AdminColumn("starts_at", "Starts (UTC)"), AdminColumn("ends_at", "Ends (UTC)"), AdminColumn("where", "Where"),
                               AdminColumn("state", "State", format: .badge)],
                     query: { id in """
                        SELECT r.id, to_char(r.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS starts_at,
                               COALESCE(to_char(r.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), 'open-ended') AS ends_at,
                               \(BookSQL.windowTerritories("r")) AS "where", \(BookSQL.windowState("r")) AS state
                          FROM rights_windows r WHERE r.book_id = \(bind: id) ORDER BY r.starts_at, r.id
                        """ },
                     rowLink: { bookID, windowID in AdminPath.path("books", String(bookID), "rights_windows", String(windowID), ResourcePath.edit) },
                     manageLink: { id in ("Manage rights windows", AdminPath.path("books", String(id), "rights_windows")) },
                     emptyText: "No rights windows: the book cannot be watched."),
        AdminRelated(title: "Rights warnings", columns: [AdminColumn("warning", "Warning")],
                     query: { id in rightsWarnings(id) },
                     rowLink: { bookID, windowID in windowID == 0 ? nil : AdminPath.path("books", String(bookID), "rights_windows", String(windowID), ResourcePath.edit) },
                     emptyText: "None: the windows follow one another without overlaps or gaps."),
    ]

    /// What staff should look at in a book's rights (in start order among the windows with the same
    /// territories): a window starting before an earlier one has ended (overlap), or after every
    /// earlier one has ended (a gap); an active book that no window covers now; rights running out within 30 days (through
    /// windows that continue one another). Rows name the window (`id`), or 0 for the book.
    static func rightsWarnings(_ id: Int) -> SQLQueryString {
        """
        WITH w AS (
            SELECT r.id, r.starts_at, \(BookSQL.windowTerritories("r")) AS territory,
                   max(COALESCE(r.ends_at, 'infinity')) OVER (PARTITION BY r.territories, r.exclude_territories ORDER BY r.starts_at, r.id
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
              FROM rights_windows r WHERE r.book_id = \(bind: id))
        SELECT id, warning FROM (
            SELECT w.id, 1 AS kind, w.starts_at, w.territory || ': overlaps an earlier window: starts ' || to_char(w.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')
                   || ', before ' || CASE WHEN w.reach = 'infinity' THEN 'an open-ended window' ELSE 'one ending ' || to_char(w.reach AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') END AS warning
              FROM w WHERE w.reach > w.starts_at
            UNION ALL
            SELECT w.id, 2, w.starts_at, w.territory || ': gap before this window: no rights from ' || to_char(w.reach AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')
                   || ' to ' || to_char(w.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')
              FROM w WHERE w.reach < w.starts_at
            UNION ALL
            SELECT 0, 0, NULL, 'Active, but no rights window covers now: parents cannot watch it'
              FROM books b WHERE b.id = \(bind: id) AND b.status = 'active' AND NOT \(BookSQL.rightsAvailable("b"))
            UNION ALL
            SELECT 0, 0, NULL, 'Rights run out within 30 days: ' || to_char(e.ends AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC'
              FROM (SELECT storytime_rights_ends_at(\(bind: id), now()) AS ends) e WHERE e.ends <= now() + interval '30 days'
        ) x ORDER BY kind, starts_at, id
        """
    }
}
