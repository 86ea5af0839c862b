import CatalogIndexing
import Core
import SQLKit
import Vapor

/// The catalog's SQL: a count and a page for a filter, and one book. Each list request is at
/// most three statements (typo vocabulary refresh, count, page) whatever `per_page` is.
struct CatalogQueries {
    let sql: any SQLDatabase
    /// The instant the catalog is read at (the app's clock): schedules and rights are judged then.
    let now: Date
    /// The caller's country and a child's family controls (`?child_id=`): every statement keeps
    /// to what they leave, and rights are evaluated in the country.
    var scope: CatalogScope? = nil
    /// Counts scheduled books out of the catalog now too (why a search found nothing).
    var includeScheduled = false

    private var columns: SQLQueryString { BookDTO.columns(country: scope?.country, at: now, locales: scope?.locales ?? []) }

    /// A search ready for SQL from the words' expansions (`SearchExpansion`, the engine's own):
    /// per word, its alternatives as tsqueries over `search_vector` (words and prefixes) and
    /// `stem_vector` (stem tokens), ANDed over the words — restricted to titles ("A") or titles
    /// and authors ("AB") for the field tier, and to alternatives of a level or better for the
    /// match tier, as the engine ranks.
    struct Search: Sendable {
        let expansions: [SearchExpansion]

        init(expansions: [SearchExpansion]) { self.expansions = expansions }

        /// Every word matches, by an alternative of `level` or better, in the `weights` fields.
        func condition(level: Int = 0, weights: String = "") -> SQLQueryString {
            expansions.map { expansion -> SQLQueryString in
                let chosen = expansion.alternatives.filter { $0.level >= level }
                func tsquery(_ alternatives: [SearchExpansion.Alternative]) -> String {
                    alternatives.map { "'\(SearchText.escape($0.text))'" + ($0.prefix ? ":*" : (weights.isEmpty ? "" : ":")) + weights }.joined(separator: " | ")
                }
                let words = chosen.filter { !$0.isStem }, stems = chosen.filter(\.isStem)
                var parts: [SQLQueryString] = []
                if !words.isEmpty { parts.append("b.search_vector @@ \(bind: tsquery(words))::tsquery") }
                if !stems.isEmpty { parts.append("b.stem_vector @@ \(bind: tsquery(stems))::tsquery") }
                return "(" + parts.joined(separator: " OR ") + ")"
            }.joined(separator: " AND ")
        }

        var any: SQLQueryString { condition() }

        /// The rank's first key: where every word matches (titles 2, titles or authors 1, else 0)
        /// times four, plus how well (every word literally 3, none worse than a form 2, none worse
        /// than a typo 1, else 0).
        var tier: SQLQueryString {
            """
            (((\(condition(weights: "A")))::int + (\(condition(weights: "AB")))::int) * 4
              + (\(condition(level: 1)))::int + (\(condition(level: 2)))::int + (\(condition(level: 3)))::int)
            """
        }

        /// The relevance score: how many query words the book has as whole words.
        var score: SQLQueryString {
            expansions.map { "(b.search_vector @@ \(bind: "'" + SearchText.escape($0.word) + "'")::tsquery)::int" as SQLQueryString }.joined(separator: " + ")
        }
    }

    func filter(_ parameters: CatalogParameters, search: Search?) -> SQLQueryString {
        var conditions: [SQLQueryString] = [includeScheduled ? "b.status = 'active'" : "\(BookSQL.live("b", at: now))"] + scopeConditions
        if let search {
            conditions.append(search.any)
        }
        if let age = parameters.age {
            conditions.append("b.age_min <= \(bind: age) AND b.age_max >= \(bind: age)")
        }
        if let publisher = parameters.publisher {
            conditions.append("b.publisher_id = \(bind: publisher)")
        }
        if let category = parameters.category, category.unicodeScalars.contains("\u{0}") {
            conditions.append("false")   // PostgreSQL text cannot hold NUL: no category has that name
        } else if let category = parameters.category {
            // A scalar subquery plans far better than a join on "slug = $1 OR id = $1".
            let id: SQLQueryString = Int(category).map { "COALESCE((SELECT id FROM categories WHERE slug = \(bind: category)), \(bind: $0))" }
                ?? "(SELECT id FROM categories WHERE slug = \(bind: category))"
            conditions.append("EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id AND bc.category_id = \(id))")
        }
        return conditions.joined(separator: " AND ")
    }

