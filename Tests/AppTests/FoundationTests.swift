@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

@Suite("Schema, migrations and seeds")
struct FoundationTests {
    @Test("category name and slug uniqueness surface as typed constraint violations", .app)
    func categoryUniqueness() async throws {
        let app = try app()
        // given
        try await app.makeCategory("Adventure", slug: "adventure")
        // when / then: same slug
        let slugError = await #expect(throws: (any Error).self) {
            try await app.makeCategory("Other", slug: "adventure")
        }
        let slug = try #require(slugError.flatMap(ConstraintViolation.init))
        #expect(slug.kind == .unique && slug.constraint == "categories_slug_key")
        // same name, differently cased
        let nameError = await #expect(throws: (any Error).self) {
            try await app.makeCategory("ADVENTURE", slug: "adventure-2")
        }
        let name = try #require(nameError.flatMap(ConstraintViolation.init))
        #expect(name.kind == .unique && name.constraint == "categories_name_key")
    }

    @Test("check constraints guard ages, statuses, slugs and rights ranges", .app)
    func checks() async throws {
        let app = try app()
        let book = try await app.makeBook("A Book")
        let attempts: [(SQLQueryString, String)] = [
            ("UPDATE books SET age_min = 9, age_max = 3 WHERE id = \(bind: book)", "books_age_range"),
            ("UPDATE books SET age_max = 19 WHERE id = \(bind: book)", "books_age_range"),
            ("UPDATE books SET status = 'gone' WHERE id = \(bind: book)", "books_status_check"),
            ("INSERT INTO categories (name, slug) VALUES ('X', 'Not A Slug')", "categories_slug_format"),
            ("INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES (\(bind: book), now(), now() - interval '1 day')",
             "rights_windows_range_check"),
            ("UPDATE video_assets SET status = 'done' WHERE book_id = \(bind: book)", "video_assets_status_check"),
        ]
        for (statement, constraint) in attempts {
            let error = await #expect(throws: (any Error).self) { try await app.sql.raw(statement).run() }
            let violation = try #require(error.flatMap(ConstraintViolation.init))
            #expect(violation.kind == .check && violation.constraint == constraint)
        }
    }

    @Test("book_categories is unique per pair and cascades from books and categories", .app)
    func bookCategories() async throws {
        let app = try app()
        // given
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime")
        let animals = try await app.makeCategory("Animals", slug: "animals")
        let book = try await app.makeBook("Owl Moon", categories: [bedtime, animals])
        let other = try await app.makeBook("Fox Tales", categories: [bedtime])
        // when: the same pair again
        let error = await #expect(throws: (any Error).self) {
            try await app.sql.raw("INSERT INTO book_categories (book_id, category_id) VALUES (\(bind: book), \(bind: bedtime))").run()
        }
        #expect(error.flatMap(ConstraintViolation.init)?.constraint == "book_categories_book_category_key")
        // when: a category and a book are deleted
        try await app.sql.raw("DELETE FROM categories WHERE id = \(bind: bedtime)").run()
        try await app.sql.raw("DELETE FROM books WHERE id = \(bind: book)").run()
        // then
        let rows = try await app.sql.raw("SELECT book_id, category_id FROM book_categories").all()
        #expect(rows.isEmpty)
        let remaining = try await app.sql.raw("SELECT count(*) AS n FROM books WHERE id = \(bind: other)").first()!
        #expect(try remaining.decode(column: "n", as: Int.self) == 1)
    }

    @Test("migrate twice: the second run applies nothing and changes nothing")
    func migrateTwice() async throws {
        do { try await migrateTwiceChecks() } catch {
            // PSQLError's description hides the server's message; the reflection names it.
            Issue.record("\(String(reflecting: error))")
        }
    }

    private func migrateTwiceChecks() async throws {
        let name = try await TestDatabase.createEmpty()
        defer { Task { try? await TestDatabase.drop(name) } }
        let migrator = Migrator(directory: TestDatabase.projectDirectory + "migrations")
        let files = try migrator.files()
        let (first, second, recorded) = try await DirectConnection.open(url: TestDatabase.url(for: name), logger: TestDatabase.logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            let first = try await migrator.migrate(on: connection, logger: TestDatabase.logger)
            let second = try await migrator.migrate(on: connection, logger: TestDatabase.logger)
            var recorded = 0
            for try await count in try await connection.query("SELECT count(*) FROM schema_migrations", logger: TestDatabase.logger).decode(Int.self) {
                recorded = count
            }
            return (first, second, recorded)
        }
        #expect(first == files.map(\.version))
        #expect(second.isEmpty)
        #expect(recorded == files.count)
        try await TestDatabase.drop(name)
    }

    @Test("two instances migrating at once do not collide: each file is applied exactly once")
    func concurrentMigrate() async throws {
        let name = try await TestDatabase.createEmpty()
        let migrator = Migrator(directory: TestDatabase.projectDirectory + "migrations")
        let url = TestDatabase.url(for: name)
        let results = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try await DirectConnection.open(url: url, logger: TestDatabase.logger, connectTimeout: TestDatabase.connectTimeout) { connection in
                        try await migrator.migrate(on: connection, logger: TestDatabase.logger)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let applied = results.flatMap { $0 }
        #expect(applied.sorted() == (try migrator.files().map(\.version)).sorted())
        #expect(results.filter { !$0.isEmpty }.count == 1)
        try await TestDatabase.drop(name)
    }

    @Test("an edited migration is refused")
    func editedMigration() async throws {
        let name = try await TestDatabase.createEmpty()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "CREATE TABLE t (id int);".write(toFile: folder + "/0001_t.sql", atomically: true, encoding: .utf8)
        try await DirectConnection.open(url: TestDatabase.url(for: name), logger: TestDatabase.logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            try await Migrator(directory: folder).migrate(on: connection, logger: TestDatabase.logger)
            try "CREATE TABLE t (id bigint);".write(toFile: folder + "/0001_t.sql", atomically: true, encoding: .utf8)
            await #expect(throws: Migrator.Failure.edited("0001")) {
                try await Migrator(directory: folder).migrate(on: connection, logger: TestDatabase.logger)
            }
        }
        try await TestDatabase.drop(name)
    }

    @Test("a failing migration leaves nothing behind")
    func failingMigrationRollsBack() async throws {
        let name = try await TestDatabase.createEmpty()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "CREATE TABLE half (id int); SELECT no_such_function();".write(toFile: folder + "/0001_bad.sql", atomically: true, encoding: .utf8)
        try await DirectConnection.open(url: TestDatabase.url(for: name), logger: TestDatabase.logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            await #expect(throws: (any Error).self) {
                try await Migrator(directory: folder).migrate(on: connection, logger: TestDatabase.logger)
            }
            var tables = -1
            for try await n in try await connection.query("SELECT count(*) FROM pg_tables WHERE tablename = 'half'", logger: TestDatabase.logger).decode(Int.self) {
                tables = n
            }
            #expect(tables == 0)
        }
        try await TestDatabase.drop(name)
    }

    @Test("seed categories twice leaves exactly the eight categories and reports no creation", .app)
    func seedCategoriesTwice() async throws {
        let app = try app()
        let seeds = try CategorySeeder.load(directory: TestDatabase.projectDirectory + "seeds")
        let first = try await CategorySeeder.upsert(seeds, on: app.sql)
        let second = try await CategorySeeder.upsert(seeds, on: app.sql)
        #expect(first.created.count == 8)
        #expect(second.created.isEmpty && second.updated.isEmpty && second.unchanged == 8)
        #expect(second.summary.contains("nothing created"))
        let rows = try await app.sql.raw("SELECT name, slug, icon_name FROM categories ORDER BY display_order").all()
        #expect(try rows.map { try $0.decode(column: "name", as: String.self) } == [
            "Bedtime Stories", "Adventure", "Animals & Nature", "Fairy Tales",
            "Learning & ABCs", "Rhymes & Songs", "Family & Friends", "Holidays & Seasons"])
        #expect(try rows.allSatisfy { try $0.decode(column: "icon_name", as: String?.self) != nil })
        // a changed seed updates in place
        try await app.sql.raw("UPDATE categories SET display_order = 999 WHERE slug = 'adventure'").run()
        let third = try await CategorySeeder.upsert(seeds, on: app.sql)
        #expect(third.updated == ["adventure"] && third.created.isEmpty)
        // Names in fr, es and de: filled where missing, a staff edit kept (docs/localization.md).
        #expect(first.translated == 24 && second.translated == 0)
        try await app.sql.raw("UPDATE category_translations SET name = 'Contes du soir' WHERE locale = 'fr' AND category_id = (SELECT id FROM categories WHERE slug = 'bedtime-stories')").run()
        try await app.sql.raw("DELETE FROM category_translations WHERE locale = 'de' AND category_id = (SELECT id FROM categories WHERE slug = 'adventure')").run()
        let fourth = try await CategorySeeder.upsert(seeds, on: app.sql)
        #expect(fourth.translated == 1 && fourth.summary.contains("1 translated names added"))
        let names = try await app.sql.raw("""
            SELECT string_agg(t.locale || '=' || t.name, ',' ORDER BY t.locale) AS names FROM category_translations t JOIN categories c ON c.id = t.category_id
             WHERE c.slug IN ('bedtime-stories', 'adventure') GROUP BY c.slug ORDER BY c.slug
            """).all().map { try $0.decode(column: "names", as: String.self) }
        #expect(names == ["de=Abenteuer,es=Aventura,fr=Aventure", "de=Gutenachtgeschichten,es=Cuentos para dormir,fr=Contes du soir"])
    }

    /// A digest of everything the demo seed writes, with times relative to its reference day.
    static func demoDigest(_ sql: any SQLDatabase) async throws -> String {
        try await sql.raw("""
            SELECT md5(string_agg(line, E'\\n' ORDER BY line)) AS digest FROM (
                SELECT concat_ws('|', 'b', b.id, b.title, b.author, b.description, b.age_min, b.age_max, b.language,
                                 b.cover_image_url, p.name, b.status, b.created_at) AS line
                  FROM books b LEFT JOIN publishers p ON p.id = b.publisher_id
                UNION ALL SELECT concat_ws('|', 'c', bc.book_id, c.slug) FROM book_categories bc JOIN categories c ON c.id = bc.category_id
                UNION ALL SELECT concat_ws('|', 't', book_id, locale, title, description) FROM book_translations
                UNION ALL SELECT concat_ws('|', 'v', book_id, status, duration_seconds, has_captions) FROM video_assets
                UNION ALL SELECT concat_ws('|', 'r', book_id, starts_at, ends_at) FROM rights_windows
                UNION ALL SELECT concat_ws('|', 'p', email) FROM parents
                UNION ALL SELECT concat_ws('|', 'k', p.email, k.name) FROM children k JOIN parents p ON p.id = k.added_by
                UNION ALL SELECT concat_ws('|', 'l', p.email, k.name, le.book_id, le.added_at, le.last_played_at)
                  FROM library_entries le JOIN children k ON k.id = le.child_id JOIN parents p ON p.id = k.added_by
            ) lines
            """).first()!.decode(column: "digest", as: String.self)
    }

    @Test("the demo seed is deterministic for a given N and reference day, and covers every state")
    func demoSeedDeterministic() async throws {
        let reference = ISO8601DateFormatter().date(from: "2026-06-01T00:00:00Z")!
        var digests: [String] = []
        for _ in 0..<2 {
            try await withApp { app in
                let seeder = DemoSeeder(books: 400, reference: reference, seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                        hashPassword: { try $0.hashedForTests() })
                let outcome = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
                guard case .seeded(let credentials) = outcome else { throw TestFailure("seed skipped") }
                #expect(credentials.contains("admin@storytime.test") && credentials.contains("parent1@storytime.test"))
                digests.append(try await Self.demoDigest(app.sql))
                // every state is present
                let states = try await app.sql.raw("""
                    SELECT (SELECT count(*) FROM books) AS books,
                           (SELECT count(DISTINCT status) FROM books) AS book_states,
                           (SELECT count(DISTINCT status) FROM video_assets) AS video_states,
                           (SELECT count(*) FROM rights_windows WHERE starts_at > \(bind: reference)) AS upcoming,
                           (SELECT count(*) FROM rights_windows WHERE ends_at <= \(bind: reference)) AS expired,
                           (SELECT count(*) FROM rights_windows WHERE starts_at <= \(bind: reference)
                               AND (ends_at IS NULL OR ends_at > \(bind: reference))) AS active,
                           (SELECT count(*) FROM children) AS children,
                           (SELECT count(*) FROM library_entries) AS entries,
                           (SELECT count(*) FROM staff_users) AS staff,
                           (SELECT count(*) FROM book_translations WHERE locale = 'fr') AS fr,
                           (SELECT count(*) FROM book_translations WHERE locale = 'es' AND description IS NOT NULL) AS es
                    """).first()!
                // A third of the books have French and Spanish titles (most with a description).
                #expect((100...140).contains(try states.decode(column: "fr", as: Int.self)))
                #expect((70...140).contains(try states.decode(column: "es", as: Int.self)))
                #expect(try states.decode(column: "books", as: Int.self) == 400)
                #expect(try states.decode(column: "book_states", as: Int.self) == 3)
                #expect(try states.decode(column: "video_states", as: Int.self) == 4)
                for column in ["upcoming", "expired", "active", "children", "entries"] {
                    #expect(try states.decode(column: column, as: Int.self) > 0, "no \(column)")
                }
                #expect(try states.decode(column: "staff", as: Int.self) == 3)
                // a second run on a seeded catalog is refused, or skipped with --if-empty
                await #expect(throws: (any Error).self) { _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in } }
                let again = try await seeder.run(on: app.sql, skipIfNotEmpty: true) { _ in }
                guard case .skipped(let books) = again else { throw TestFailure("second seed did not skip") }
                #expect(books == 400)
            }
        }
        #expect(digests.count == 2 && digests[0] == digests[1])
    }

    @Test("public/ is served at its own names only: the OpenAPI document and console assets, not API paths", .app)
    func publicFiles() async throws {
        let app = try app()
        let document = try await app.get("/openapi.json")
        #expect(document.status == .ok)
        #expect(document.headers.first(name: "X-Content-Type-Options") == "nosniff")
        #expect(try JSONSerialization.jsonObject(with: Data(document.body.readableBytesView)) is [String: Any])
        #expect(try await app.get("/admin.css").status == .ok)
        #expect(try await app.get("/openapi%2Ejson").status == .ok)
        for path in ["/api/v1/openapi.json", "/nope.css", "/public/openapi.json", "/openapi.json/../admin.css"] {
            #expect(try await app.get(path).status != .ok, "\(path)")
        }
    }

    @Test("GET /healthz answers 200 while the database answers", .app)
    func healthy() async throws {
        let app = try app()
        let response = try await app.get("/healthz")
        #expect(response.status == .ok)
        #expect(response.body.string.contains("ok"))
    }

    @Test("GET /healthz answers 503 when the database is gone")
    func unhealthy() async throws {
        let database = try await TestDatabase.create()
        let app = try await Application.make(.testing)
        app.directory = DirectoryConfiguration(workingDirectory: TestDatabase.projectDirectory)
        try await configure(app, settings: testSettings(database: database))
        // the database disappears under the running app
        try await TestDatabase.drop(database)
        let response = try await app.get("/healthz")
        #expect(response.status == .serviceUnavailable)
        try await app.asyncShutdown()
    }

    @Test("accounts: duplicate emails are refused with a clear reason, parent and children land together", .app)
    func accounts() async throws {
        let app = try app()
        let id = try await Accounts.createParent(email: "Pat@Example.com", passwordHash: "x", children: ["Ada", "Ben"], on: app.sql)
        let names = try await app.sql.raw("SELECT name FROM children WHERE added_by = \(bind: id) ORDER BY id").all()
            .map { try $0.decode(column: "name", as: String.self) }
        #expect(names == ["Ada", "Ben"])
        let error = await #expect(throws: Abort.self) {
            _ = try await Accounts.createParent(email: "pat@example.com", passwordHash: "x", children: ["Cy"], on: app.sql)
        }
        #expect(error?.reason.contains("already exists") == true)
        let total = try await app.sql.raw("SELECT count(*) AS n FROM children").first()!.decode(column: "n", as: Int.self)
        #expect(total == 2)
        _ = try await Accounts.createStaff(email: "ed@example.com", passwordHash: "x", role: .editor, on: app.sql)
        await #expect(throws: Abort.self) {
            _ = try await Accounts.createStaff(email: "ED@example.com", passwordHash: "x", role: .viewer, on: app.sql)
        }
    }
}
