import SQLKit
import Vapor

/// Console: translations side by side (docs/localization.md). `/admin/books/:id/translations`
/// and `/admin/categories/:id/translations` are one form with a column per locale beside the
/// record's own text; saving writes every locale at once through the record's audited store.
/// `/admin/translations` lists what is missing per locale, with counts and a filter.
struct TranslationsController: RouteCollection {
    static let path = "translations"

    func boot(routes: any RoutesBuilder) throws {
        for kind in ["books", "categories"] {
            routes.get(.constant(kind), ":id", .constant(Self.path)) { req in try await Self.form(req, kind: kind) }
            routes.post(.constant(kind), ":id", .constant(Self.path)) { req in try await Self.save(req, kind: kind) }
        }
        routes.get(.constant(Self.path), use: missing)
    }

    struct Page: Encodable {
        struct Column: Encodable { let locale: String; let own: Bool }
        struct Cell: Encodable { let name: String; let value: String; let own: Bool; let locale: String }
        struct Row: Encodable { let label: String; let multiline: Bool; let cells: [Cell] }
        let layout: LayoutView
        let heading: String
        let recordURL: String
        let action: String
        let columns: [Column]
        let rows: [Row]
        let canEdit: Bool
    }

    private static func id(_ req: Request) throws -> Int {
        guard let id = req.parameters.get("id", as: Int.self), id > 0 else { throw Abort(.notFound) }
        return id
    }

    /// The locales of the form: the record's own first (shown, not edited), then the others.
    private static func texts(_ req: Request, kind: String, id: Int) async throws -> TranslationQueries.Texts {
        let locales = req.application.settings.catalogLocales
        let texts = kind == "books" ? try await TranslationQueries.book(id, on: req.sql)
            : try await TranslationQueries.category(id, defaultLocale: locales.defaultLocale, on: req.sql)
        guard let texts else { throw Abort(.notFound) }
        return texts
    }

    static func form(_ req: Request, kind: String) async throws -> Response {
        let id = try id(req)
        let texts = try await texts(req, kind: kind, id: id)
        let supported = req.application.settings.catalogLocales.supported
        let others = supported.filter { $0 != texts.language }
        let columns = [Page.Column(locale: texts.language, own: true)] + others.map { Page.Column(locale: $0, own: false) }
        func cells(_ field: String, own: String, _ value: ((title: String?, description: String?)) -> String?) -> [Page.Cell] {
            [Page.Cell(name: field, value: own, own: true, locale: texts.language)]
                + others.map { Page.Cell(name: "\(field)[\($0)]", value: texts.translations[$0].flatMap(value) ?? "", own: false, locale: $0) }
        }
        let rows = kind == "books"
            ? [Page.Row(label: "Title", multiline: false, cells: cells("title", own: texts.title) { $0.title }),
               Page.Row(label: "Description", multiline: true, cells: cells("description", own: texts.description) { $0.description })]
            : [Page.Row(label: "Name", multiline: false, cells: cells("name", own: texts.title) { $0.title })]
        let record = AdminPath.record(kind, id)
        let layout = LayoutView(req, title: "Translations of \(texts.title)", section: kind)
        let page = Page(layout: layout, heading: "Translations of “\(texts.title)”", recordURL: record, action: record + "/" + path,
                        columns: columns, rows: rows, canEdit: layout.canEdit)
        return try await req.page("translations", page)
    }

    /// Saves every locale's fields at once (blank: not translated), audited as an update of the
    /// record; a value over the database's limits is refused with the reason.
    static func save(_ req: Request, kind: String) async throws -> Response {
        try req.requireEditor()
        let id = try id(req), body = try FormBody(req)
        let texts = try await texts(req, kind: kind, id: id)
        let others = req.application.settings.catalogLocales.supported.filter { $0 != texts.language }
        let submitted = body.value
        func value(_ name: String) throws -> String? {
            let text = submitted(name).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
            if let text, ConsoleText.hasNUL(text) { throw Abort(.unprocessableEntity, reason: "\(name): \(ConsoleText.nulMessage)") }
            return text
        }
        var books: [String: (title: String?, description: String?)] = [:], names: [String: String?] = [:]
        for locale in others {
            books[locale] = (try value("title[\(locale)]"), try value("description[\(locale)]"))
            names[locale] = try value("name[\(locale)]")
        }
        let audit = AuditWriter(staff: try req.staff)
        let bookValues = books, nameValues = names
        do {
            try await req.transaction { sql in
                let store = ResourceStore(resource: kind == "books" ? .books : .categories, parentID: nil, sql: sql)
                try await store.audited(.update, [id], locking: true, skippingUnchanged: true, in: sql, audit: audit) { sql, before in
                    guard !before.isEmpty else { throw Abort(.notFound) }
                    if kind == "books" { try await TranslationQueries.saveBook(id, bookValues, on: sql) }
                    else { try await TranslationQueries.saveCategory(id, nameValues, on: sql) }
                    return [id]
                }
            }
        } catch let error where ConstraintViolation(error) != nil {
            throw Abort(.unprocessableEntity, reason: "A translation is too long: titles up to 500 characters, descriptions 10,000, names 100.")
        }
        req.adminSession.flash("Translations saved.")
        return req.redirect(to: AdminPath.record(kind, id) + "/" + path)
    }

    struct MissingPage: Encodable {
        let layout: LayoutView
        let counts: [TranslationQueries.Missing]
        let locale: String
        let field: String
        let query: String
        let locales: [String]
        let books: [TranslationQueries.MissingBook]
        let booksURL: String
    }

    /// `?locale=fr&field=title|description&q=`: counts per locale, and the books missing that field.
    @Sendable
    func missing(req: Request) async throws -> Response {
        let settings = req.application.settings.catalogLocales
        let others = Array(settings.supported.dropFirst())
        let chosen = (try? req.query.get(String.self, at: "locale")).flatMap(settings.match) ?? others.first ?? settings.defaultLocale
        let field = (try? req.query.get(String.self, at: "field")) == "description" ? "description" : "title"
        let query = ConsoleText.search(try? req.query.get(String.self, at: "q")) ?? ""
        let counts = try await TranslationQueries.missing(settings.supported, defaultLocale: settings.defaultLocale, on: req.sql)
        let books = try await TranslationQueries.missingBooks(chosen, field: field, query: String(query.prefix(200)), limit: 50, on: req.sql)
        let page = MissingPage(layout: LayoutView(req, title: "Missing translations", section: "translations"), counts: counts, locale: chosen, field: field,
                               query: query, locales: settings.supported, books: books, booksURL: AdminPath.path("books"))
        return try await req.page("translations_missing", page)
    }
}
