import Core
import Foundation
import Logging
import PostgresNIO

/// Reads books for the catalog index from PostgreSQL: the whole active catalog in one streamed
/// pass at start-up, or the books a change named. Lexemes come from the stored `search_vector`,
/// so the index and SQL never disagree about words.
enum CatalogLoader {
    struct CategoryInfo { let id: Int; let name: String; let slug: String; let rank: Int }

    /// Categories in catalog order (the order a book's categories are listed in).
    static func categories(on connection: PostgresConnection, logger: Logger) async throws -> [CategoryInfo] {
        let rows = try await connection.query("SELECT id, name, slug FROM categories ORDER BY display_order, name, id", logger: logger)
        var result: [CategoryInfo] = []
        for try await (id, name, slug) in rows.decode((Int, String, String).self) {
            result.append(CategoryInfo(id: id, name: name, slug: slug, rank: result.count))
        }
        return result
    }

    /// Active books, all of them (`ids` nil, in id order) or those of `ids`.
    static func books(ids: [Int]?, categories: [CategoryInfo], on connection: PostgresConnection, logger: Logger,
                      _ body: (CatalogBook) throws -> Void) async throws {
        let byID = Dictionary(categories.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var query: PostgresQuery = """
            SELECT b.id, b.title, b.author, b.description, b.age_min, b.age_max, b.language, b.cover_image_url,
                   p.id, p.name, CASE WHEN v.status = 'ready' THEN v.duration_seconds END, COALESCE(v.has_captions, false),
                   convert_to(lower(b.title), 'UTF8'), (extract(epoch FROM b.created_at) * 1000000)::int8,
                   ARRAY(SELECT bc.category_id FROM book_categories bc WHERE bc.book_id = b.id),
                   ARRAY(SELECT x FROM rights_windows r,
                         LATERAL (VALUES (1, (extract(epoch FROM r.starts_at) * 1000000)::int8),
                                         (2, COALESCE((extract(epoch FROM r.ends_at) * 1000000)::int8, -1))) AS w(k, x)
                          WHERE r.book_id = b.id ORDER BY r.id, w.k),
                   tsvector_to_array(ts_filter(b.search_vector, '{a}')), tsvector_to_array(ts_filter(b.search_vector, '{b}')),
                   tsvector_to_array(ts_filter(b.search_vector, '{c}'))
              FROM books b LEFT JOIN publishers p ON p.id = b.publisher_id LEFT JOIN video_assets v ON v.book_id = b.id
             WHERE b.status = 'active'
            """
        if let ids {
            query = "\(unescaped: query.sql) AND b.id = ANY(\(ids))"
        } else {
            query = "\(unescaped: query.sql) ORDER BY b.id"
        }
        let rows = try await connection.query(query, logger: logger)
        for try await row in rows {
            try body(makeBook(try row.decode(Row.self), categories: byID))
        }
    }

    typealias Row = (Int, String, String, String, Int, Int, String, String?, Int?, String?, Int?, Bool,
                     ByteBuffer, Int64, [Int], [Int64], [String], [String], [String])

    static func makeBook(_ r: Row, categories: [Int: CategoryInfo]) -> CatalogBook {
        let (id, title, author, description, ageMin, ageMax, language, cover, publisherID, publisherName, duration, captions,
             titleKey, createdAt, categoryIDs, bounds, lexA, lexB, lexC) = r
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
        json.raw("],\"cover_image_url\":"); if let cover { json.string(cover) } else { json.raw("null") }
        json.raw(",\"description\":"); json.string(description)
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

        var weights: [String: UInt8] = Dictionary(minimumCapacity: lexA.count + lexB.count + lexC.count)
        for lexeme in lexA { weights[lexeme, default: 0] |= CatalogBook.title }
        for lexeme in lexB { weights[lexeme, default: 0] |= CatalogBook.author }
        for lexeme in lexC { weights[lexeme, default: 0] |= CatalogBook.description }
        // Start and end of each window, flattened (end -1: open-ended).
        let rights = stride(from: 0, to: bounds.count - 1, by: 2).map {
            CatalogBook.RightsWindow(start: bounds[$0], end: bounds[$0 + 1] < 0 ? nil : bounds[$0 + 1])
        }
        return CatalogBook(id: id, titleKey: Array(titleKey.readableBytesView), createdAt: createdAt, ageMin: ageMin, ageMax: ageMax,
                           publisherID: publisherID, categoryIDs: categoryIDs, lexemes: weights.map { ($0.key, $0.value) },
                           json: json.bytes, rightsOffset: rightsOffset, rights: rights)
    }
}

/// Just enough JSON writing for the book object (the app's encoder is too slow for a million).
struct JSONWriter {
    var bytes: [UInt8] = []

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func int(_ value: Int) { bytes.append(contentsOf: String(value).utf8) }

    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Runs without anything to escape are copied whole.
            var start = 0
            for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                escape(byte)
                start = i + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
        }
    }
}
