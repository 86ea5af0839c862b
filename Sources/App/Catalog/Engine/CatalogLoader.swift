import CatalogIndexing
import Core
import Foundation
import Logging
import PostgresNIO

/// Reads books for the catalog index from PostgreSQL: the whole active catalog in one streamed
/// pass at start-up, or the books a change named. Lexemes come from the stored `search_vector`,
/// so the index and SQL never disagree about words.
enum CatalogLoader {
    struct CategoryInfo {
        let id: Int; let name: String; let slug: String; let rank: Int
        /// Translated names by locale (docs/localization.md).
        var names: [String: String] = [:]
        var indexed: CatalogIndex.Category {
            .init(id: id, slug: slug, names: names.mapValues { name in var json = JSONWriter(); json.string(name); return json.bytes })
        }
    }

    /// Categories in catalog order (the order a book's categories are listed in).
    static func categories(on connection: PostgresConnection, logger: Logger) async throws -> [CategoryInfo] {
        let rows = try await connection.query("""
            SELECT id, name, slug, (SELECT json_object_agg(t.locale, t.name) FROM category_translations t WHERE t.category_id = c.id)::text
              FROM categories c ORDER BY display_order, name, id
            """, logger: logger)
        var result: [CategoryInfo] = []
        for try await (id, name, slug, names) in rows.decode((Int, String, String, String?).self) {
            let translated = names.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) } ?? [:]
            result.append(CategoryInfo(id: id, name: name, slug: slug, rank: result.count, names: translated))
        }
        return result
    }

    /// The active books of `ids` (a change), in no particular order.
    static func books(ids: [Int], categories: [CategoryInfo], on connection: PostgresConnection, logger: Logger) async throws -> [CatalogBook] {
        let byID = categoriesByID(categories)
        var books: [CatalogBook] = []
        for try await row in try await connection.query(query(ids: ids), logger: logger) {
            books.append(makeBook(try row.decode(Row.self), categories: byID))
        }
        return books
    }

    /// Every active book in id order, in batches. Decoding a row costs more than indexing the
    /// book, so rows are handed in batches to tasks that decode them (two at a time, beside the
    /// caller's indexing), and the batches come back in order.
    static func allBooks(categories: [CategoryInfo], on connection: PostgresConnection, logger: Logger,
                         _ body: ([CatalogBook]) async throws -> Void) async throws {
        let byID = categoriesByID(categories)
        var batch: [PostgresRow] = []
        var decoding: [Task<[CatalogBook], any Error>] = []
        func handOff() async throws {
            let rows = batch
            batch = []
            decoding.append(Task.detached { try rows.map { makeBook(try $0.decode(Row.self), categories: byID) } })
            if decoding.count > 2 { try await body(try await decoding.removeFirst().value) }
        }
        for try await row in try await connection.query(query(ids: nil), logger: logger) {
            batch.append(row)
            if batch.count == batchSize { try await handOff() }
        }
        if !batch.isEmpty { try await handOff() }
        for task in decoding { try await body(try await task.value) }
    }

    static let batchSize = 512

    private static func categoriesByID(_ categories: [CategoryInfo]) -> [Int: CategoryInfo] {
        Dictionary(categories.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    private static func query(ids: [Int]?) -> PostgresQuery {
        // Rights: the whole table aggregated once for a build, each book's own windows for a change.
        // Territories: null when every window is worldwide (the usual case costs no text), else
        // "FR BE|US" (territories|excluded) per window, ";"-separated in the windows' order.
        let rule = "array_to_string(territories, ' ') || '|' || array_to_string(exclude_territories, ' ')"
        let worldwide = "bool_and(territories = '{}' AND exclude_territories = '{}')"
        let territories = "CASE WHEN \(worldwide) THEN NULL ELSE string_agg(\(rule), ';') END territories"
        let territoriesByID = "CASE WHEN \(worldwide) THEN NULL ELSE string_agg(\(rule), ';' ORDER BY id) END territories"
        let rights = ids == nil
            ? "LEFT JOIN (SELECT book_id, array_agg(starts_at) starts, array_agg(ends_at) ends, \(territories) FROM rights_windows GROUP BY book_id) rw ON rw.book_id = b.id"
            : """
              LEFT JOIN LATERAL (SELECT array_agg(starts_at ORDER BY id) starts, array_agg(ends_at ORDER BY id) ends, \(territoriesByID)
                                   FROM rights_windows r WHERE r.book_id = b.id) rw ON true
              """
        // Translations: null for most books, else [[locale, title, description]...] as JSON text.
        let translation = "json_agg(json_build_array(t.locale, t.title, t.description) ORDER BY t.locale)::text translations"
        let translations = ids == nil
            ? "LEFT JOIN (SELECT t.book_id, \(translation) FROM book_translations t GROUP BY t.book_id) tr ON tr.book_id = b.id"
            : "LEFT JOIN LATERAL (SELECT \(translation) FROM book_translations t WHERE t.book_id = b.id) tr ON true"
        let query: PostgresQuery = """
            SELECT b.id, b.title, b.author, b.description, b.age_min, b.age_max, b.language, b.cover_image_url,
                   p.id, p.name, \(unescaped: BookSQL.readyDuration("v").text), COALESCE(v.has_captions, false),
                   convert_to(lower(b.title), 'UTF8'), b.created_at,
                   ARRAY(SELECT bc.category_id FROM book_categories bc WHERE bc.book_id = b.id),
                   rw.starts, rw.ends, rw.territories, b.search_vector || b.stem_vector, b.live_from, b.live_until, bcv.api_json,
                   tr.translations
              FROM books b LEFT JOIN publishers p ON p.id = b.publisher_id LEFT JOIN video_assets v ON v.book_id = b.id
                   LEFT JOIN book_covers bcv ON bcv.book_id = b.id
                   \(unescaped: rights)
                   \(unescaped: translations)
             WHERE b.status = 'active'
            """
        if let ids { return "\(unescaped: query.sql) AND b.id = ANY(\(ids))" }
        return "\(unescaped: query.sql) ORDER BY b.id"
    }

    /// `created_at`, the rights bounds and the lexemes (`search_vector` with the stem tokens of
    /// `stem_vector`, which start with `~`) arrive in PostgreSQL's binary formats
    /// (`PostgresBinary`).
    typealias Row = (Int, String, String, String, Int, Int, String, String?, Int?, String?, Int?, Bool,
                     ByteBuffer, ByteBuffer, [Int], ByteBuffer?, ByteBuffer?, String?, ByteBuffer, ByteBuffer?, ByteBuffer?, String?, String?)

    static func makeBook(_ r: Row, categories: [Int: CategoryInfo]) -> CatalogBook {
        let (id, title, author, description, ageMin, ageMax, language, cover, publisherID, publisherName, duration, captions,
             titleKey, created, categoryIDs, starts, ends, territories, searchVector, liveFrom, liveUntil, coverJSON, translations) = r
        let bookCategories = categoryIDs.compactMap { categories[$0] }.sorted { $0.rank < $1.rank }
        var json = JSONWriter()
        json.raw("{\"age_max\":"); json.int(ageMax)
        json.raw(",\"age_min\":"); json.int(ageMin)
        json.raw(",\"author\":"); json.string(author)
        json.raw(",\"categories\":[")
        for (i, category) in bookCategories.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{\"id\":"); json.int(category.id)
            json.raw(",\"name\":"); json.string(category.name)
            json.raw(",\"slug\":"); json.string(category.slug)
            json.raw("}")
        }
        // The cover's JSON as the app wrote it with the API's encoder (`CoverDTO.apiJSON`).
        json.raw("],\"cover\":"); if let coverJSON { json.json(coverJSON) } else { json.raw("null") }
        json.raw(",\"cover_image_url\":"); if let cover { json.string(cover) } else { json.raw("null") }
        json.raw(",\"description\":")
        let descriptionStart = json.bytes.count
        json.string(description)
        let descriptionRange = descriptionStart..<json.bytes.count
        json.raw(",\"duration_seconds\":"); if let duration { json.int(duration) } else { json.raw("null") }
        json.raw(",\"has_captions\":"); json.raw(captions ? "true" : "false")
        json.raw(",\"id\":"); json.int(id)
        json.raw(",\"language\":"); json.string(language)
        json.raw(",\"publisher\":")
        if let publisherID, let publisherName {
            json.raw("{\"id\":"); json.int(publisherID); json.raw(",\"name\":"); json.string(publisherName); json.raw("}")
        } else {
            json.raw("null")
        }
        json.raw(",\"rights_available\":")
        let rightsOffset = json.bytes.count
        json.raw(",\"status\":\"active\",\"title\":"); json.string(title)
        json.raw("}")

        let rules = territories.map { $0.split(separator: ";", omittingEmptySubsequences: false).map(TerritoryRule.init(loaded:)) } ?? []
        let rights = zip(PostgresBinary.microsecondsArray(starts), PostgresBinary.microsecondsArray(ends)).enumerated().compactMap { i, window in
            window.0.map { CatalogBook.RightsWindow(start: $0, end: window.1, rule: i < rules.count ? rules[i] : .worldwide) }
        }
        var book = CatalogBook(id: id, titleKey: Array(titleKey.readableBytesView), createdAt: PostgresBinary.microseconds(created) ?? 0, ageMin: ageMin, ageMax: ageMax,
                           publisherID: publisherID, categoryIDs: categoryIDs, lexemes: PostgresBinary.lexemes(searchVector),
                           json: json.bytes, rightsOffset: rightsOffset, rights: rights,
                           liveFrom: liveFrom.flatMap(PostgresBinary.microseconds), liveUntil: liveUntil.flatMap(PostgresBinary.microseconds))
        book.language = language
        book.descriptionRange = descriptionRange
        book.translations = Self.translations(translations)
        return book
    }

    /// `[[locale, title, description]...]` (JSON text) as the index keeps them: JSON literals.
    static func translations(_ text: String?) -> [CatalogBook.Translation] {
        guard let text, let rows = try? JSONDecoder().decode([[String?]].self, from: Data(text.utf8)) else { return [] }
        func literal(_ value: String?) -> [UInt8]? {
            value.map { var json = JSONWriter(); json.string($0); return json.bytes }
        }
        return rows.compactMap { row in
            guard row.count == 3, let locale = row[0] else { return nil }
            return CatalogBook.Translation(locale: locale, title: literal(row[1]), description: literal(row[2]))
        }
    }
}

extension TerritoryRule {
    /// "FR BE|US": a window's territories and excluded territories, as the loader aggregates them.
    init(loaded text: Substring) {
        let parts = text.split(separator: "|", omittingEmptySubsequences: false)
        func codes(_ i: Int) -> [String] { i < parts.count ? parts[i].split(separator: " ").map(String.init) : [] }
        self.init(territories: codes(0), excluded: codes(1))
    }
}
