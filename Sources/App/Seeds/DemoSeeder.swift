import SQLKit
import Vapor

/// A deterministic demo catalog, generated inside PostgreSQL (set-based INSERT … SELECT over
/// generate_series, never row by row): the same N and reference date give the same catalog.
/// Pseudo-random choices come from `hashint8extended(g, k)`, PostgreSQL's own stable hash.
struct DemoSeeder: Sendable {
    static let batchSize = 25_000

    let books: Int
    /// Rights windows and library activity are placed around this day (default: today, UTC).
    let reference: Date?
    let seedsDirectory: String
    let hashPassword: @Sendable (String) throws -> String

    enum Outcome: Sendable { case skipped(books: Int), seeded(credentials: String) }

    struct Words: Decodable, Sendable {
        let classics: [[String]]
        let adjectives, nouns, places, verbs, themes, names: [String]
        let firstNames, lastNames, publishers, openings, middles, endings, languages: [String]
        /// Per locale, words for translated titles and descriptions (docs/localization.md).
        let translations: [String: Phrases]?
    }
    struct Phrases: Decodable { let nouns, adjectives, patterns, descriptions: [String] }

    func run(on sql: any SQLDatabase, skipIfNotEmpty: Bool, progress: @Sendable (String) -> Void) async throws -> Outcome {
        let existing = try await sql.number("SELECT count(*) AS n FROM books")
        if existing > 0 {
            guard skipIfNotEmpty else {
                throw Abort(.conflict, reason: "the catalog already has \(existing) books; seed demo needs an empty catalog (or pass --if-empty)")
            }
            return .skipped(books: existing)
        }
        let words = try loadWords()
        let staffPassword = Self.friendlyPassword(), parentPassword = Self.friendlyPassword()
        let staffHash = try hashPassword(staffPassword), parentHash = try hashPassword(parentPassword)
        let started = ContinuousClock.now

        try await sql.raw("BEGIN").run()
        do {
            try await sql.raw("SET LOCAL jit = off").run()
            let categories = try CategorySeeder.load(directory: seedsDirectory)
            _ = try await CategorySeeder.upsert(categories, on: sql)
            try await seedPublishers(words, on: sql)
            var done = 0
            while done < books {
                let upper = min(books, done + Self.batchSize)
                try await seedBooks(from: done + 1, to: upper, words: words, on: sql)
                try await seedTranslations(from: done + 1, to: upper, words: words, on: sql)
                done = upper
                progress("  books \(done)/\(books) (\(String(format: "%.1f", started.secondsElapsed)) s)")
            }
            try await sql.raw("SELECT setval(pg_get_serial_sequence('books', 'id'), \(bind: books))").run()
            try await seedRights(classics: words.classics.count, on: sql)
            try await seedAccounts(words: words, staffHash: staffHash, parentHash: parentHash, on: sql)
            try await sql.raw("COMMIT").run()
        } catch {
            try? await sql.raw("ROLLBACK").run()
            throw error
        }
        try await sql.raw("ANALYZE").run()
        progress("  demo catalog of \(books) books ready in \(String(format: "%.1f", started.secondsElapsed)) s")
        return .seeded(credentials: """
            Demo accounts:
              console  http://127.0.0.1:8080\(AdminPath.login)   admin@storytime.test / \(staffPassword)
                       (editor@storytime.test and viewer@storytime.test share that password)
              parent   POST /api/v1/auth/token               parent1@storytime.test / \(parentPassword)

            """)
    }

    private func loadWords() throws -> Words {
        let path = seedsDirectory + "/demo.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Abort(.internalServerError, reason: "cannot read \(path)")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Words.self, from: data)
    }

    private var referenceDay: SQLQueryString {
        if let reference { return "\(bind: reference)::timestamptz" }
        return "date_trunc('day', now())"
    }

