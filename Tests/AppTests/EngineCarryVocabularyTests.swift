@testable import App
import Foundation
import SQLKit
import Testing
import VaporTesting

/// A change's carry and the words' kept expansions (`SearchMemo.carry`): only a lexeme coming
/// into or leaving the catalog changes an expansion, and a carry whose changes bring none reads
/// none of them (`MemoCarry.keepsVocabulary`).
@Suite("Engine carry: the words' expansions")
struct EngineCarryVocabularyTests {
    @Test("a word no book had, searched whole and with a typo, finds the book a change brings it with; a change that brings no new word keeps the kept expansions", .app)
    func newWordReachesItsExpansions() async throws {
        let app = try app()
        let engine = app.appServices.catalogEngine
        let parent = try await app.makeParent()
        let owl = try await app.makeBook("Owl Moon")
        let bear = try await app.makeBook("Bear Snores")
        try await engine.build(on: app.db)
        func titles(_ query: String) async throws -> [String] {
            try await app.get("/api/v1/catalog/books?\(query)", token: parent.token).dataArray.compactMap { $0["title"] as? String }.sorted()
        }
        func keptExpansions() -> Set<String> { engine.searchMemo.withLockedValue { Set($0.expansions.current.keys).union($0.expansions.previous.keys) } }
        for query in ["q=zebra", "q=zebar", "q=owl", "q=moon"] { _ = try await titles(query) }
        #expect(try await titles("q=zebra").isEmpty)
        #expect(keptExpansions().isSuperset(of: ["zebra", "zebar", "owl", "moon"]), "\(keptExpansions())")
        // Words the catalog has already: no expansion changes, every one is kept.
        try await app.sql.raw("UPDATE books SET title = 'Owl Moon Snores' WHERE id = \(bind: owl)").run()
        #expect(try await titles("q=owl") == ["Owl Moon Snores"])
        await engine.carried()
        #expect(keptExpansions().isSuperset(of: ["zebra", "zebar", "owl", "moon"]), "\(keptExpansions())")
        // A word new to the catalog: the expansions that may match it go, and the searches find the book.
        try await app.sql.raw("UPDATE books SET title = 'Zebra Snores' WHERE id = \(bind: bear)").run()
        #expect(try await titles("q=owl") == ["Owl Moon Snores"])
        await engine.carried()
        #expect(!keptExpansions().contains("zebra") && !keptExpansions().contains("zebar") && keptExpansions().contains("owl"), "\(keptExpansions())")
        #expect(try await titles("q=zebra") == ["Zebra Snores"])
        #expect(try await titles("q=zebar") == ["Zebra Snores"])
    }
}
