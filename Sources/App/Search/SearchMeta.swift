import CatalogIndexing
import Core
import Vapor

/// `meta.highlights[i]`: where `data[i]`'s title and author matched the search.
struct HighlightDTO: Content, Equatable {
    struct Range: Content, Equatable { let start: Int; let length: Int; let match: String }
    let id: Int
    let title: [Range]
    let author: [Range]

    /// `titleLanguage`: a translated title's language (docs/localization.md), else the book's.
    init(id: Int, title: String, author: String, language: String, titleLanguage: String? = nil, query: Highlighter.Query) {
        func ranges(_ text: String, _ language: String) -> [Range] {
            Highlighter.ranges(in: text, language: language, query: query).map { Range(start: $0.start, length: $0.length, match: $0.kind.rawValue) }
        }
        self.id = id
        self.title = ranges(title, titleLanguage ?? language)
        self.author = ranges(author, language)
    }

    /// One item's bytes as the app's encoder writes a `HighlightDTO` (sorted keys), straight
    /// from the highlighter's ranges: the engine's pages make no `HighlightDTO`.
    static func write(id: Int, title: [Highlight], author: [Highlight], into json: inout JSONWriter) {
        func write(_ ranges: [Highlight]) {
            json.raw("[")
            for (i, range) in ranges.enumerated() {
                if i > 0 { json.raw(",") }
                json.raw("{\"length\":"); json.int(range.length)
                json.raw(",\"match\":"); json.string(range.kind.rawValue)
                json.raw(",\"start\":"); json.int(range.start)
                json.raw("}")
            }
            json.raw("]")
        }
        json.raw("{\"author\":"); write(author)
        json.raw(",\"id\":"); json.int(id)
        json.raw(",\"title\":"); write(title)
        json.raw("}")
    }
}

/// What a search adds to a catalog page: the query's expansions, and a correction to offer when
/// it finds fewer than three books and the correction finds more.
enum SearchMeta {
    static let fewResults = 3

    /// The corrected query to count when this one found fewer than three books (`meta.did_you_mean`
    /// when that finds more); its first page, the one a parent who follows it asks for.
    static func correction(_ parameters: CatalogParameters, expansions: [SearchExpansion], total: Int, vocabulary: TypoVocabulary) -> CatalogParameters? {
        guard !parameters.words.isEmpty, total < fewResults,
              let corrected = SearchExpansion.correction(expansions, vocabulary: vocabulary) else { return nil }
        return CatalogParameters(text: corrected.joined(separator: " "), age: parameters.age, publisher: parameters.publisher,
                                 category: parameters.category, page: PageRequest(page: 1, perPage: parameters.page.perPage))
    }
}
