@testable import App
import CatalogIndexing
import Core
import Foundation
import NIOConcurrencyHelpers
import Testing
import Vapor

/// The answers and the search memo keep chains of their own, which may start from different
/// versions (one of them emptied or moved on alone). A page's meta is made from its answer at
/// the meta's own version: it may be vouched for by the answers' memo only when that memo is at
/// the same version — an older answer may not be the one the meta was made from. Both places
/// that vouch are held to it here, deterministically: the answers' memo is put one link behind
/// the search memo by hand (being carried to the search memo's version through a change that
/// reaches nothing), then a change that reaches neither the search nor its page is carried.
/// With one base the kept meta — marked, to be told from a computed one — is served during the
/// carry and kept after it; with two it is computed when asked during the carry, and the carry
/// drops it.
@Suite("Engine carry: two memo bases")
struct EngineCarryBasesTests {
    @Test("one base: a kept page's meta the change cannot reach is served during the carry and kept after it", .app)
    func oneBase() async throws {
        let seen = try await Self.carry(try app(), twoBases: false, askDuring: true)
        #expect(seen.during?.marked == true && seen.during?.own == true)
        #expect(seen.after == seen.marked)
    }

    @Test("two bases (the answers' memo a version behind the search memo's): the page's meta asked during the carry is computed, not vouched for by the older answer", .app)
    func twoBasesAsked() async throws {
        let seen = try await Self.carry(try app(), twoBases: true, askDuring: true)
        #expect(seen.during?.marked == false && seen.during?.own == true)
        #expect(seen.after != nil && seen.after != seen.marked, "what was computed during the carry is kept at the new version")
    }

    @Test("two bases, nothing asked during the carry: the carry drops every kept meta, the one its change cannot reach too", .app)
    func twoBasesCarried() async throws {
        let seen = try await Self.carry(try app(), twoBases: true, askDuring: false)
        #expect(seen.during == nil)
        #expect(seen.after == nil)
    }

    /// A change that reaches neither a search for "owl" nor its page carried, the answers' memo
    /// at the search memo's version or one behind it: the kept meta (`marked`), what "owl" was
    /// served when asked during the carry (the marked meta or not; its highlights its own page's
    /// books or not) and the meta kept under its key after the carry.
    static func carry(_ app: Application, twoBases: Bool, askDuring: Bool) async throws
        -> (marked: String, during: (marked: Bool, own: Bool)?, after: String?) {
        let engine = app.appServices.catalogEngine
        for title in ["Owl Moon", "Owl Babies", "Owl Dance"] { try await app.makeBook(title) }
        let bear = try await app.makeBook("Bear Snores")
        try await engine.build(on: app.db)
        #expect(EngineCarryTests.titles(engine, "q=owl") == ["Owl Babies", "Owl Dance", "Owl Moon"])
        let base = engine.memo.withLockedValue { $0.version }
        #expect(engine.searchMemo.withLockedValue { $0.version } == base)
        let metaKey = try #require(engine.searchMemo.withLockedValue { $0.meta.current.keys.first { $0.contains("owl") } })
        let made = try #require(engine.searchMemo.withLockedValue { $0.meta.current[metaKey] })
        // (In the place of a spelling correction: the page's JSON says which meta it was given.)
        let marked = Array(#""marker":true,"#.utf8) + made
        engine.searchMemo.withLockedValue { $0.meta.current[metaKey] = marked }
        #expect(try Self.ask(engine).marked, "a kept meta is served as kept (marked)")
        if twoBases {
            let nothing = MemoCarry(lexemes: [String](), browsing: false)
            engine.memo.withLockedValue { memo in
                memo.version = base - 1
                memo.chain = [(base, nothing)]
            }
        }
        let during = NIOLockedValueBox<(marked: Bool, own: Bool)?>(nil)
        if askDuring {
            engine.whileCarrying.withLockedValue {
                $0 = {
                    guard during.withLockedValue({ $0 == nil }) else { return }
                    let seen = try? Self.ask(engine)
                    during.withLockedValue { $0 = seen ?? (marked: false, own: false) }
                }
            }
        }
        try await EngineCarryTests.change(app, "UPDATE books SET title = 'Bear Naps' WHERE id = \(bind: bear)")
        await engine.carried()
        engine.whileCarrying.withLockedValue { $0 = nil }
        #expect(engine.memo.withLockedValue { $0.chain.isEmpty && $0.version == engine.currentVersion })
        #expect(engine.searchMemo.withLockedValue { $0.chain.isEmpty && $0.version == engine.currentVersion })
        let after = engine.searchMemo.withLockedValue { $0.meta.peek(metaKey) }
        return (String(decoding: marked, as: UTF8.self), during.withLockedValue { $0 }, after.map { String(decoding: $0, as: UTF8.self) })
    }

    /// "owl" asked of the engine: whether its meta was the marked one, and whether its highlights
    /// name its page's books, in order.
    static func ask(_ engine: CatalogEngine) throws -> (marked: Bool, own: Bool) {
        let (body, _) = engine.page(try CatalogParameters(QueryParameters(query: "q=owl")), now: Date())
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
        let meta = try #require(json["meta"] as? [String: Any])
        let ids = (json["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        let highlighted = (meta["highlights"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        return (meta["marker"] as? Bool == true, ids.count == 3 && highlighted == ids)
    }
}
