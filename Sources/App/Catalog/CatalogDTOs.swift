import CatalogIndexing
import Core
import Vapor

/// `meta.facets`: for the query and the other filters, how many books each category and each
/// age band of the app's picker would give.
struct FacetsDTO: Content, Equatable {
    struct CategoryCount: Content, Equatable { let id: Int; let slug: String; let count: Int }
    struct AgeBand: Content, Equatable { let band: String; let age: Int; let count: Int }
    let categories: [CategoryCount]
    let ageBands: [AgeBand]

    init(categories: [CategoryCount], ageBands: [AgeBand]) {
        self.categories = categories
        self.ageBands = ageBands
    }

    /// The facets of an engine answer, written at the end of `out` as the app's encoder writes
    /// this DTO (sorted keys) — without it, its strings or a buffer of their own: this is on
    /// every engine answer, kept ones too (a fifth of a kept page's time went to them).
    static func write(_ answer: CatalogIndex.Answer, categories: [CatalogIndex.Category], into out: inout [UInt8]) {
        var json = JSONWriter()
        swap(&json.bytes, &out)
        defer { swap(&json.bytes, &out) }
        json.raw("{\"age_bands\":[")
        for (i, (band, count)) in zip(CatalogIndex.ageBands, answer.ageBandCounts).enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{\"age\":"); json.int(band.age)
            json.raw(",\"band\":"); json.string(band.label)
            json.raw(",\"count\":"); json.int(count)
            json.raw("}")
        }
        json.raw("],\"categories\":[")
        // The counts come in the catalog's order: each slug read beside its count, a dictionary
        // made only when they do not.
        var slugs: [Int: String]?
        for (i, count) in answer.categoryCounts.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{\"count\":"); json.int(count.count)
            json.raw(",\"id\":"); json.int(count.id)
            json.raw(",\"slug\":")
            if i < categories.count, categories[i].id == count.id {
                json.string(categories[i].slug)
            } else {
                if slugs == nil { slugs = Dictionary(categories.map { ($0.id, $0.slug) }, uniquingKeysWith: { a, _ in a }) }
                json.string(slugs?[count.id] ?? "")
            }
            json.raw("}")
        }
        json.raw("]}")
    }
}

/// The catalog list envelope: the list envelope plus `meta.facets`.
struct CatalogPageDTO: Content {
    struct Meta: Content {
        /// A search that found under three books, corrected, when the correction finds more.
        let didYouMean: String?
        let facets: FacetsDTO
        /// A search's: per book of `data`, in order, where its title and author matched.
        let highlights: [HighlightDTO]?
        let page: Int; let perPage: Int; let totalCount: Int; let totalPages: Int
    }
    let data: [BookDTO]
    let meta: Meta
}

/// A category of the picker: `icon_name` is `null` when there is none, never absent.
struct CategoryDTO: Content {
    let id: Int
    let name: String
    let slug: String
    @ExplicitNull var iconName: String?
    let displayOrder: Int
}
