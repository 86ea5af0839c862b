import SQLKit
import Vapor

/// The console's resources in one place: their routes, the navigation and the audit log's tables
/// come from this list, and every declaration is checked when the app starts — its shape before
/// the first request (`checkDeclarations`), its SQL against the database (`checkSQL`) — so a
/// mistake names its resource at start-up instead of failing when its page is opened.
enum ResourceRegistry {
    static let all: [AdminResource] = [.books, .categories, .publishers, .rightsWindows, .videoAssets, .synonyms, .staffUsers, .families, .parents, .webhookEndpoints]

    /// Resources with a page of their own in the navigation (not nested ones), in order.
    static var navigation: [AdminResource] { all.filter { $0.access.parent == nil } }

    static func resource(table: String) -> AdminResource? { all.first { $0.table == table } }

    struct DeclarationError: Error, CustomStringConvertible {
        let resource: String
        let problem: String
        var description: String { "console resource \(resource): \(problem)" }
    }

    /// The declarations' shape: names unique, the default sort a sortable column, every lookup and
    /// join naming plain identifiers, a parent that is declared.
    static func checkDeclarations(_ resources: [AdminResource] = all) throws {
        func fail(_ resource: AdminResource, _ problem: String) -> DeclarationError { DeclarationError(resource: resource.slug, problem: problem) }
        var slugs: Set<String> = []
        for resource in resources {
            guard slugs.insert(resource.slug).inserted else { throw fail(resource, "the slug is used twice") }
            guard !resource.list.columns.isEmpty else { throw fail(resource, "no columns") }
            for (kind, keys) in [("column", resource.list.columns.map(\.key)), ("detail column", resource.detail.columns.map(\.key)),
                                 ("CSV column", resource.list.csv.map(\.key)), ("filter", resource.list.filters.map(\.name)),
                                 ("field", resource.form.fields.map(\.name)), ("batch action", resource.list.batchActions.map(\.name))] {
                var seen: Set<String> = []
                if let twice = keys.first(where: { !seen.insert($0).inserted }) {
                    throw fail(resource, "the \(kind) \"\(twice)\" is declared twice")
                }
            }
            guard resource.list.columns.contains(where: { $0.key == resource.list.defaultSort && $0.sortable }) else {
                throw fail(resource, "the default sort \"\(resource.list.defaultSort)\" is not a sortable column")
            }
            let names = [resource.table] + resource.form.fields.map(\.name) + resource.list.joins.flatMap { [$0.table, $0.alias] }
                + resource.lookups.flatMap { [$0.table, $0.label] } + (resource.access.parent.map { [$0.table, $0.column] } ?? [])
            if let bad = names.first(where: { !isPlainName($0) }) {
                throw fail(resource, "\"\(bad)\" is not a plain SQL name")
            }
            if let parent = resource.access.parent, !resources.contains(where: { $0.slug == parent.slug && $0.table == parent.table }) {
                throw fail(resource, "its parent \"\(parent.slug)\" is not declared")
            }
        }
    }

    /// Lowercase letters, digits and underscores, not starting with a digit.
    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// The declarations' SQL against the schema: every column, the name, the snapshot, each lookup,
    /// the search and every filter (with a sample value), planned by PostgreSQL without running.
    static func checkSQL(_ resources: [AdminResource] = all, on sql: any SQLDatabase) async throws {
        for resource in resources {
            let store = ResourceStore(resource: resource, parentID: resource.access.parent == nil ? nil : 1, sql: sql)
            do {
                let everything = store.select()
                for column in resource.list.columns + resource.detail.columns + resource.list.csv { everything.column(column.selected) }
                for field in resource.form.storedFields { everything.column(field.formValue) }
                everything.column(SQLAlias(SQLQueryString("(\(resource.displayName))::text"), as: SQLIdentifier("display_name")))
                everything.column(SQLAlias(SQLQueryString("(\(resource.detail.snapshot))::text"), as: SQLIdentifier("snapshot")))
                if let condition = resource.list.search?.condition("probe") { everything.where(condition) }
                for filter in resource.list.filters {
                    let sample: String
                    switch filter.kind {
                    case .choices(let choices): sample = choices.first?.value ?? ""
                    case .lookup: sample = "1"
                    case .integer(let range): sample = String(range.lowerBound)
                    }
                    if let condition = filter.condition(sample) { everything.where(condition) }
                }
                try await plan(everything.select, on: sql)
                for lookup in resource.lookups { try await plan(SQLQueryString("SELECT id::text, \(ident: lookup.label) FROM \(ident: lookup.table) ORDER BY \(lookup.order)"), on: sql) }
                _ = try await store.parentName()
            } catch {
                throw DeclarationError(resource: resource.slug, problem: "its SQL does not fit the schema: \(String(reflecting: error))")
            }
        }
    }

    private static func plan(_ statement: any SQLExpression, on sql: any SQLDatabase) async throws {
        try await sql.raw("EXPLAIN \(statement)").run()
    }
}

extension AdminResource {
    /// The tables its dropdowns read.
    var lookups: [Lookup] {
        var lookups = form.fields.compactMap(\.lookup)
        for kind in list.filters.map(\.kind) + list.batchActions.compactMap(\.target) {
            if case .lookup(let lookup) = kind { lookups.append(lookup) }
        }
        return lookups
    }
}
