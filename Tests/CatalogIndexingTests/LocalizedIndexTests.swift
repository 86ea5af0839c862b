@testable import CatalogIndexing
import Core
import Foundation
import Testing

@Suite("Localized index")
struct LocalizedIndexTests {
    static func book(_ id: Int, categories: [Int], translations: [CatalogBook.Translation]) -> CatalogBook {
        let head = "{\"age_max\":5,\"age_min\":2,\"author\":\"Ann\",\"categories\":["
            + categories.map { "{\"id\":\($0),\"name\":\"Cat \\\"\($0)\\\"\",\"slug\":\"c\($0)\"}" }.joined(separator: ",")
            + "],\"cover\":null,\"cover_image_url\":null,\"description\":\"Own \\\"text\\\"\",\"duration_seconds\":null,\"has_captions\":true,\"id\":\(id),"
            + "\"language\":\"en\",\"publisher\":null,\"rights_available\":"
        let json = Array((head + ",\"status\":\"active\",\"title\":\"Own title \(id)\"}").utf8)
        var book = CatalogBook(id: id, titleKey: Array("own title \(id)".utf8), createdAt: 0, ageMin: 2, ageMax: 5, publisherID: nil, categoryIDs: categories,
                               lexemes: [("own", 1)], json: json, rightsOffset: head.utf8.count, rights: [])
        book.language = "en"
        book.translations = translations
        return book
    }

    static func literal(_ text: String) -> [UInt8] { Array(("\"" + text + "\"").utf8) }

    @Test("translated fields and category names are spliced in along the chain; the book's own language and untranslated fields keep its text; a snapshot keeps them")
    func splicing() throws {
        var index = CatalogIndex()
        index.setCategories([.init(id: 1, slug: "c1", names: ["fr": Self.literal("Soir")]), .init(id: 2, slug: "c2")])
        index.beginBulk()
        index.upsert(Self.book(1, categories: [1, 2], translations: [
            .init(locale: "fr", title: Self.literal("Titre \\\"fr\\\""), description: nil),
            .init(locale: "fr-CA", title: nil, description: Self.literal("Québec")),
            .init(locale: "en", title: Self.literal("never"), description: nil)]))
        index.upsert(Self.book(2, categories: [], translations: []))
        index.endBulk()
        func object(_ id: Int, _ locales: [String]) throws -> [String: Any] {
            let bytes = index.render(id, at: 0, locales: locales)!
            return try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], "\(String(decoding: bytes, as: UTF8.self))")
        }
        let fr = try object(1, ["fr-CA", "fr"])
        #expect(fr["title"] as? String == "Titre \"fr\"" && fr["description"] as? String == "Québec")
        #expect((fr["categories"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Soir", "Cat \"2\""])
        #expect(fr["rights_available"] as? Bool == false && fr["id"] as? Int == 1)
        let en = try object(1, ["en"])
        #expect(en["title"] as? String == "Own title 1" && en["description"] as? String == "Own \"text\"")
        #expect(index.render(1, at: 0, locales: ["de"]) == index.render(1, at: 0))
        #expect(index.render(2, at: 0, locales: ["fr"]) == index.render(2, at: 0))
        #expect(index.displayFields(1, locales: ["fr"]).title == "Titre \"fr\"" && index.displayFields(1, locales: ["fr"]).titleLanguage == "fr")
        let bytes = try index.snapshotBytes()
        let loaded = try bytes.withUnsafeBytes { raw in
            var reader = SnapshotReader(raw)
            return try CatalogIndex(snapshot: &reader)
        }
        #expect(try loaded.snapshotBytes() == index.snapshotBytes())
        #expect(loaded.render(1, at: 0, locales: ["fr"]) == index.render(1, at: 0, locales: ["fr"]))
        // A change without translations leaves none behind.
        index.apply([Self.book(1, categories: [1], translations: [])], removing: [])
        #expect(try object(1, ["fr"])["title"] as? String == "Own title 1")
    }
}
