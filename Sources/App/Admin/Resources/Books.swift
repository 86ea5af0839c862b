import Core
import SQLKit

extension AdminResource {
    static let bookStatuses = [Choice(value: "draft", label: "Draft"), Choice(value: "active", label: "Active"), Choice(value: "archived", label: "Archived")]
    static let videoStatuses = [Choice(value: "pending", label: "Pending"), Choice(value: "processing", label: "Processing"),
                                Choice(value: "ready", label: "Ready"), Choice(value: "failed", label: "Failed")]
    static let publisherLookup = "SELECT id::text AS value, name AS label FROM publishers ORDER BY lower(name), id"
    static let categoryLookup = "SELECT id::text AS value, name AS label FROM categories ORDER BY display_order, name, id"
    static let rightsNow = rightsAvailableSQL("t")

    static let books = AdminResource(
        slug: "books", table: "books", singular: "Book", plural: "Books",
        displayName: "t.title",
        joins: "LEFT JOIN publishers p ON p.id = t.publisher_id LEFT JOIN video_assets v ON v.book_id = t.id",
        columns: [
            AdminColumn("title", "Title", sortable: true, format: .link),
            AdminColumn("author", "Author", sortable: true),
            AdminColumn("status", "Status", format: .badge),
            AdminColumn("publisher", "Publisher", sql: "p.name"),
            AdminColumn("ages", "Ages", sql: "t.age_min || '–' || t.age_max"),
            AdminColumn("duration", "Duration", sql: "CASE WHEN v.status = 'ready' THEN v.duration_seconds END", format: .duration),
            AdminColumn("rights", "Rights now", sql: rightsNow, format: .boolean),
            AdminColumn("id", "ID", sortable: true, format: .number),
            AdminColumn("updated_at", "Updated", sortable: true, format: .datetime),
        ],
        detail: [
            AdminColumn("title", "Title"), AdminColumn("author", "Author"), AdminColumn("description", "Description"),
            AdminColumn("status", "Status", format: .badge),
            AdminColumn("ages", "Ages", sql: "t.age_min || '–' || t.age_max"),
            AdminColumn("language", "Language"), AdminColumn("publisher", "Publisher", sql: "p.name"),
            AdminColumn("cover_image_url", "Cover image URL"),
            AdminColumn("video_status", "Video", sql: "COALESCE(v.status, 'no video asset')", format: .badge),
            AdminColumn("duration", "Duration", sql: "CASE WHEN v.status = 'ready' THEN v.duration_seconds END", format: .duration),
            AdminColumn("captions", "Captions", sql: "COALESCE(v.has_captions, false)", format: .boolean),
            AdminColumn("rights", "Rights available now", sql: rightsNow, format: .boolean),
            AdminColumn("plays_30_days", "Plays, last 30 days",
                        sql: "(SELECT count(*) FROM plays pl WHERE pl.book_id = t.id AND pl.played_at > now() - interval '30 days')", format: .number),
            AdminColumn("libraries", "In children's libraries", sql: "(SELECT count(*) FROM library_entries le WHERE le.book_id = t.id)", format: .number),
            AdminColumn("created_at", "Created", format: .datetime), AdminColumn("updated_at", "Updated", format: .datetime),
        ],
        search: AdminSearch(label: "Search title or author") { q in
            let words = SearchText.words(q)
            guard !words.isEmpty else { return nil }
            return "t.search_vector @@ \(bind: SearchText.tsquery(words.map { [$0] }, weights: "AB"))::tsquery"
        },
        filters: [
            AdminFilter(name: "status", label: "Status", kind: .choices(bookStatuses)) { value in
                bookStatuses.contains { $0.value == value } ? "t.status = \(bind: value)" : nil
            },
            AdminFilter(name: "publisher", label: "Publisher", kind: .lookup(publisherLookup)) { value in
                Int(value).map { "t.publisher_id = \(bind: $0)" }
            },
            AdminFilter(name: "category", label: "Category", kind: .lookup(categoryLookup)) { value in
                Int(value).map { "EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = t.id AND bc.category_id = \(bind: $0))" }
            },
            AdminFilter(name: "age", label: "Suitable for age", kind: .integer(0...18)) { value in
                Int(value).flatMap { (0...18).contains($0) ? "t.age_min <= \(bind: $0) AND t.age_max >= \(bind: $0)" : nil }
            },
            AdminFilter(name: "rights", label: "Rights now", kind: .choices([Choice(value: "available", label: "Available"),
                                                                            Choice(value: "unavailable", label: "Not available")])) { value in
                switch value {
                case "available": return SQLQueryString(rightsNow)
                case "unavailable": return SQLQueryString("NOT " + rightsNow)
                default: return nil
                }
            },
            AdminFilter(name: "video", label: "Video", kind: .choices(videoStatuses + [Choice(value: "none", label: "No video asset")])) { value in
                if value == "none" { return "NOT EXISTS (SELECT 1 FROM video_assets va WHERE va.book_id = t.id)" }
                return videoStatuses.contains { $0.value == value }
                    ? "EXISTS (SELECT 1 FROM video_assets va WHERE va.book_id = t.id AND va.status = \(bind: value))" : nil
            },
        ],
        fields: [
            AdminField(name: "title", label: "Title", kind: .text(maxLength: 500), required: true),
            AdminField(name: "author", label: "Author", kind: .text(maxLength: 300)),
            AdminField(name: "description", label: "Description", kind: .textarea(maxLength: 10_000)),
            AdminField(name: "age_min", label: "Minimum age", kind: .integer(0...18), required: true, defaultValue: "0"),
            AdminField(name: "age_max", label: "Maximum age", kind: .integer(0...18), required: true, defaultValue: "8"),
            AdminField(name: "language", label: "Language", kind: .text(maxLength: 2), required: true,
                       help: "ISO 639-1 code, such as en or fr.", defaultValue: "en"),
            AdminField(name: "cover_image_url", label: "Cover image URL", kind: .text(maxLength: 2000), nullable: true),
            AdminField(name: "publisher_id", label: "Publisher", kind: .lookup(publisherLookup), nullable: true),
            AdminField(name: "status", label: "Status", kind: .choice(bookStatuses), required: true, defaultValue: "draft"),
            AdminField(name: "category_ids", label: "Categories", kind: .multiLookup(categoryLookup)),
        ],
        defaultSort: "id", defaultDescending: true,
        batchActions: [
            AdminBatchAction(name: "add_category", label: "Add to category", target: .lookup(categoryLookup), targetLabel: "Category") { ids, target, sql, audit in
                guard let category = target.flatMap(Int.init) else { return "Choose a category." }
                let before = try await AuditWriter.snapshots(bookSnapshot, table: "books", ids: ids, on: sql)
                let added = try await sql.raw("""
                    INSERT INTO book_categories (book_id, category_id)
                    SELECT b.id, \(bind: category) FROM books b WHERE b.id = ANY(\(bind: ids)::bigint[])
                    ON CONFLICT (book_id, category_id) DO NOTHING RETURNING book_id
                    """).all().map { try $0.decode(column: "book_id", as: Int.self) }
                let after = try await AuditWriter.snapshots(bookSnapshot, table: "books", ids: added, on: sql)
                try await audit.record("batch: add to category", table: "books", ids: added, before: before, after: after, on: sql)
                let name = try await categoryName(category, sql)
                return "\(added.count) \(added.count == 1 ? "book" : "books") added to “\(name)”" + (added.count < ids.count ? " (\(ids.count - added.count) already had it)." : ".")
            },
            AdminBatchAction(name: "remove_category", label: "Remove from category", target: .lookup(categoryLookup), targetLabel: "Category") { ids, target, sql, audit in
                guard let category = target.flatMap(Int.init) else { return "Choose a category." }
                let before = try await AuditWriter.snapshots(bookSnapshot, table: "books", ids: ids, on: sql)
                let removed = try await sql.raw("""
                    DELETE FROM book_categories WHERE category_id = \(bind: category) AND book_id = ANY(\(bind: ids)::bigint[]) RETURNING book_id
                    """).all().map { try $0.decode(column: "book_id", as: Int.self) }
                let after = try await AuditWriter.snapshots(bookSnapshot, table: "books", ids: removed, on: sql)
                try await audit.record("batch: remove from category", table: "books", ids: removed, before: before, after: after, on: sql)
                let name = try await categoryName(category, sql)
                return "\(removed.count) \(removed.count == 1 ? "book" : "books") removed from “\(name)”."
            },
            AdminBatchAction(name: "set_status", label: "Change status", target: .choices(bookStatuses), targetLabel: "Status") { ids, target, sql, audit in
                guard let status = target, bookStatuses.contains(where: { $0.value == status }) else { return "Choose a status." }
                let before = try await AuditWriter.snapshots(bookSnapshot, table: "books", ids: ids, on: sql)
                let changed = try await sql.raw("""
                    UPDATE books SET status = \(bind: status) WHERE id = ANY(\(bind: ids)::bigint[]) AND status <> \(bind: status) RETURNING id
                    """).all().map { try $0.decode(column: "id", as: Int.self) }
                let after = try await AuditWriter.snapshots(bookSnapshot, table: "books", ids: changed, on: sql)
                try await audit.record("batch: change status", table: "books", ids: changed, before: before, after: after, on: sql)
                return "\(changed.count) \(changed.count == 1 ? "book" : "books") changed to \(status)."
            },
        ],
        csvColumns: [
            AdminColumn("title", "Title"), AdminColumn("author", "Author"), AdminColumn("status", "Status"),
            AdminColumn("publisher", "Publisher", sql: "p.name"), AdminColumn("age_min", "Age min"), AdminColumn("age_max", "Age max"),
            AdminColumn("language", "Language"),
            AdminColumn("categories", "Categories", sql: "(SELECT string_agg(c.name, '; ' ORDER BY c.display_order, c.name) FROM book_categories bc JOIN categories c ON c.id = bc.category_id WHERE bc.book_id = t.id)"),
            AdminColumn("video_status", "Video status", sql: "v.status"),
            AdminColumn("duration_seconds", "Duration (s)", sql: "CASE WHEN v.status = 'ready' THEN v.duration_seconds END"),
            AdminColumn("rights", "Rights now", sql: rightsNow, format: .boolean),
        ],
        constraintMessages: [
            "books_age_range": FieldMessage(field: "age_max", message: "Ages run from 0 to 18, and the maximum cannot be below the minimum."),
            "books_language_format": FieldMessage(field: "language", message: "Use a two-letter ISO 639-1 code such as en."),
            "books_cover_image_url_format": FieldMessage(field: "cover_image_url", message: "Enter an http(s) URL."),
            "books_title_not_blank": FieldMessage(field: "title", message: "This field is required."),
            "books_publisher_id_fkey": FieldMessage(field: "publisher_id", message: "That publisher does not exist any more."),
            "book_categories_category_id_fkey": FieldMessage(field: "category_ids", message: "A chosen category does not exist any more."),
        ],
        validate: { values in
            var errors: [String: String] = [:]
            if let min = values.integer("age_min"), let max = values.integer("age_max"), min > max {
                errors["age_max"] = "The maximum age cannot be below the minimum age."
            }
            if case .text(let language)? = values["language"], language.range(of: "^[a-z]{2}$", options: .regularExpression) == nil {
                errors["language"] = "Use a two-letter ISO 639-1 code such as en."
            }
            if case .text(let url)? = values["cover_image_url"], url.range(of: "^https?://[^\\s]+$", options: .regularExpression) == nil {
                errors["cover_image_url"] = "Enter an http(s) URL."
            }
            return errors
        },
        afterSave: { id, values, sql in
            let ids = values.ids("category_ids")
            try await sql.raw("DELETE FROM book_categories WHERE book_id = \(bind: id) AND NOT (category_id = ANY(\(bind: ids)::bigint[]))").run()
            try await sql.raw("""
                INSERT INTO book_categories (book_id, category_id) SELECT \(bind: id), unnest(\(bind: ids)::bigint[])
                ON CONFLICT (book_id, category_id) DO NOTHING
                """).run()
        },
        loadExtra: { id, sql in
            let ids = try await sql.raw("SELECT category_id::text AS id FROM book_categories WHERE book_id = \(bind: id)").all()
                .map { try $0.decode(column: "id", as: String.self) }
            return ["category_ids": ids]
        },
        deleteWarning: { id, sql in
            let row = try await sql.raw("""
                SELECT (SELECT count(*) FROM library_entries WHERE book_id = \(bind: id)) AS libraries,
                       (SELECT count(*) FROM rights_windows WHERE book_id = \(bind: id)) AS windows
                """).first()!
            let libraries = try row.decode(column: "libraries", as: Int.self), windows = try row.decode(column: "windows", as: Int.self)
            return "Its video asset, \(windows) rights \(windows == 1 ? "window" : "windows") and \(libraries) library \(libraries == 1 ? "entry" : "entries") go with it. Archiving keeps them."
        },
        related: [
            AdminRelated(title: "Categories", columns: [AdminColumn("name", "Name"), AdminColumn("slug", "Slug")],
                         query: { id in "SELECT c.id, c.name, c.slug FROM book_categories bc JOIN categories c ON c.id = bc.category_id WHERE bc.book_id = \(bind: id) ORDER BY c.display_order, c.name" },
                         rowLink: { _, categoryID in "/admin/categories/\(categoryID)" },
                         manageLink: { id in ("Edit categories", "/admin/books/\(id)/edit") }, emptyText: "No categories yet."),
            AdminRelated(title: "Video asset",
                         columns: [AdminColumn("status", "Status", format: .badge), AdminColumn("duration", "Duration", format: .duration),
                                   AdminColumn("captions", "Captions", format: .boolean)],
                         query: { id in "SELECT v.id, v.status, CASE WHEN v.status = 'ready' THEN v.duration_seconds END::text AS duration, CASE WHEN v.has_captions THEN 'Yes' ELSE 'No' END AS captions FROM video_assets v WHERE v.book_id = \(bind: id)" },
                         rowLink: { _, videoID in "/admin/video_assets/\(videoID)" }, emptyText: "No video asset."),
            AdminRelated(title: "Rights windows",
                         columns: [AdminColumn("starts_at", "Starts"), AdminColumn("ends_at", "Ends"), AdminColumn("state", "State", format: .badge)],
                         query: { id in """
                            SELECT r.id, to_char(r.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS starts_at,
                                   COALESCE(to_char(r.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), 'open-ended') AS ends_at,
                                   CASE WHEN r.starts_at > now() THEN 'upcoming' WHEN r.ends_at IS NOT NULL AND r.ends_at <= now() THEN 'expired' ELSE 'active' END AS state
                              FROM rights_windows r WHERE r.book_id = \(bind: id) ORDER BY r.starts_at, r.id
                            """ },
                         rowLink: { bookID, windowID in "/admin/books/\(bookID)/rights_windows/\(windowID)/edit" },
                         manageLink: { id in ("Manage rights windows", "/admin/books/\(id)/rights_windows") }, emptyText: "No rights windows: the book cannot be watched."),
        ],
        snapshot: bookSnapshot,
        estimateAbove: 20_000
    )

    /// A book for the audit log: its columns and its categories (not the search vector).
    static let bookSnapshot = """
        (to_jsonb(t) - 'search_vector') || jsonb_build_object('category_ids',
            ARRAY(SELECT bc.category_id FROM book_categories bc WHERE bc.book_id = t.id ORDER BY bc.category_id))
        """
}

private func categoryName(_ id: Int, _ sql: any SQLDatabase) async throws -> String {
    try await sql.raw("SELECT name FROM categories WHERE id = \(bind: id)").first()?.decode(column: "name", as: String.self) ?? "category \(id)"
}
