@testable import App
import SQLKit
import Testing

@Suite("Console declarations checked at start-up")
struct ResourceRegistryTests {
    static func broken(_ change: (inout AdminResource) -> Void) -> AdminResource {
        var resource = AdminResource.publishers
        change(&resource)
        return resource
    }

    @Test("every registered resource's SQL fits the schema; a mistake names its resource", .app)
    func sqlChecked() async throws {
        let app = try app()
        try await ResourceRegistry.checkSQL(on: app.sql)
        let unknownColumn = Self.broken { $0 = AdminResource(slug: "publishers", table: "publishers", singular: "P", plural: "Ps",
                                                             displayName: "t.name", list: .init(columns: [AdminColumn("nmae", "Name", sortable: true)], defaultSort: "nmae"),
                                                             form: .init(fields: [])) }
        let badLookup = Self.broken { $0.list.filters = [AdminFilter(name: "x", label: "X", kind: .lookup(Lookup(table: "categories", label: "title", order: "id"))) { _ in nil }] }
        let badFilter = Self.broken { $0.list.filters = [AdminFilter(name: "x", label: "X", kind: .integer(0...1)) { "t.missing = \(bind: $0)" }] }
        for resource in [unknownColumn, badLookup, badFilter] {
            let error = await #expect(throws: ResourceRegistry.DeclarationError.self) { try await ResourceRegistry.checkSQL([resource], on: app.sql) }
            #expect(error?.description.hasPrefix("console resource publishers: its SQL does not fit the schema") == true, "\(String(describing: error))")
        }
    }

    @Test("the declarations' shape: registered ones pass; a default sort, a name twice, a strange identifier or a missing parent fail")
    func shapeChecked() throws {
        try ResourceRegistry.checkDeclarations()
        let cases: [(AdminResource, String)] = [
            (Self.broken { $0 = AdminResource(slug: "publishers", table: "publishers", singular: "P", plural: "Ps", displayName: "t.name",
                                              list: .init(columns: [AdminColumn("name", "Name")], defaultSort: "name"), form: .init(fields: [])) },
             "the default sort \"name\" is not a sortable column"),
            (Self.broken { $0.list.filters = AdminResource.bookFilters + AdminResource.bookFilters }, "the filter \"status\" is declared twice"),
            (Self.broken { $0.list.joins = [AdminJoin(table: "books; DROP TABLE books", alias: "b", on: "true")] }, "\"books; DROP TABLE books\" is not a plain SQL name"),
        ]
        for (resource, problem) in cases {
            #expect(throws: ResourceRegistry.DeclarationError.self) { try ResourceRegistry.checkDeclarations([resource]) }
            do { try ResourceRegistry.checkDeclarations([resource]) } catch { #expect("\(error)" == "console resource publishers: \(problem)") }
        }
        #expect(throws: ResourceRegistry.DeclarationError.self) { try ResourceRegistry.checkDeclarations([.rightsWindows]) }
    }
}

@Suite("Console list counts", .app)
struct ConsoleCountTests {
    @Test("a big table's filtered count is exact when quick, and the planner's estimate when it runs past its budget")
    func countBudget() async throws {
        let app = try app()
        for i in 0..<12 { try await app.makePublisher("Publisher \(i)") }
        // A filter that costs 20 ms a row, on a table the statistics say is big.
        var slow = AdminResource.publishers
        slow.list.filters = [AdminFilter(name: "slow", label: "Slow", kind: .integer(0...1)) { _ in "pg_sleep(0.02) IS NOT NULL" }]
        try await app.sql.raw("ANALYZE publishers").run()
        try await app.sql.raw("UPDATE pg_class SET reltuples = 1500000 WHERE oid = 'publishers'::regclass").run()
        let store = ResourceStore(resource: slow, parentID: nil, sql: app.sql)
        // The budgets that must not run out are generous (the app's own is 150 ms): statement_timeout is
        // wall time, and a full parallel run on two cores can stretch a quarter second many times over.
        let quick = try await store.count(ListRequest(slow, query: "q=Publisher%201"), budget: "5min")
        #expect(quick.count == 3 && quick.exact)                        // 1, 10, 11
        let unfiltered = try await store.count(ListRequest(slow, query: nil))
        #expect(unfiltered.count == 1_500_000 && !unfiltered.exact)
        let timedOut = try await store.count(ListRequest(slow, query: "slow=1"), budget: "50ms")
        #expect(!timedOut.exact && timedOut.count > 0, "\(timedOut)")
        let inBudget = try await store.count(ListRequest(slow, query: "slow=1"), budget: "5min")
        #expect(inBudget.exact && inBudget.count == 12)
        // The session is usable afterwards: the timeout was local to the count's transaction.
        #expect(try await app.sql.number("SELECT count(*) AS n FROM publishers, pg_sleep(0.1)") == 12)
    }

