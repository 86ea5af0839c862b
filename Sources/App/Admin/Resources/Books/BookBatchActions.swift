import SQLKit

extension AdminResource {
    /// Select rows (or all matching), pick an action: each runs through `BatchChange`, which
    /// snapshots and audits what really changed.
    static let bookBatchActions: [AdminBatchAction] = [
        AdminBatchAction(name: "add_category", label: "Add to category", target: .lookup(.categories), targetLabel: "Category") { ids, target, batch in
            guard let category = target.flatMap(Int.init) else { return "Choose a category." }
            let added = try await batch.audited("add to category", ids) { sql in
                try await sql.raw("""
                    INSERT INTO book_categories (book_id, category_id)
                    SELECT b.id, \(bind: category) FROM books b WHERE b.id = ANY(\(bind: ids)::bigint[])
                    ON CONFLICT (book_id, category_id) DO NOTHING RETURNING book_id
                    """).all(decoding: BookID.self).map(\.bookID)
            }
            let name = try await BookCategories.name(of: category, on: batch.sql)
            return "\(books(added.count)) added to “\(name)”" + (added.count < ids.count ? " (\(ids.count - added.count) already had it)." : ".")
        },
        AdminBatchAction(name: "remove_category", label: "Remove from category", target: .lookup(.categories), targetLabel: "Category") { ids, target, batch in
            guard let category = target.flatMap(Int.init) else { return "Choose a category." }
            let removed = try await batch.audited("remove from category", ids) { sql in
                try await sql.delete(from: "book_categories").where("category_id", .equal, SQLBind(category))
                    .where("book_id", .equal, SQLFunction("ANY", args: SQLBind(ids))).returning("book_id").all(decoding: BookID.self)
                    .map(\.bookID)
            }
            let name = try await BookCategories.name(of: category, on: batch.sql)
            return "\(books(removed.count)) removed from “\(name)”."
        },
        AdminBatchAction(name: "set_status", label: "Change status", target: .choices(bookStatuses), targetLabel: "Status") { ids, target, batch in
            guard let status = target, bookStatuses.contains(where: { $0.value == status }) else { return "Choose a status." }
            let changed = try await batch.audited("change status", ids) { sql in
                try await sql.update("books").set("status", to: SQLBind(status))
                    .where("id", .equal, SQLFunction("ANY", args: SQLBind(ids))).where("status", .notEqual, SQLBind(status))
                    .returning("id").all(decoding: ResourceRows.ID.self).map(\.id)
            }
            return "\(books(changed.count)) changed to \(status)."
        },
        AdminBatchAction(name: "shift_rights_end", label: "Extend or shorten rights", target: .choices(rightsShifts), targetLabel: "Days") { ids, target, batch in
            guard let days = target.flatMap(Int.init), rightsShifts.contains(where: { $0.value == target }) else { return "Choose by how many days." }
            // The window that ends last; an open-ended one has nothing to move, and an end may not
            // come before its window's start.
            let shifted = try await batch.audited(days > 0 ? "extend rights" : "shorten rights", ids) { sql in
                try await sql.raw("""
                    WITH last AS (
                        SELECT DISTINCT ON (r.book_id) r.id, r.starts_at, r.ends_at FROM rights_windows r
                         WHERE r.book_id = ANY(\(bind: ids)::bigint[]) ORDER BY r.book_id, r.ends_at DESC NULLS FIRST, r.id DESC)
                    UPDATE rights_windows w SET ends_at = last.ends_at + make_interval(days => \(bind: days)::int)
                      FROM last WHERE w.id = last.id AND last.ends_at IS NOT NULL AND last.ends_at + make_interval(days => \(bind: days)::int) > last.starts_at
                    RETURNING w.book_id
                    """).all(decoding: BookID.self).map(\.bookID)
            }
            let skipped = ids.count - shifted.count
            return "\(books(shifted.count)): rights \(days > 0 ? "extended" : "shortened") by \(abs(days)) \(abs(days) == 1 ? "day" : "days")"
                + (skipped > 0 ? " (\(books(skipped)) left as they were: open-ended, no window, or the end would come before the start)." : ".")
        },
    ]

    static let rightsShifts: [Choice] = [-90, -30, -7, -1, 1, 7, 30, 90, 365].map {
        Choice(value: String($0), label: $0 > 0 ? "+\($0) days" : "\($0) days")
    }

    /// The `book_id` a batch statement returns for each book it changed.
    private struct BookID: Decodable {
        let bookID: Int
        enum CodingKeys: String, CodingKey { case bookID = "book_id" }
    }

    private static func books(_ n: Int) -> String { "\(n) \(n == 1 ? "book" : "books")" }
}

/// A book's categories: the form's checkboxes and the batch actions.
enum BookCategories {
    private struct CategoryID: Decodable {
        let categoryID: Int
        enum CodingKeys: String, CodingKey { case categoryID = "category_id" }
    }
    private struct Name: Decodable { let name: String }

    static func ids(of book: Int, on sql: any SQLDatabase) async throws -> [Int] {
        try await sql.select().column("category_id").from("book_categories").where("book_id", .equal, SQLBind(book))
            .all(decoding: CategoryID.self).map(\.categoryID)
    }

    /// Exactly `ids`: the others removed, the missing added.
    static func set(_ ids: [Int], of book: Int, on sql: any SQLDatabase) async throws {
        try await sql.delete(from: "book_categories").where("book_id", .equal, SQLBind(book))
            .where(SQLQueryString("NOT (category_id = ANY(\(bind: ids)::bigint[]))")).run()
        try await sql.raw("""
            INSERT INTO book_categories (book_id, category_id) SELECT \(bind: book), unnest(\(bind: ids)::bigint[])
            ON CONFLICT (book_id, category_id) DO NOTHING
            """).run()
    }

    static func name(of category: Int, on sql: any SQLDatabase) async throws -> String {
        try await sql.select().column("name").from("categories").where("id", .equal, SQLBind(category))
            .first(decoding: Name.self)?.name ?? "category \(category)"
    }
}
