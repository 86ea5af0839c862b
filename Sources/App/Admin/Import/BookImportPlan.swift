import Core
import Foundation
import SQLKit

/// What a CSV import of books would do, row by row: create, update (the book with the row's
/// `external_id`) or refuse with the reason — checked by the book form's own fields and rules,
/// so a row is refused for exactly what the form would refuse. Nothing is written here.
struct BookImportPlan: Sendable {
    /// The columns a CSV column can be mapped to, in the mapping step's order.
    static let targets: [(name: String, label: String)] = [
        ("external_id", "External id (the upsert key)"), ("title", "Title"), ("author", "Author"), ("description", "Description"),
        ("age_min", "Minimum age"), ("age_max", "Maximum age"), ("language", "Language"), ("cover_image_url", "Cover image URL"),
        ("publisher", "Publisher (name or id)"), ("status", "Status"), ("categories", "Categories (slugs or ids, separated by ;)"),
        ("rights_starts_at", "Rights window start (UTC)"), ("rights_ends_at", "Rights window end (UTC)"),
        ("territories", "Rights window territories"),
    ] + translationTargets
    /// The book form's stored fields an import may set.
    static let bookFields = ["title", "author", "description", "age_min", "age_max", "language", "cover_image_url", "status"]

    enum Outcome: Sendable, Equatable { case create, update(Int), refuse(String) }

    struct Window: Sendable { let start: Date; let end: Date?; let territories: [String] }

    struct Row: Sendable {
        let line: Int
        let cells: [String]
        var outcome: Outcome
        /// Parsed values of the mapped book fields (and, for a new book, the defaults).
        var values: [String: FormValues.Value] = [:]
        var externalID: String?
        var publisherID: Int??
        var categoryIDs: [Int]?
        var window: Window?
        /// Translations by locale (`title[fr]`, `description[fr]`; nil fields: left as they are).
        var translations: [String: (title: String?, description: String?)] = [:]
    }

    let header: [String]
    /// target → CSV column index.
    let mapping: [String: Int]
    let rows: [Row]

    var counts: (create: Int, update: Int, refuse: Int) {
        rows.reduce(into: (0, 0, 0)) { counts, row in
            switch row.outcome {
            case .create: counts.0 += 1
            case .update: counts.1 += 1
            case .refuse: counts.2 += 1
            }
        }
    }

