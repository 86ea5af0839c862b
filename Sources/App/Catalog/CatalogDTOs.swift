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

    init(_ answer: CatalogIndex.Answer, categories: [CatalogIndex.Category]) {
        // The counts come in the catalog's order: each slug read beside its count, a dictionary
        // made only when they do not (this is on every page, kept ones too).
        var slugs: [Int: String]?
        var counts: [CategoryCount] = []
        counts.reserveCapacity(answer.categoryCounts.count)
        for (i, count) in answer.categoryCounts.enumerated() {
            if i < categories.count, categories[i].id == count.id {
                counts.append(CategoryCount(id: count.id, slug: categories[i].slug, count: count.count))
                continue
            }
            if slugs == nil { slugs = Dictionary(categories.map { ($0.id, $0.slug) }, uniquingKeysWith: { a, _ in a }) }
            counts.append(CategoryCount(id: count.id, slug: slugs?[count.id] ?? "", count: count.count))
        }
        self.categories = counts
        ageBands = zip(CatalogIndex.ageBands, answer.ageBandCounts).map { AgeBand(band: $0.0.label, age: $0.0.age, count: $0.1) }
    }

    /// The same bytes the app's encoder writes (sorted keys), without it: this is on every engine answer.
    var json: [UInt8] {
        var json = JSONWriter()
        json.raw("{\"age_bands\":[")
        for (i, band) in ageBands.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{\"age\":"); json.int(band.age)
            json.raw(",\"band\":"); json.string(band.band)
            json.raw(",\"count\":"); json.int(band.count)
            json.raw("}")
        }
        json.raw("],\"categories\":[")
        for (i, category) in categories.enumerated() {
            if i > 0 { json.raw(",") }
            json.raw("{\"count\":"); json.int(category.count)
            json.raw(",\"id\":"); json.int(category.id)
            json.raw(",\"slug\":"); json.string(category.slug)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
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
