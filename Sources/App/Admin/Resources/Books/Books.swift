import Core
import SQLKit

/// Books: the catalog itself. Filters, batch actions and the lists on a book's page are declared
/// beside this file.
extension AdminResource {
    static let books = AdminResource(
        slug: "books", table: "books", singular: "Book", plural: "Books",
        displayName: "t.title",
        list: .init(
            joins: [AdminJoin(table: "publishers", alias: "p", on: "p.id = t.publisher_id"),
                    AdminJoin(table: "video_assets", alias: "v", on: "v.book_id = t.id")],
            columns: [
                AdminColumn("cover", "Cover", sql: BookCovers.thumbnailURL("t", size: .small), format: .image),
                AdminColumn("title", "Title", sortable: true, format: .link),
                AdminColumn("author", "Author", sortable: true),
                AdminColumn("status", "Status", format: .badge),
                AdminColumn("catalog", "Parents see it", sql: BookSQL.catalogState("t"), format: .badge),
                AdminColumn("publisher", "Publisher", sql: "p.name"),
                AdminColumn("ages", "Ages", sql: "t.age_min || '–' || t.age_max"),
                AdminColumn("duration", "Duration", sql: BookSQL.readyDuration("v"), format: .duration),
                AdminColumn("rights", "Rights now", sql: BookSQL.rightsAvailable("t"), format: .boolean),
                AdminColumn("id", "ID", sortable: true, format: .number),
                AdminColumn("updated_at", "Updated", sortable: true, format: .datetime),
            ],
            search: bookSearch,
            filters: bookFilters,
            defaultSort: "id",
            defaultDescending: true,
            batchActions: bookBatchActions,
            csvColumns: [
                AdminColumn("title", "Title"), AdminColumn("author", "Author"), AdminColumn("status", "Status"),
                AdminColumn("publisher", "Publisher", sql: "p.name"), AdminColumn("age_min", "Age min"), AdminColumn("age_max", "Age max"),
                AdminColumn("language", "Language"),
                AdminColumn("categories", "Categories", sql: "(SELECT string_agg(c.name, '; ' ORDER BY c.display_order, c.name) FROM book_categories bc JOIN categories c ON c.id = bc.category_id WHERE bc.book_id = t.id)"),
                AdminColumn("video_status", "Video status", sql: "v.status"),
                AdminColumn("duration_seconds", "Duration (s)", sql: BookSQL.readyDuration("v")),
                AdminColumn("rights", "Rights now", sql: BookSQL.rightsAvailable("t"), format: .boolean),
            ] + BookImportPlan.translationColumns,
            estimateAbove: 20_000,
            importURL: AdminPath.path("books", "import")
        ),
        form: .init(
            fields: [
                AdminField(name: "title", label: "Title", kind: .text(maxLength: 500), required: true),
                AdminField(name: "author", label: "Author", kind: .text(maxLength: 300)),
                AdminField(name: "description", label: "Description", kind: .textarea(maxLength: 10_000)),
                AdminField(name: "age_min", label: "Minimum age", kind: .integer(0...18), required: true, defaultValue: "0"),
                AdminField(name: "age_max", label: "Maximum age", kind: .integer(0...18), required: true, defaultValue: "8"),
                AdminField(name: "language", label: "Language", kind: .text(maxLength: 2), required: true,
                           help: "ISO 639-1 code, such as en or fr.", defaultValue: "en"),
                AdminField(name: "cover_image_url", label: "Cover image URL", kind: .text(maxLength: 2000), nullable: true),
                AdminField(name: "publisher_id", label: "Publisher", kind: .lookup(.publishers), nullable: true),
                AdminField(name: "status", label: "Status", kind: .choice(bookStatuses), required: true, defaultValue: "draft"),
                AdminField(name: "auto_publish", label: "Publish with its rights", kind: .checkbox,
                           help: "An active book goes live when its first rights window opens and leaves the catalog when its last one closes."),
                AdminField(name: "publish_at", label: "Go live at (UTC)", kind: .datetime, help: "Blank: as soon as it is active.", nullable: true),
                AdminField(name: "unpublish_at", label: "Leave the catalog at (UTC)", kind: .datetime, help: "Blank: no end.", nullable: true),
                AdminField(name: "category_ids", label: "Categories", kind: .multiLookup(.categories)),
            ],
            constraintMessages: [
                "books_age_range": FieldMessage(field: "age_max", message: "Ages run from 0 to 18, and the maximum cannot be below the minimum."),
                "books_language_format": FieldMessage(field: "language", message: "Use a two-letter ISO 639-1 code such as en."),
                "books_cover_image_url_format": FieldMessage(field: "cover_image_url", message: "Enter an http(s) URL."),
                "books_title_not_blank": FieldMessage(field: "title", message: "This field is required."),
                "books_review_approved": FieldMessage(field: "status", message: "This book needs another editor's approval before it can be active: submit it for review from its page. (With review on, a live book's content — its categories, publisher and cover too — changes only as a draft that is approved again.)"),
                "books_schedule_order": FieldMessage(field: "unpublish_at", message: "Leaving must come after going live."),
                "books_publisher_id_fkey": FieldMessage(field: "publisher_id", message: "That publisher does not exist any more."),
                "book_categories_category_id_fkey": FieldMessage(field: "category_ids", message: "A chosen category does not exist any more."),
            ],
            validate: validateBook,
            afterSave: { id, values, sql in try await BookCategories.set(values.ids("category_ids"), of: id, on: sql) },
            loadExtra: { id, sql in ["category_ids": try await BookCategories.ids(of: id, on: sql).map(String.init)] }
        ),
        detail: .init(
            columns: [
                AdminColumn("cover", "Cover", sql: BookCovers.thumbnailURL("t", size: .medium), format: .image),
                AdminColumn("title", "Title"), AdminColumn("author", "Author"), AdminColumn("description", "Description"),
                AdminColumn("status", "Status", format: .badge),
                AdminColumn("catalog", "Parents see it", sql: BookSQL.catalogState("t"), format: .badge),
                AdminColumn("schedule", "Schedule", sql: BookSQL.scheduleText("t")),
                AdminColumn("review", "Review", sql: "COALESCE(t.review_state, 'not submitted')", format: .badge),
                AdminColumn("ages", "Ages", sql: "t.age_min || '–' || t.age_max"),
                AdminColumn("language", "Language"), AdminColumn("publisher", "Publisher", sql: "p.name"),
                // The URL families see only while no cover is uploaded: beside an uploaded cover it says so.
                AdminColumn("cover_image_url", "Cover image URL",
                            sql: "CASE WHEN EXISTS (SELECT 1 FROM book_covers bcu WHERE bcu.book_id = t.id) AND t.cover_image_url IS NOT NULL THEN 'Not used: the uploaded cover replaces it' ELSE t.cover_image_url END"),
                AdminColumn("video_status", "Video", sql: "COALESCE(v.status, 'no video asset')", format: .badge),
                AdminColumn("duration", "Duration", sql: BookSQL.readyDuration("v"), format: .duration),
                AdminColumn("captions", "Captions", sql: "COALESCE(v.has_captions, false)", format: .boolean),
                AdminColumn("rights", "Rights available now", sql: BookSQL.rightsAvailable("t"), format: .boolean),
                AdminColumn("plays_30_days", "Plays, last 30 days",
                            sql: "(SELECT count(*) FROM plays pl WHERE pl.book_id = t.id AND pl.played_at > now() - interval '30 days')", format: .number),
                AdminColumn("libraries", "In children's libraries", sql: "(SELECT count(*) FROM library_entries le WHERE le.book_id = t.id)", format: .number),
                AdminColumn("created_at", "Created", format: .datetime), AdminColumn("updated_at", "Updated", format: .datetime),
            ],
            related: bookRelated,
            recordActions: [RecordAction(label: "Cover", path: BookCoverController.path), RecordAction(label: "Review", path: ReviewController.path),
                            RecordAction(label: "Translations", path: TranslationsController.path)],
            deleteWarning: { id, sql in
                let goes = try await sql.raw("""
                    SELECT (SELECT count(*) FROM library_entries WHERE book_id = \(bind: id)) AS libraries,
                           (SELECT count(*) FROM rights_windows WHERE book_id = \(bind: id)) AS windows
                    """).first(decoding: DeletedWith.self)!
                let libraries = goes.libraries, windows = goes.windows
                return "Its video asset, \(windows) rights \(windows == 1 ? "window" : "windows") and \(libraries) library \(libraries == 1 ? "entry" : "entries") go with it. Archiving keeps them."
            },
            snapshot: bookSnapshot
        )
    )

