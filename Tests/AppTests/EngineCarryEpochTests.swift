@testable import App
import CatalogIndexing
import Core
import Foundation
import NIOConcurrencyHelpers
import Testing

/// A carry reads the memos, works out what its changes reach off their locks, then applies it —
/// unless the memos were emptied meanwhile. An emptied memo that came back to the same version
/// and chain (a change that did not follow, then the same versions again) is another memo: what
/// the carry worked out from the old entries must not be applied to the new ones.
/// (Not in the serialized "Engine carry" suite: nothing here blocks a thread — the memos are
/// replaced from inside the carry's own hook.)
@Suite("Engine carry: a memo emptied meanwhile")
struct EngineCarryEpochTests {
    @Test("a carry that read the memos before they were emptied and came back to the same version and chain applies nothing to them: their new entries stay, then their own chain carries them", .app)
    func emptiedMemoIsAnother() async throws {
        let app = try app()
        let engine = app.appServices.catalogEngine
        let owl = try await app.makeBook("Owl Moon")
        try await app.makeBook("Owl Babies")
        try await engine.build(on: app.db)
        #expect(EngineCarryTests.titles(engine, "q=owl") == ["Owl Babies", "Owl Moon"])
        let base = engine.memo.withLockedValue { $0.version }
        let metaKey = try #require(engine.searchMemo.withLockedValue { $0.meta.current.keys.first { $0.contains("owl") } })
        let key = CarryCheck.answerKey(ofMeta: metaKey)   // (the answer its meta was made from)
        #expect(engine.memo.withLockedValue { $0.answers[key] } != nil)
        // The new memos' own entries (told apart by their contents) and their chain: the same
        // version, one change to the same version as the carry's — one that reaches nothing.
        let forms = [SearchExpansion.forms(of: "owl", synonyms: Synonyms())]
        let newAnswer = CatalogIndex.Answer(total: 99, ids: [], categoryCounts: [], ageBandCounts: [])
        let newMeta: [UInt8] = Array(#","new":true"#.utf8)
        let replaced = NIOLockedValueBox(false)
        engine.whileCarrying.withLockedValue {
            $0 = {
                let first = replaced.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                guard first else { return }
                let nothing = MemoCarry(lexemes: [String](), browsing: false)
                engine.memo.withLockedValue { memo in
                    guard let to = memo.chain.last?.to else {
                        Issue.record("the answers' carry has no chain")
                        return
                    }
                    memo.removeAll()
                    memo.version = base
                    memo.chain = [(to, nothing)]
                    memo.keep(CatalogEngine.AnswerMemo.Entry(newAnswer, ["owl"], forms, nil), key)
                }
                engine.searchMemo.withLockedValue { memo in
                    guard let to = memo.chain.last?.to else {
                        Issue.record("the search memo's carry has no chain")
                        return
                    }
                    memo = SearchMemo(version: base, synonyms: memo.synonyms)
                    memo.chain = [(to, nothing)]
                    memo.meta.keep(newMeta, metaKey)
                }
            }
        }
        // A change that reaches "owl": the carry the hook runs in would take its answer and meta.
        try await EngineCarryTests.change(app, "UPDATE books SET title = 'Cat Nap' WHERE id = \(bind: owl)")
        await engine.carried()
        engine.whileCarrying.withLockedValue { $0 = nil }
        #expect(replaced.withLockedValue { $0 })
        // Carried by their own chain (which reaches nothing) to the newest version, their entries kept.
        #expect(engine.memo.withLockedValue { $0.version == engine.currentVersion && $0.chain.isEmpty })
        #expect(engine.memo.withLockedValue { $0.answers[key]?.answer } == newAnswer)
        #expect(engine.searchMemo.withLockedValue { $0.version == engine.currentVersion && $0.chain.isEmpty })
        #expect(engine.searchMemo.withLockedValue { $0.meta.current[metaKey] } == newMeta)
    }
}