    private func seedPublishers(_ words: Words, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO publishers (name)
            SELECT name FROM unnest(\(bind: words.publishers)::text[]) WITH ORDINALITY AS t(name, n) ORDER BY n
            ON CONFLICT (lower(name)) DO NOTHING
            """).run()
    }

    private func seedBooks(from lower: Int, to upper: Int, words: Words, on sql: any SQLDatabase) async throws {
        let h: (Int) -> SQLQueryString = { k in "(hashint8extended(g, \(literal: k)) & 2147483647)::int" }
        try await sql.raw("""
            WITH w AS (
                SELECT \(bind: words.classics.map { $0[0] })::text[] AS ctitle, \(bind: words.classics.map { $0[1] })::text[] AS cauthor,
                       \(bind: words.classics.map { $0[2] })::text[] AS cdesc, \(bind: words.classics.map { $0.count > 3 ? $0[3] : "en" })::text[] AS clang,
                       \(bind: words.adjectives)::text[] AS adj, \(bind: words.nouns)::text[] AS noun,
                       \(bind: words.places)::text[] AS place, \(bind: words.verbs)::text[] AS verb,
                       \(bind: words.themes)::text[] AS theme, \(bind: words.names)::text[] AS name,
                       \(bind: words.firstNames)::text[] AS first, \(bind: words.lastNames)::text[] AS last,
                       \(bind: words.openings)::text[] AS opening, \(bind: words.middles)::text[] AS middle,
                       \(bind: words.endings)::text[] AS ending, \(bind: words.languages)::text[] AS lang,
                       (SELECT array_agg(p.id ORDER BY t.n) FROM unnest(\(bind: words.publishers)::text[]) WITH ORDINALITY AS t(name, n)
                          JOIN publishers p ON lower(p.name) = lower(t.name)) AS pubs
            ), picks AS (
                SELECT g,
                       w.adj[1 + \(h(1)) % cardinality(w.adj)] AS a1, w.noun[1 + \(h(2)) % cardinality(w.noun)] AS n1,
                       w.adj[1 + \(h(3)) % cardinality(w.adj)] AS a2, w.noun[1 + \(h(4)) % cardinality(w.noun)] AS n2,
                       w.place[1 + \(h(5)) % cardinality(w.place)] AS pl, w.verb[1 + \(h(6)) % cardinality(w.verb)] AS vb,
                       w.theme[1 + \(h(7)) % cardinality(w.theme)] AS th, w.name[1 + \(h(8)) % cardinality(w.name)] AS nm,
                       \(h(9)) AS h9, \(h(10)) AS h10, \(h(11)) AS h11, \(h(12)) AS h12, \(h(13)) AS h13, \(h(14)) AS h14
                  FROM generate_series(\(bind: lower)::int, \(bind: upper)::int) AS g CROSS JOIN w
            ), inserted AS (
                INSERT INTO books (id, title, author, description, age_min, age_max, language, cover_image_url,
                                   publisher_id, status, created_at, updated_at)
                SELECT g,
                       CASE WHEN g <= cardinality(w.ctitle) THEN w.ctitle[g]
                            ELSE CASE h9 % 6
                                WHEN 0 THEN 'The ' || a1 || ' ' || n1
                                WHEN 1 THEN nm || ' and the ' || a1 || ' ' || n1
                                WHEN 2 THEN th || ' ' || a1 || ' ' || n1
                                WHEN 3 THEN 'The ' || a1 || ' ' || n1 || ' ' || vb || ' ' || pl
                                WHEN 4 THEN nm || ' ' || vb || ' ' || pl
                                ELSE a1 || ' ' || n1 || ' and ' || a2 || ' ' || n2 END END,
                       CASE WHEN g <= cardinality(w.ctitle) THEN w.cauthor[g]
                            ELSE w.first[1 + h10 % cardinality(w.first)] || ' ' || w.last[1 + h11 % cardinality(w.last)] END,
                       CASE WHEN g <= cardinality(w.ctitle) THEN w.cdesc[g]
                            ELSE w.opening[1 + h12 % cardinality(w.opening)] || ' a ' || lower(a2) || ' ' || lower(n1) || ' '
                                 || w.middle[1 + h13 % cardinality(w.middle)] || '. ' || w.ending[1 + h14 % cardinality(w.ending)] END,
                       h10 % 9,
                       least(18, h10 % 9 + 1 + h11 % 5),
                       CASE WHEN g <= cardinality(w.ctitle) THEN w.clang[g]
                            ELSE w.lang[1 + h12 % cardinality(w.lang)] END,
                       'https://covers.storytime.example/books/' || g || '.jpg',
                       CASE WHEN h13 % 20 = 0 AND g > cardinality(w.ctitle) THEN NULL ELSE w.pubs[1 + h13 % cardinality(w.pubs)] END,
                       CASE WHEN g <= cardinality(w.ctitle) OR h14 % 100 < 88 THEN 'active'
                            WHEN h14 % 100 < 95 THEN 'draft' ELSE 'archived' END,
                       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 minute',
                       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 minute'
                  FROM picks CROSS JOIN w
                RETURNING id
            ), categorised AS (
                INSERT INTO book_categories (book_id, category_id, created_at)
                SELECT DISTINCT i.id, c.ids[1 + (hashint8extended(i.id, 20 + k) & 2147483647)::int % cardinality(c.ids)],
                       timestamptz '2024-01-01 00:00:00+00' + i.id * interval '1 minute'
                  FROM inserted i
                 CROSS JOIN (SELECT array_agg(id ORDER BY display_order, id) AS ids FROM categories) c
                 CROSS JOIN LATERAL generate_series(1, 1 + (hashint8extended(i.id, 19) & 2147483647)::int % 3) AS k
            )
            INSERT INTO video_assets (book_id, status, duration_seconds, has_captions, created_at, updated_at)
            SELECT i.id, s.status,
                   CASE WHEN s.status <> 'ready' THEN NULL
                        WHEN v % 50 = 0 THEN 3600 + v % 1800 ELSE 90 + v % 1500 END,
                   v % 3 <> 0,
                   timestamptz '2024-01-01 00:00:00+00' + i.id * interval '1 minute',
                   timestamptz '2024-01-01 00:00:00+00' + i.id * interval '1 minute'
              FROM inserted i
             CROSS JOIN LATERAL (SELECT (hashint8extended(i.id, 30) & 2147483647)::int AS v) hv
             CROSS JOIN LATERAL (SELECT CASE WHEN v % 100 < 80 OR i.id <= \(bind: words.classics.count) THEN 'ready' WHEN v % 100 < 88 THEN 'processing'
                                             WHEN v % 100 < 95 THEN 'pending' ELSE 'failed' END AS status) s
             WHERE i.id <= \(bind: words.classics.count) OR v % 33 <> 0
            """).run()
    }

    /// Active, upcoming, expired and soon-ending windows, placed around the reference day; the
    /// classics (the first books) always have open rights.
    private func seedRights(classics: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            WITH r AS (
                SELECT b.id, (hashint8extended(b.id, 40) & 2147483647)::int AS v, \(referenceDay) AS ref FROM books b
            )
            INSERT INTO rights_windows (book_id, starts_at, ends_at)
            SELECT id, ref + (1 + v % 60) * interval '1 day', ref + (366 + v % 60) * interval '1 day'
              FROM r WHERE v % 20 = 0 AND id > \(bind: classics)
            UNION ALL
            SELECT id, ref - 400 * interval '1 day', ref - (1 + v % 60) * interval '1 day'
              FROM r WHERE v % 20 IN (1, 2) AND id > \(bind: classics)
            UNION ALL
            SELECT id, ref - (1 + v % 300) * interval '1 day', ref + (1 + v % 30) * interval '1 day'
              FROM r WHERE v % 20 = 3 AND id > \(bind: classics)
            UNION ALL
            SELECT id, ref - (1 + v % 700) * interval '1 day', NULL
              FROM r WHERE v % 20 NOT IN (0, 1, 3) OR id <= \(bind: classics)
            ORDER BY 1, 2
            """).run()
    }

    private func seedAccounts(words: Words, staffHash: String, parentHash: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO staff_users (email, password_hash, role)
            VALUES ('admin@storytime.test', \(bind: staffHash), 'admin'),
                   ('editor@storytime.test', \(bind: staffHash), 'editor'),
                   ('viewer@storytime.test', \(bind: staffHash), 'viewer')
            ON CONFLICT (lower(email)) DO UPDATE SET password_hash = EXCLUDED.password_hash, role = EXCLUDED.role
            """).run()
        let parents = max(3, min(2_000, books / 100))
        // The accounts first: each founds its family as the statement ends (migrations/0038).
        struct NewParent: Decodable { let id: Int; let inserted: Bool }
        let created = try await sql.raw("""
            INSERT INTO parents (email, password_hash, email_verified_at)
            SELECT 'parent' || p || '@storytime.test', \(bind: parentHash), now() FROM generate_series(1, \(bind: parents)) AS p
            ON CONFLICT (lower(email)) DO UPDATE SET password_hash = EXCLUDED.password_hash
            RETURNING id, (xmax = 0) AS inserted
            """).all(decoding: NewParent.self).filter(\.inserted).map(\.id)
        try await sql.raw("""
            WITH new_parents AS (
                SELECT m.account_id AS id, m.family_id FROM family_members m WHERE m.account_id = ANY(\(bind: created))
            ), kids AS (
                INSERT INTO children (family_id, added_by, name)
                SELECT np.family_id, np.id, (\(bind: words.names)::text[])[1 + (hashint8extended(np.id, 50 + k) & 2147483647)::int % \(bind: words.names.count)]
                  FROM new_parents np
                 CROSS JOIN LATERAL generate_series(1, 1 + (hashint8extended(np.id, 49) & 2147483647)::int % 3) AS k
                 ORDER BY np.id, k
                RETURNING id
            ), picks AS (
                SELECT DISTINCT ON (kids.id, b.id) kids.id AS child_id, b.id AS book_id,
                       (hashint8extended(kids.id * 100 + k, 61) & 2147483647)::int AS v
                  FROM kids
                 CROSS JOIN LATERAL generate_series(1, 3 + (hashint8extended(kids.id, 60) & 2147483647)::int % 10) AS k
                  JOIN books b ON b.id = 1 + (hashint8extended(kids.id * 100 + k, 62) & 2147483647)::int % \(bind: books)
                 WHERE b.status = 'active'
            ), entries AS (
                INSERT INTO library_entries (child_id, book_id, added_at, last_played_at)
                SELECT child_id, book_id,
                       \(referenceDay) - (v % 90) * interval '1 day' - (v % 1440) * interval '1 minute',
                       CASE WHEN v % 2 = 0 THEN NULL
                            ELSE \(referenceDay) - (v % 90) * interval '1 day' + (v % 1440) * interval '1 minute' END
                  FROM picks
                RETURNING child_id, book_id, last_played_at
            )
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
            SELECT child_id, book_id, 60, true, last_played_at FROM entries WHERE last_played_at IS NOT NULL
            """).run()
    }

    static func friendlyPassword() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        return String((0..<16).map { _ in alphabet.randomElement()! })
    }
}