    /// What goes with a deleted book (its delete warning).
    private struct DeletedWith: Decodable { let libraries: Int; let windows: Int }

    /// `^https?://[^\\s]+$`, the database's check.
    static func isWebURL(_ text: String) -> Bool {
        let rest = text.hasPrefix("https://") ? text.dropFirst(8) : text.hasPrefix("http://") ? text.dropFirst(7) : nil
        guard let rest, !rest.isEmpty else { return false }
        return !rest.unicodeScalars.contains { $0.properties.isWhitespace }
    }

    static let bookStatuses = [Choice(value: "draft", label: "Draft"), Choice(value: "active", label: "Active"), Choice(value: "archived", label: "Archived")]

    /// A book for the audit log: its columns, its categories and its rights windows (not the
    /// search vector) — all that a restore from the audit log brings back.
    static let bookSnapshot = SQLFragment(trusted: """
        (to_jsonb(t) - 'search_vector' - 'stem_vector' - 'translated_titles' - 'content_version') || jsonb_build_object('category_ids',
            ARRAY(SELECT bc.category_id FROM book_categories bc WHERE bc.book_id = t.id ORDER BY bc.category_id),
            'rights_windows', COALESCE((SELECT jsonb_agg(to_jsonb(r) ORDER BY r.starts_at, r.id) FROM rights_windows r WHERE r.book_id = t.id), '[]'),
            'translations', \(TranslationQueries.bookSnapshot))
        """)

    private static let validateBook: @Sendable (FormValues) -> [String: String] = { values in
        var errors: [String: String] = [:]
        if let min = values.integer("age_min"), let max = values.integer("age_max"), min > max {
            errors["age_max"] = "The maximum age cannot be below the minimum age."
        }
        // By hand rather than by regular expression: a CSV import checks 100,000 books.
        if case .text(let language)? = values["language"], !(language.utf8.count == 2 && language.utf8.allSatisfy { $0 >= 97 && $0 <= 122 }) {
            errors["language"] = "Use a two-letter ISO 639-1 code such as en."
        }
        if case .text(let url)? = values["cover_image_url"], !Self.isWebURL(url) {
            errors["cover_image_url"] = "Enter an http(s) URL."
        }
        if let from = values.date("publish_at"), let until = values.date("unpublish_at"), until <= from {
            errors["unpublish_at"] = "Leaving must come after going live."
        }
        return errors
    }
}

extension Lookup {
    static let publishers = Lookup(table: "publishers", label: "name", order: "lower(name), id", picker: true)
    static let categories = Lookup(table: "categories", label: "name", order: "display_order, name, id")
}