    @Test("the counts the database keeps (books per category, books without one) match a recount after 300 random changes")
    func keptCounts() async throws {
        let app = try app()
        var categories: [Int] = []
        for i in 0..<6 { categories.append(try await app.makeCategory("C\(i)", slug: "c\(i)")) }
        var books: [Int] = []
        for i in 0..<40 { books.append(try await app.makeBook("B\(i)", categories: i % 3 == 0 ? [] : [categories[i % 6]])) }
        var random = SystemRandomNumberGenerator()
        for step in 0..<300 {
            let book = books.randomElement(using: &random)!, category = categories.randomElement(using: &random)!
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1, 2:
                try await app.sql.raw("INSERT INTO book_categories (book_id, category_id) VALUES (\(bind: book), \(bind: category)) ON CONFLICT DO NOTHING").run()
            case 3:   // a batch, several categories at once
                try await app.sql.raw("""
                    INSERT INTO book_categories (book_id, category_id) SELECT \(bind: book), unnest(\(bind: categories)::bigint[]) ON CONFLICT DO NOTHING
                    """).run()
            case 4, 5:
                try await app.sql.raw("DELETE FROM book_categories WHERE book_id = \(bind: book)").run()
            case 6:
                try await app.sql.raw("UPDATE book_categories SET category_id = \(bind: category) WHERE id = (SELECT min(id) FROM book_categories WHERE book_id = \(bind: book)) AND NOT EXISTS (SELECT 1 FROM book_categories WHERE book_id = \(bind: book) AND category_id = \(bind: category))").run()
            case 7:
                try await app.sql.raw("DELETE FROM books WHERE id = \(bind: book)").run()
                books.removeAll { $0 == book }
                books.append(try await app.makeBook("New \(step)", categories: [category]))
            default:
                if step % 50 == 8 {
                    try await app.sql.raw("DELETE FROM categories WHERE id = \(bind: category)").run()
                    categories.removeAll { $0 == category }
                    categories.append(try await app.makeCategory("N\(step)", slug: "n\(step)"))
                }
            }
        }
        let wrongCounts = try await app.sql.number("""
            SELECT count(*) AS n FROM categories c
             WHERE COALESCE((SELECT k.n FROM category_book_counts k WHERE k.category_id = c.id), 0)
                <> (SELECT count(*) FROM book_categories bc WHERE bc.category_id = c.id)
            """)
        let wrongUncategorized = try await app.sql.number("""
            SELECT count(*) AS n FROM books b
             WHERE (b.id IN (SELECT book_id FROM uncategorized_books)) <> NOT EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id)
            """)
        #expect(wrongCounts == 0 && wrongUncategorized == 0)
        #expect(try await app.sql.number("SELECT count(*) AS n FROM uncategorized_books") > 0)
        try await app.sql.raw("TRUNCATE book_categories").run()
        #expect(try await app.sql.number("SELECT count(*) AS n FROM uncategorized_books") == books.count)
        #expect(try await app.sql.number("SELECT count(*) AS n FROM category_book_counts") == 0)
    }
}
