import SQLKit

extension DemoSeeder {
    /// A third of the books get a title in each locale of `demo.json`'s translations (fr, es;
    /// not into a book's own language), most with a description too — deterministic per id.
    func seedTranslations(from lower: Int, to upper: Int, words: Words, on sql: any SQLDatabase) async throws {
        for (n, (locale, phrases)) in (words.translations ?? [:]).sorted(by: { $0.key < $1.key }).enumerated() {
            let h: (Int) -> SQLQueryString = { k in "(hashint8extended(b.id, \(literal: 40 + 8 * n + k)) & 2147483647)::int" }
            try await sql.raw("""
                INSERT INTO book_translations (book_id, locale, title, description)
                SELECT b.id, \(bind: locale),
                       replace(replace(w.patterns[1 + \(h(1)) % cardinality(w.patterns)], '{n}', w.nouns[1 + \(h(2)) % cardinality(w.nouns)]),
                               '{a}', lower(w.adjectives[1 + \(h(3)) % cardinality(w.adjectives)])),
                       CASE WHEN \(h(4)) % 5 <> 0 THEN w.descriptions[1 + \(h(5)) % cardinality(w.descriptions)] END
                  FROM books b
                 CROSS JOIN (SELECT \(bind: phrases.nouns)::text[] AS nouns, \(bind: phrases.adjectives)::text[] AS adjectives,
                                    \(bind: phrases.patterns)::text[] AS patterns, \(bind: phrases.descriptions)::text[] AS descriptions) w
                 WHERE b.id BETWEEN \(bind: lower) AND \(bind: upper) AND b.language <> \(bind: locale)
                   AND (hashint8extended(b.id, 40) & 2147483647)::int % 3 = 0
                """).run()
        }
    }
}
