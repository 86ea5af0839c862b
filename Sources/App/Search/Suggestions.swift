import CatalogIndexing
import Core
import SQLKit
import Vapor

/// `GET /api/v1/catalog/suggest?q=`: up to eight completions for as-you-type, scoped exactly like
/// the catalog (country, schedule, a child's controls) — a hidden title is never suggested, and
/// a word is offered only when a book of that catalog has it. Words first (at most four), then
/// the best matching titles.
struct SuggestionDTO: Content, Equatable {
    let kind: String
    let text: String
    /// The book a title suggestion opens; null for a word.
    @ExplicitNull var bookId: Int?

    /// The list from the words and titles found, `prefix` being the query's words before the last.
    static func list(words: [(text: String, books: Int)], titles: [(id: Int, title: String)], before: [String]) -> [SuggestionDTO] {
        let lead = before.isEmpty ? "" : before.joined(separator: " ") + " "
        let completed = words.prefix(SuggestRules.maxWords).map { SuggestionDTO(kind: "word", text: lead + $0.text, bookId: nil) }
        let room = SuggestRules.maxSuggestions - completed.count
        return completed + titles.prefix(room).map { SuggestionDTO(kind: "title", text: $0.title, bookId: $0.id) }
    }
}

extension CatalogEngine {
    func suggest(_ words: [String], scope: CatalogScope?, now: Date, synonyms: Synonyms) -> [SuggestionDTO] {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return reading(at: micros) { index, offline, stateKey, version in
            let narrowing = narrowing(scope, in: index, version: version)
            // Titles in the family's locale (docs/localization.md): kept per locale.
            let locales = scope?.locales ?? [], localized = locales.isEmpty ? "" : "\u{3}" + locales.joined(separator: ",")
            func compute() -> [SuggestionDTO] {
                let expansions = keptExpansions(words, in: index, version: version, synonyms: synonyms)
                let found = index.suggest(expansions, scope: narrowing, offline: offline, words: SuggestRules.maxWords, titles: SuggestRules.maxSuggestions)
                return SuggestionDTO.list(words: found.words, titles: found.titles.map { ($0, index.displayFields($0, locales: locales).title) }, before: Array(words.dropLast()))
            }
            // Kept per version and scope, as the catalog's answers are (an approved-only child's: computed).
            let scopeKey = narrowing.map { $0.memoKey } ?? ""
            guard let scopeKey else { return compute() }
            return searchMemoized(\.suggestions, words.joined(separator: " ") + stateKey + scopeKey + localized, version: version, synonyms: synonyms, compute)
        }
    }
}

extension SQLCatalogSource {
    /// The same completions from SQL: word counts over `search_vector`'s title and author lexemes
    /// of the books the other words leave, and the relevance page's first titles.
    func suggest(_ words: [String], scope: CatalogScope, synonyms: Synonyms) async throws -> [SuggestionDTO] {
        guard let last = words.last else { return [] }
        let sql = await req.catalogSQL(atLeast: reading.generation.version)
        let parameters = CatalogParameters(text: words.joined(separator: " "), page: PageRequest(page: 1, perPage: SuggestRules.maxSuggestions), sort: .relevance)
        let found = try await list(parameters, scope: scope, synonyms: synonyms, sql: sql)
        var completions: [(text: String, books: Int)] = []
        if last.count >= SuggestRules.wordMinLength {
            let queries = CatalogQueries(sql: sql, now: req.now, scope: scope)
            let before = CatalogParameters(text: words.dropLast().joined(separator: " "))
            let search = before.words.isEmpty ? nil : CatalogQueries.Search(expansions: Array(found.expansions.dropLast()))
            completions = try await sql.raw("""
                SELECT t.lexeme AS text, count(*) AS n
                  FROM books b, unnest(b.search_vector) AS t
                 WHERE \(queries.filter(before, search: search)) AND starts_with(t.lexeme, \(bind: last)) AND t.weights && '{A,B}'::text[]
                 GROUP BY t.lexeme ORDER BY n DESC, t.lexeme COLLATE "C" LIMIT \(bind: SuggestRules.maxWords)
                """).all(decoding: Completion.self).map { ($0.text, $0.n) }
        }
        return SuggestionDTO.list(words: completions, titles: found.books.map { ($0.id, $0.title) }, before: Array(words.dropLast()))
    }
}

/// A completion as the SQL path counts it: a title or author word and how many books hold it.
private struct Completion: Decodable { let text: String; let n: Int }
