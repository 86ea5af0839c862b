import CatalogIndexing
import Core
import SQLKit
import Vapor

/// Preview as a family (`/admin/preview`): the parent catalog — search, category, age, sort,
/// facets — as the engine answers a family in country C, with a child's controls K (maximum age,
/// blocked categories), on date D. The engine answers against any clock, so a date ahead shows
/// what scheduled books and rights windows will make of the catalog then. Read-only, no parent's
/// data is read, each preview audited.
struct PreviewController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.preview), use: preview)
    }

    struct Book: Encodable { let title: String; let author: String; let href: String; let cover: String? }
    struct Facet: Encodable { let label: String; let count: Int }

    struct Page: Encodable {
        let layout: LayoutView
        let country: String
        /// The family's locale (docs/localization.md): titles and descriptions as they read them.
        let locales: [OptionView]
        let date: String
        let maxAge: String
        let q: String
        let categories: [OptionView]
        let blocked: [OptionView]
        let sorts: [OptionView]
        let books: [Book]
        let total: Int
        let categoryFacets: [Facet]
        let ageFacets: [Facet]
        let error: String?
        let engineMissing: Bool
        let summary: String
        let calendarURL: String
        let action = AdminPath.preview
    }

    @Sendable
    func preview(req: Request) async throws -> Response {
        let staff = try req.staff
        let query = QueryParameters(query: req.url.query)
        func value(_ name: String) -> String { (query.pairs.first { $0.name == name }?.value ?? "").trimmingCharacters(in: .whitespaces) }
        var problem: String?
        let countryText = value("country").isEmpty ? req.application.settings.defaultCountry : value("country").uppercased()
        if case .success(let codes) = Territories.parse(countryText), codes.count == 1 {} else { problem = "Use one ISO country code such as FR." }
        let catalogLocales = req.application.settings.catalogLocales
        let locale = catalogLocales.match(value("locale")) ?? catalogLocales.defaultLocale
        let dateText = value("date")
        var at = req.now
        if !dateText.isEmpty {
            if let day = Self.day(dateText) { at = day } else { problem = "Give the date as YYYY-MM-DD." }
        }
        let maxAge = Int(value("max_age")).flatMap { (0...18).contains($0) ? $0 : nil }
        let blocked = query.pairs.filter { $0.name == "blocked" }.compactMap { Int($0.value) }
        let categories = try await PreviewQueries.categories(on: req.sql)
        // The catalog's own parameters, as the parent API reads them.
        let catalogPairs = query.pairs.filter { ["q", "category", "sort", "age", "page"].contains($0.name) && !$0.value.isEmpty }
        var parameters = CatalogParameters()
        do { parameters = try CatalogParameters(QueryParameters(pairs: catalogPairs)) } catch { problem = problem ?? "That search or filter is not one the catalog takes." }

        let engine = req.appServices.catalogEngine
        let engineReady = req.application.settings.catalogEngine && engine.isReady
        var books: [Book] = [], total = 0, categoryFacets: [Facet] = [], ageFacets: [Facet] = []
        if engineReady, problem == nil {
            let reading = try await req.appServices.catalogCache.current(for: req)
            try await engine.catchUp(to: reading.generation.version, on: req.db)
            let synonyms = try await req.appServices.synonyms.current(version: reading.synonymsVersion, on: req.sql)
            var scope = CatalogScope(maxAge: maxAge, blockedCategories: blocked, country: countryText)
            scope.locales = catalogLocales.chain(for: locale)
            let answer = engine.page(parameters, scope: scope, now: at, synonyms: synonyms)
            let page = try JSONDecoder().decode(PageJSON.self, from: answer.body)
            total = answer.total
            books = page.data.map { Book(title: $0.title, author: $0.author ?? "", href: AdminPath.record(AdminResource.books.slug, $0.id),
                                         cover: $0.cover?.thumbnail) }
            let names = Dictionary(uniqueKeysWithValues: categories.map { ($0.id, $0.name) })
            categoryFacets = page.meta.facets.categories.map { Facet(label: names[$0.id] ?? $0.slug, count: $0.count) }
            ageFacets = page.meta.facets.age_bands.map { Facet(label: "Ages \($0.band)", count: $0.count) }
            let described = "{\"country\": \"\(countryText)\", \"date\": \"\(dateText.isEmpty ? "now" : dateText)\", \"max_age\": \(maxAge.map(String.init) ?? "null"), \"blocked_categories\": \(blocked), \"locale\": \"\(locale)\"}"
            try await AuditWriter(staff: staff).record(.preview, table: "catalog", ids: [0], before: [:], after: [0: described], on: req.sql)
        }
        let selectedCategory = value("category"), sort = value("sort")
        let page = Page(
            layout: LayoutView(req, title: "Preview as a family", section: "preview"), country: countryText,
            locales: catalogLocales.supported.map { OptionView(value: $0, label: $0, selected: $0 == locale) }, date: dateText,
            maxAge: maxAge.map(String.init) ?? "", q: value("q"),
            categories: [OptionView(value: "", label: "Any", selected: selectedCategory.isEmpty)]
                + categories.map { OptionView(value: $0.slug, label: $0.name, selected: $0.slug == selectedCategory) },
            blocked: categories.map { OptionView(value: String($0.id), label: $0.name, selected: blocked.contains($0.id)) },
            sorts: ["", "title", "newest"].map { OptionView(value: $0, label: $0.isEmpty ? "Relevance / recently added" : $0.capitalized, selected: $0 == sort) },
            books: books, total: total, categoryFacets: categoryFacets, ageFacets: ageFacets, error: problem, engineMissing: !engineReady,
            summary: "\(total.formatted()) \(total == 1 ? "book" : "books") for a family in \(countryText) reading \(locale)\(dateText.isEmpty ? " now" : " on \(dateText)")\(maxAge.map { ", up to age \($0)" } ?? "")\(blocked.isEmpty ? "" : ", \(blocked.count) blocked \(blocked.count == 1 ? "category" : "categories")")",
            calendarURL: AdminPath.rightsCalendar + "?territory=" + countryText + (dateText.count >= 7 ? "&month=" + dateText.prefix(7) : ""))
        return try await req.page("preview", page, status: problem == nil ? .ok : .badRequest)
    }

    /// Noon UTC of a YYYY-MM-DD day (the middle of the day everywhere families live).
    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, text.count == 10 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12)
        guard components.isValidDate(in: calendar), (2000...2200).contains(parts[0]) else { return nil }
        return calendar.date(from: components)
    }

    /// What the preview reads of the catalog's JSON.
    struct PageJSON: Decodable {
        struct BookJSON: Decodable {
            struct Cover: Decodable {
                struct Rendition: Decodable { let url: String; let width: Int }
                let renditions: [Rendition]?
                var thumbnail: String? { renditions?.sorted { $0.width < $1.width }.first?.url }
            }
            let id: Int; let title: String; let author: String?; let cover: Cover?
        }
        struct Meta: Decodable {
            struct Facets: Decodable {
                struct Category: Decodable { let id: Int; let slug: String; let count: Int }
                struct Band: Decodable { let band: String; let count: Int }
                let categories: [Category]
                let age_bands: [Band]
            }
            let facets: Facets
        }
        let data: [BookJSON]
        let meta: Meta
    }
}
