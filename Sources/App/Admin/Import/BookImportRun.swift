import Foundation
import SQLKit

/// Writes a planned import in the caller's transaction, set-wise (a handful of statements
/// however many rows): new books with ids taken up front, updates of the mapped columns only,
/// categories replaced where mapped, a rights window added where given (unless the book has that
/// very window) — through the books' `ResourceStore.audited`, so each book gets an audit row with
/// its state before and after (kind `import`, shown as `import #file`, the stored file's id).
enum BookImportRun {
    static func run(_ plan: BookImportPlan, file: Int, audit: AuditWriter, on sql: any SQLDatabase) async throws -> (created: Int, updated: Int) {
        let planned = plan.rows.filter { if case .refuse = $0.outcome { return false } else { return true } }
        let existing = planned.compactMap { row -> Int? in if case .update(let id) = row.outcome { return id }; return nil }
        var counts = (created: 0, updated: 0)
        try await ResourceStore.books(sql).audited(.import, detail: String(file), existing, in: sql, audit: audit) { sql, _ in
            let rows = try await write(plan, planned, on: sql)
            counts = (rows.created, rows.updated)
            return AuditedChange(rows.ids)
        }
        return counts
    }

    /// The import's statements; the books it wrote, in the plan's order.
    private static func write(_ plan: BookImportPlan, _ planned: [BookImportPlan.Row],
                              on sql: any SQLDatabase) async throws -> (ids: [Int], created: Int, updated: Int) {
        let fields = AdminResource.books.form.fields.filter { BookImportPlan.bookFields.contains($0.name) }
        var rows = planned
        let creates = rows.indices.filter { rows[$0].outcome == .create }
        var newIDs = Set<Int>()
        // New ids first, so every later statement knows each row's book.
        if !creates.isEmpty {
            let ids = try await sql.raw("""
                SELECT nextval(pg_get_serial_sequence('books', 'id')) AS id FROM generate_series(1, \(bind: creates.count))
                """).all(decoding: NewID.self).map(\.id)
            for (index, id) in zip(creates, ids) { rows[index].outcome = .update(id); newIDs.insert(id) }
        }
        func bookID(_ row: BookImportPlan.Row) -> Int { if case .update(let id) = row.outcome { return id }; return 0 }
        let isNew = { [newIDs] (row: BookImportPlan.Row) in newIDs.contains(bookID(row)) }

        func text(_ value: FormValues.Value?) -> String? {
            switch value {
            case .text(let text)?: return text
            case .integer(let number)?: return String(number)
            case .bool(let flag)?: return flag ? "true" : "false"
            default: return nil
            }
        }
        // Creates: every column (the planner filled in the form's defaults).
        let created = rows.filter(isNew)
        if !created.isEmpty {
            var columns: [SQLQueryString] = ["x.id", "x.external_id", "x.publisher_id::bigint"]
            var names = ["id", "external_id", "publisher_id"]
            var arrays: [SQLQueryString] = [
                "\(bind: created.map(bookID))::bigint[]", "\(bind: created.map { $0.externalID })::text[]",
                "\(bind: created.map { ($0.publisherID ?? nil).map(String.init) })::text[]"]
            for field in fields {
                names.append(field.name)
                columns.append("x.\(ident: field.name)::\(field.sqlType)")
                arrays.append("\(bind: created.map { text($0.values[field.name]) })::text[]")
            }
            try await sql.raw("""
                INSERT INTO books (\(SQLList(names.map { SQLIdentifier($0) })))
                SELECT \(columns.joined(separator: ", ")) FROM unnest(\(arrays.joined(separator: ", "))) AS x(\(SQLList(names.map { SQLIdentifier($0) })))
                """).run()
        }
        // Updates: the mapped columns only.
        let updated = rows.filter { !isNew($0) }
        let mapped = fields.filter { plan.mapping[$0.name] != nil }
        let publisherMapped = plan.mapping["publisher"] != nil
        if !updated.isEmpty && (!mapped.isEmpty || publisherMapped) {
            var names = ["id"], sets: [SQLQueryString] = []
            var arrays: [SQLQueryString] = ["\(bind: updated.map(bookID))::bigint[]"]
            for field in mapped {
                names.append(field.name)
                sets.append("\(ident: field.name) = COALESCE(x.\(ident: field.name)::\(field.sqlType), b.\(ident: field.name))")
                arrays.append("\(bind: updated.map { text($0.values[field.name]) })::text[]")
            }
            if publisherMapped {
                names.append("publisher_id")
                // "" clears nothing: a blank cell (no value planned) keeps the publisher.
                sets.append("publisher_id = CASE WHEN x.publisher_id IS NULL THEN b.publisher_id ELSE NULLIF(x.publisher_id, '')::bigint END")
                arrays.append("\(bind: updated.map { row in row.publisherID.map { $0.map(String.init) ?? "" } })::text[]")
            }
            try await sql.raw("""
                UPDATE books b SET \(sets.joined(separator: ", ")), updated_at = now()
                  FROM unnest(\(arrays.joined(separator: ", "))) AS x(\(SQLList(names.map { SQLIdentifier($0) })))
                 WHERE b.id = x.id
                """).run()
        }
        // Categories, where the column is mapped: the row's list replaces the book's — only what
        // differs is written, so a live book whose categories stay is no content change for review.
        if plan.mapping["categories"] != nil {
            let books = rows.filter { $0.categoryIDs != nil }.map(bookID)
            let pairs = rows.flatMap { row in (row.categoryIDs ?? []).map { (bookID(row), $0) } }
            try await sql.raw("""
                DELETE FROM book_categories bc WHERE bc.book_id = ANY(\(bind: books)::bigint[])
                   AND NOT EXISTS (SELECT 1 FROM unnest(\(bind: pairs.map(\.0))::bigint[], \(bind: pairs.map(\.1))::bigint[]) AS x(book_id, category_id)
                                    WHERE x.book_id = bc.book_id AND x.category_id = bc.category_id)
                """).run()
            try await sql.raw("""
                INSERT INTO book_categories (book_id, category_id)
                SELECT * FROM unnest(\(bind: pairs.map(\.0))::bigint[], \(bind: pairs.map(\.1))::bigint[])
                ON CONFLICT (book_id, category_id) DO NOTHING
                """).run()
        }
        // Rights windows: added unless the book already has the same one.
        let windows = rows.compactMap { row in row.window.map { (bookID(row), $0) } }
        if !windows.isEmpty {
            let iso = ISO8601DateFormatter()
            try await sql.raw("""
                INSERT INTO rights_windows (book_id, starts_at, ends_at, territories)
                SELECT x.book_id, x.starts_at::timestamptz, x.ends_at::timestamptz, string_to_array(x.territories, ' ')
                  FROM unnest(\(bind: windows.map(\.0))::bigint[], \(bind: windows.map { iso.string(from: $0.1.start) })::text[],
                              \(bind: windows.map { $0.1.end.map(iso.string) })::text[], \(bind: windows.map { $0.1.territories.joined(separator: " ") })::text[])
                       AS x(book_id, starts_at, ends_at, territories)
                 WHERE NOT EXISTS (SELECT 1 FROM rights_windows r WHERE r.book_id = x.book_id AND r.starts_at = x.starts_at::timestamptz
                                      AND r.ends_at IS NOT DISTINCT FROM x.ends_at::timestamptz AND r.territories = string_to_array(x.territories, ' '))
                """).run()
        }
        try await BookImportPlan.writeTranslations(rows.map { (bookID($0), $0.translations) }, on: sql)
        return (rows.map(bookID), created.count, updated.count)
    }

    private struct NewID: Decodable { let id: Int }
}