    /// The conditions of `scope` (CatalogScope's rules, as the engine applies them).
    private var scopeConditions: [SQLQueryString] {
        guard let scope else { return [] }
        var conditions: [SQLQueryString] = []
        if let country = scope.country { conditions.append(BookSQL.visible("b", country: "\(bind: country)")) }
        guard !scope.isEmpty else { return conditions }
        if let maxAge = scope.maxAge { conditions.append("b.age_min <= \(bind: maxAge)") }
        if let allowed = scope.allowed { conditions.append("b.id = ANY(\(bind: allowed)::bigint[])") }
        if !scope.blockedBooks.isEmpty { conditions.append("NOT (b.id = ANY(\(bind: scope.blockedBooks)::bigint[]))") }
        if !scope.blockedPublishers.isEmpty {
            conditions.append("(b.publisher_id IS NULL OR NOT (b.publisher_id = ANY(\(bind: scope.blockedPublishers)::bigint[])))")
        }
        if !scope.blockedCategories.isEmpty {
            conditions.append("NOT EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id AND bc.category_id = ANY(\(bind: scope.blockedCategories)::bigint[]))")
        }
        return conditions
    }

    func countQuery(_ parameters: CatalogParameters, search: Search?) -> SQLQueryString {
        "SELECT count(*) AS n FROM books b WHERE \(filter(parameters, search: search))"
    }

    func count(_ parameters: CatalogParameters, search: Search?) async throws -> Int {
        try await sql.number(countQuery(parameters, search: search))
    }

    /// The page of books in a total order (ties broken by id). The page's ids are chosen first
    /// so the per-book subqueries run for the page only, not for the rows OFFSET skips.
    func page(_ parameters: CatalogParameters, search: Search?) async throws -> [BookDTO] {
        try await sql.raw(pageQuery(parameters, search: search)).all().map(BookDTO.init(row:))
    }

    func pageQuery(_ parameters: CatalogParameters, search: Search?) -> SQLQueryString {
        let keys: SQLQueryString, order: String
        switch (parameters.sort, search) {
        case (.relevance, let search?):
            keys = "b.id, \(search.tier) AS tier, (\(search.score)) AS rank"
            order = "tier DESC, rank DESC, id ASC"
        case (.newest, _):
            keys = "b.id, b.created_at"
            order = "created_at DESC, id DESC"
        default:
            keys = "b.id, lower(b.title) COLLATE \"C\" AS sort_title"
            order = "sort_title ASC, id ASC"
        }
        let page = parameters.page
        return """
            SELECT \(columns)
              FROM (SELECT \(keys) FROM books b WHERE \(filter(parameters, search: search))
                     ORDER BY \(unsafeRaw: order) LIMIT \(bind: page.perPage) OFFSET \(bind: page.offset)) AS pg
              JOIN books b ON b.id = pg.id
              \(BookDTO.joins)
             ORDER BY \(unsafeRaw: qualified(order, with: "pg"))
            """
    }

    /// Count and page in one statement, for searches: one scan of the matches feeds both.
    /// Returns the total and the page (empty past the end).
    func searchPage(_ parameters: CatalogParameters, search: Search) async throws -> (total: Int, books: [BookDTO]) {
        let rows = try await sql.raw(searchPageQuery(parameters, search: search)).all()
        let keys = try rows.map { try $0.decode(model: SearchKey.self, keyDecodingStrategy: .convertFromSnakeCase) }
        let books = try zip(rows, keys).filter { $0.1.id != nil }.map { try BookDTO(row: $0.0) }
        return (keys.first?.totalCount ?? 0, books)
    }

    /// What a row of `searchPageQuery` holds beside the book: the total, and the book's id (null
    /// on the one row past the end of the matches).
    private struct SearchKey: Decodable { let totalCount: Int; let id: Int? }