    /// The mapping a header suggests: a column named like a target (case, spaces and dashes aside).
    static func guess(_ header: [String]) -> [String: Int] {
        let normalized = header.map { $0.lowercased().replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "-", with: "_") }
        var mapping: [String: Int] = [:]
        let aliases = ["publisher_name": "publisher", "category": "categories", "category_slugs": "categories", "starts_at": "rights_starts_at",
                       "ends_at": "rights_ends_at", "rights_start": "rights_starts_at", "rights_end": "rights_ends_at", "id": "external_id"]
        for (index, name) in normalized.enumerated() {
            let target = aliases[name] ?? name
            if targets.contains(where: { $0.name == target }), mapping[target] == nil { mapping[target] = index }
        }
        return mapping
    }

    /// What the database knows that the rows refer to.
    struct Lookups: Sendable {
        /// external_id → (book id, age_min, age_max, language)
        var books: [String: (id: Int, ageMin: Int, ageMax: Int, language: String)] = [:]
        var publishersByName: [String: Int] = [:]
        var publisherIDs: Set<Int> = []
        var categoriesBySlug: [String: Int] = [:]
        var categoryIDs: Set<Int> = []

        private struct Book: Decodable { let id: Int; let externalId: String; let ageMin: Int; let ageMax: Int; let language: String }
        private struct Publisher: Decodable { let id: Int; let name: String }
        private struct Category: Decodable { let id: Int; let slug: String }

        static func load(externalIDs: [String], on sql: any SQLDatabase) async throws -> Lookups {
            var lookups = Lookups()
            for row in try await sql.raw("SELECT id, external_id, age_min, age_max, language FROM books WHERE external_id = ANY(\(bind: externalIDs)::text[])")
                .all(decoding: Book.self, keyDecodingStrategy: .convertFromSnakeCase) {
                lookups.books[row.externalId] = (row.id, row.ageMin, row.ageMax, row.language)
            }
            for row in try await sql.raw("SELECT id, name FROM publishers ORDER BY id DESC").all(decoding: Publisher.self) {
                lookups.publishersByName[row.name.lowercased()] = row.id
                lookups.publisherIDs.insert(row.id)
            }
            for row in try await sql.raw("SELECT id, slug FROM categories").all(decoding: Category.self) {
                lookups.categoriesBySlug[row.slug] = row.id
                lookups.categoryIDs.insert(row.id)
            }
            return lookups
        }
    }

    /// Plans `csv` (a header line, then one book per line) under `mapping`.
    static func plan(csv rows: [[String]], mapping: [String: Int], fields: [AdminField], validate: (FormValues) -> [String: String],
                     lookups: Lookups) -> BookImportPlan {
        let header = rows.first ?? []
        var seen: [String: Int] = [:]
        var planned: [Row] = []
        planned.reserveCapacity(max(0, rows.count - 1))
        let mappedFields = fields.filter { bookFields.contains($0.name) && mapping[$0.name] != nil }
        for (offset, cells) in rows.dropFirst().enumerated() {
            let line = offset + 2
            func cell(_ target: String) -> String? {
                guard let index = mapping[target] else { return nil }
                return index < cells.count ? cells[index].trimmingCharacters(in: .whitespacesAndNewlines) : ""
            }
            var row = Row(line: line, cells: cells, outcome: .create)
            func refuse(_ reason: String) -> Row { var refused = row; refused.outcome = .refuse(reason); return refused }
            if let id = cell("external_id"), !id.isEmpty {
                guard id.count <= 200 else { planned.append(refuse("external_id: use at most 200 characters.")); continue }
                if let first = seen[id] { planned.append(refuse("external_id \(id) is also on line \(first).")); continue }
                seen[id] = line
                row.externalID = id
            }
            let existing = row.externalID.flatMap { lookups.books[$0] }
            if let existing { row.outcome = .update(existing.id) }
            // The form's own parsing and rules: mapped fields, and for a new book the defaults too.
            // An update leaves the fields whose cells are blank as they are.
            let checked = existing == nil ? fields.filter { bookFields.contains($0.name) } : mappedFields.filter { !(cell($0.name) ?? "").isEmpty }
            var raw: [String: String] = [:]
            for field in checked { raw[field.name] = cell(field.name) ?? field.defaultValue ?? "" }
            var values = FormValues(raw: raw, lists: [:])
            var errors = values.parse(checked)
            if errors.isEmpty, let existing {
                // An update's ages are checked against the book's other age when only one is given.
                var both = raw
                both["age_min"] = raw["age_min"] ?? String(existing.ageMin)
                both["age_max"] = raw["age_max"] ?? String(existing.ageMax)
                var full = FormValues(raw: both, lists: [:])
                _ = full.parse(fields.filter { $0.name == "age_min" || $0.name == "age_max" })
                errors = validate(full)
            }
            if errors.isEmpty { errors = validate(values) }
            if let (field, message) = errors.sorted(by: { $0.key < $1.key }).first {
                planned.append(refuse("\(field): \(message)"))
                continue
            }
            for field in checked { row.values[field.name] = values[field.name] }
            if let publisher = cell("publisher"), !(publisher.isEmpty && existing != nil) {
                if publisher.isEmpty { row.publisherID = .some(nil) }
                else if let id = Int(publisher), lookups.publisherIDs.contains(id) { row.publisherID = id }
                else if let id = lookups.publishersByName[publisher.lowercased()] { row.publisherID = id }
                else { planned.append(refuse("publisher: no publisher is named \(publisher).")); continue }
            }
            if let categories = cell("categories"), !(categories.isEmpty && existing != nil) {
                var ids: [Int] = []
                var unknown: String?
                for part in categories.split(whereSeparator: { $0 == ";" || $0 == "|" }).map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
                    if let id = lookups.categoriesBySlug[part] ?? Int(part).flatMap({ lookups.categoryIDs.contains($0) ? $0 : nil }) { ids.append(id) }
                    else { unknown = part; break }
                }
                if let unknown { planned.append(refuse("categories: no category has the slug \(unknown).")); continue }
                row.categoryIDs = Array(Set(ids)).sorted()
            }
            if let startText = cell("rights_starts_at"), !startText.isEmpty {
                guard let start = FormValues.parseDate(startText) else {
                    planned.append(refuse("rights_starts_at: enter a date and time like 2026-11-22T09:30 (UTC).")); continue
                }
                let endText = cell("rights_ends_at") ?? ""
                let end = endText.isEmpty ? nil : FormValues.parseDate(endText)
                if !endText.isEmpty && end == nil { planned.append(refuse("rights_ends_at: enter a date and time like 2026-11-22T09:30 (UTC).")); continue }
                if let end, end <= start { planned.append(refuse("rights_ends_at: the end must be after the start.")); continue }
                var territories: [String] = []
                if let text = cell("territories") {
                    switch Territories.parse(text) {
                    case .success(let codes): territories = codes
                    case .failure(let unknown): planned.append(refuse("territories: " + unknown.message)); continue
                    }
                }
                row.window = Window(start: start, end: end, territories: territories)
            } else if let endText = cell("rights_ends_at"), !endText.isEmpty {
                planned.append(refuse("rights_starts_at: a rights window needs a start.")); continue
            }
            let language = cell("language").flatMap { $0.isEmpty ? nil : $0 } ?? existing?.language
            let translated = translations(cell, language: language)
            if let refusal = translated.refusal { planned.append(refuse(refusal)); continue }
            row.translations = translated.values
            planned.append(row)
        }
        return BookImportPlan(header: header, mapping: mapping, rows: planned)
    }

    /// The refused rows as CSV: the file's columns and the reason.
    var refusedCSV: String {
        var out = CSV.line(header + ["reason"])
        for row in rows {
            guard case .refuse(let reason) = row.outcome else { continue }
            out += CSV.line(row.cells + Array(repeating: "", count: max(0, header.count - row.cells.count)) + [reason])
        }
        return out
    }
}
