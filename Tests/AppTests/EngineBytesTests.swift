@testable import App
@testable import CatalogIndexing
import Foundation
import SQLKit
import Testing
import VaporTesting

/// The bytes the engine writes or reads by hand instead of through a JSON encoder or decoder:
/// each checked against them over random inputs.
@Suite("Engine: bytes by hand")
struct EngineBytesTests {
    @Test("a page's facets are the bytes the app's encoder writes for them, over 500 random answers (counts, ids and slugs; categories in and out of the catalog's order)")
    func facets() throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var rng = CatalogEngineTests.Random(state: 47)   // (seeded: a failure replays)
        let slugs = ["owls", "sea-stories", "a\"b", "back\\slash", "é-你好-🦉", "line\nbreak", "</script>", ""]
        for _ in 0..<500 {
            let categories = (0..<Int.random(in: 0...12, using: &rng)).map {
                CatalogIndex.Category(id: $0 * 7 + Int.random(in: 1...6, using: &rng), slug: slugs.randomElement(using: &rng)! + "\($0)")
            }
            var counted = categories.map { (id: $0.id, count: Int.random(in: 0...2_000_000, using: &rng)) }
            if Bool.random(using: &rng) { counted.shuffle(using: &rng) }                       // (not in the catalog's order)
            if Bool.random(using: &rng), !counted.isEmpty { counted.append((id: 99_999, count: 1)) }   // (a category the list lacks)
            let answer = CatalogIndex.Answer(total: 0, ids: [], categoryCounts: counted,
                                             ageBandCounts: CatalogIndex.ageBands.map { _ in Int.random(in: 0...500_000, using: &rng) })
            let slugOf = Dictionary(categories.map { ($0.id, $0.slug) }, uniquingKeysWith: { a, _ in a })
            let dto = FacetsDTO(categories: counted.map { FacetsDTO.CategoryCount(id: $0.id, slug: slugOf[$0.id] ?? "", count: $0.count) },
                                ageBands: zip(CatalogIndex.ageBands, answer.ageBandCounts).map { FacetsDTO.AgeBand(band: $0.0.label, age: $0.0.age, count: $0.1) })
            var out = Array("before".utf8)
            FacetsDTO.write(answer, categories: categories, into: &out)
            #expect(out == Array("before".utf8) + Array(try encoder.encode(dto)), "\(counted)")
        }
    }

    @Test("a page's highlights read each book's title, author and language where the loader lays them out: the same as the stored JSON decoded, over 60 books of random text (quotes, backslashes, keys inside values, other scripts)", .app)
    func displayFields() async throws {
        let app = try app()
        var rng = CatalogEngineTests.Random(state: 47)   // (seeded: a failure replays)
        let pieces = ["Owl", "moon", " ", "\"", "\\", "é", "你好", "🦉", "\n", "\u{01}", "\",\"author\":\"x", ",\"language\":\"zz\"", "\"title\":\"",
                      "/", "}", "{", ",", ":", "null", "1", "true"]
        func text(_ count: ClosedRange<Int>) -> String { (0..<Int.random(in: count, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined() }
        let publisher = try await app.sql.raw("INSERT INTO publishers (name) VALUES ('Pub \"lishers\"') RETURNING id").first()!.decode(column: "id", as: Int.self)
        var ids: [Int] = []
        for i in 0..<60 {
            let id = try await app.makeBook("T" + text(0...8), author: text(0...6), description: text(0...40), ages: Int.random(in: 0...4, using: &rng)...Int.random(in: 5...18, using: &rng),
                                            publisher: i % 2 == 0 ? publisher : nil, video: i % 3 == 0 ? nil : "ready", captions: i % 4 == 0)
            if i % 5 == 0 { try await app.sql.raw("UPDATE books SET language = 'fr' WHERE id = \(bind: id)").run() }
            ids.append(id)
        }
        let engine = app.appServices.catalogEngine
        try await engine.build(on: app.db)
        let fields = engine.reading(at: 0) { index, _, _, _ in
            ids.map { id in (index.displayFields(id), index.render(id, at: 0), index.isLaidOut(id)) }
        }
        for (id, (read, rendered, laidOut)) in zip(ids, fields) {
            #expect(laidOut, "book \(id)'s fields are looked for, not read where laid out")
            let bytes = try #require(rendered)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            #expect(read.title == object["title"] as? String && read.author == object["author"] as? String && read.language == object["language"] as? String,
                    "book \(id): \(read) against \(object)")
        }
    }
}