    func searchPageQuery(_ parameters: CatalogParameters, search: Search) -> SQLQueryString {
        let page = parameters.page
        let keys: String, order: String
        switch parameters.sort {
        case .newest: (keys, order) = ("b.created_at", "created_at DESC, id DESC")
        case .title: (keys, order) = ("lower(b.title) COLLATE \"C\" AS sort_title", "sort_title ASC, id ASC")
        case .relevance: (keys, order) = ("", "tier DESC, rank DESC, id ASC")
        }
        let rankKeys: SQLQueryString = parameters.sort == .relevance
            ? ", \(search.tier) AS tier, (\(search.score)) AS rank" : SQLQueryString(keys.isEmpty ? "" : ", " + keys)
        return """
            WITH matched AS MATERIALIZED (
                SELECT b.id\(rankKeys) FROM books b WHERE \(filter(parameters, search: search))
            ), pg AS (
                SELECT * FROM matched ORDER BY \(unsafeRaw: order) LIMIT \(bind: page.perPage) OFFSET \(bind: page.offset)
            )
            SELECT (SELECT count(*) FROM matched) AS total_count, \(columns)
              FROM pg JOIN books b ON b.id = pg.id \(BookDTO.joins)
             RIGHT JOIN (SELECT 1) AS always ON true
             ORDER BY \(unsafeRaw: qualified(order, with: "pg"))
            """
    }

    /// `meta.facets`: per category (each instead of the category filter) and per age band (each
    /// instead of the age filter), the count the other filters and the search give.
    func facets(_ parameters: CatalogParameters, search: Search?) async throws -> FacetsDTO {
        var noCategory = parameters
        noCategory.category = nil
        var noAge = parameters
        noAge.age = nil
        let categories = try await sql.raw("""
            SELECT c.id, c.slug, (SELECT count(*) FROM books b WHERE \(filter(noCategory, search: search))
                                    AND EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id AND bc.category_id = c.id)) AS n
              FROM categories c ORDER BY c.display_order, c.name, c.id
            """).all(decoding: CategoryCount.self).map { FacetsDTO.CategoryCount(id: $0.id, slug: $0.slug, count: $0.n) }
        let bands = CatalogIndex.ageBands
        let counts = bands.map { "count(*) FILTER (WHERE b.age_min <= \(bind: $0.age) AND b.age_max >= \(bind: $0.age))" as SQLQueryString }
        let row = try await sql.raw("SELECT ARRAY[\(counts.joined(separator: ", "))] AS counts FROM books b WHERE \(filter(noAge, search: search))")
            .first(decoding: AgeCounts.self)!
        let ageBands = zip(bands, row.counts).map { FacetsDTO.AgeBand(band: $0.0.label, age: $0.0.age, count: $0.1) }
        return FacetsDTO(categories: categories, ageBands: ageBands)
    }

    /// A category's facet row; the age bands' counts, in `CatalogIndex.ageBands`' order.
    private struct CategoryCount: Decodable { let id: Int; let slug: String; let n: Int }
    private struct AgeCounts: Decodable { let counts: [Int] }

    /// One active book (that the scope leaves visible), or nil.
    func book(id: Int) async throws -> BookDTO? {
        let conditions = (["b.id = \(bind: id)", "\(BookSQL.live("b", at: now))"] + scopeConditions).joined(separator: " AND ")
        return try await sql.raw("""
            SELECT \(columns) FROM books b \(BookDTO.joins) WHERE \(conditions)
            """).first().map(BookDTO.init(row:))
    }

    /// `ORDER BY` keys of the inner query, named through its alias.
    /// Every category, in the picker's order.
    func categories() async throws -> [CategoryDTO] {
        try await sql.raw("""
            SELECT id, \(BookSQL.categoryName(locales: scope?.locales ?? [])) AS name, slug, icon_name, display_order
              FROM categories c ORDER BY display_order, c.name, id
            """).all(decoding: CategoryDTO.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    private func qualified(_ order: String, with alias: String) -> String {
        order.split(separator: ",").map { "\(alias)." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }
}
