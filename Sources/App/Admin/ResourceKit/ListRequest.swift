import Core
import SQLKit
import Vapor

/// What a list request asks for — search, filters, sort, page — read from its query string, and
/// the conditions they make. Values that are not acceptable are ignored, as a list's links may be old.
struct ListRequest: Sendable {
    static let perPageChoices = [25, 50, 100]
    static let defaultPerPage = 50

    let query: QueryParameters
    let search: String?
    let filterValues: [String: String]
    let conditions: [SQLQueryString]
    let sortKey: String
    let descending: Bool
    let page: Int
    let perPage: Int

    init(_ resource: AdminResource, query text: String?) {
        let query = QueryParameters(query: text)
        self.query = query
        func value(_ name: String) -> String? {
            let text = query.pairs.first { $0.name == name }?.value.trimmingCharacters(in: .whitespaces)
            return text?.isEmpty == false && text?.unicodeScalars.contains("\u{0}") == false ? text : nil
        }
        var conditions: [SQLQueryString] = []
        search = resource.search == nil ? nil : value("q").map { String($0.prefix(200)) }
        if let search, let condition = resource.search?.condition(search) { conditions.append(condition) }
        var filterValues: [String: String] = [:]
        for filter in resource.filters {
            if let text = value(filter.name), let condition = filter.condition(text) {
                filterValues[filter.name] = text
                conditions.append(condition)
            }
        }
        self.filterValues = filterValues
        self.conditions = conditions
        let sortText = value("sort") ?? ""
        let key = sortText.hasPrefix("-") ? String(sortText.dropFirst()) : sortText
        if resource.columns.contains(where: { $0.key == key && $0.sortable }) {
            sortKey = key
            descending = sortText.hasPrefix("-")
        } else {
            sortKey = resource.defaultSort
            descending = resource.defaultDescending
        }
        page = max(1, min(Int(value("page") ?? "") ?? 1, 100_000))
        let perPage = Int(value("per_page") ?? "") ?? 0
        self.perPage = Self.perPageChoices.contains(perPage) ? perPage : Self.defaultPerPage
    }

    var isFiltered: Bool { search != nil || !filterValues.isEmpty }

    /// The query string of this list with `changes` applied (nil removes a parameter).
    func query(_ changes: [String: String?]) -> String {
        var pairs = query.pairs.filter { changes[$0.name] == nil && !$0.value.isEmpty }
        for (name, value) in changes.sorted(by: { $0.key < $1.key }) { if let value { pairs.append((name, value)) } }
        let encoded = QueryParameters(pairs: pairs).encoded
        return encoded.isEmpty ? "" : "?" + encoded
    }
}

extension ResourceStore {
    static let countCap = 10_000

    /// The records a list request selects: the parent's, matching its search and filters.
    func matching(_ request: ListRequest, joined: Bool = true) -> SQLSelectBuilder {
        let builder = select(joined: joined)
        for condition in request.conditions { builder.where(condition) }
        return builder
    }

    /// The exact count, capped; or the planner's estimate for a big unfiltered table.
    func count(_ request: ListRequest) async throws -> (count: Int, exact: Bool, capped: Bool) {
        if !request.isFiltered && resource.parent == nil {
            let estimate = try await sql.raw("SELECT reltuples::bigint AS n FROM pg_class WHERE oid = to_regclass(\(bind: resource.table))")
                .first()?.decode(column: "n", as: Int.self) ?? 0
            if estimate > resource.estimateAbove { return (estimate, false, false) }
        }
        let capped = matching(request).column(SQLLiteral.numeric("1")).limit(Self.countCap + 1)
        let n = try await sql.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n")
            .from(SQLAlias(SQLGroupExpression(capped.select), as: SQLIdentifier("x")))
            .first()!.decode(column: "n", as: Int.self)
        return (min(n, Self.countCap), true, n > Self.countCap)
    }

    /// One page of rows (and one more, to know whether a next page exists), each with `row_id`.
    func rows(_ request: ListRequest) async throws -> [any SQLRow] {
        let sortColumn = resource.columns.first { $0.key == request.sortKey } ?? resource.columns[0]
        let direction: SQLDirection = request.descending ? .descending : .ascending
        // No NULLS clause: the default null order is the one the indexes have, so a sort can walk one.
        let builder = matching(request).column(SQLAlias(Self.id, as: SQLIdentifier("row_id")))
        for column in resource.columns { builder.column(column.selected) }
        return try await builder.orderBy(sortColumn.sortExpression, direction).orderBy(Self.id, direction)
            .limit(request.perPage + 1).offset((request.page - 1) * request.perPage).all()
    }

    /// The CSV's next chunk of rows after `lastID`, in id order (a keyset, so a million rows stream).
    func exportChunk(_ request: ListRequest, after lastID: Int) async throws -> [any SQLRow] {
        let builder = matching(request).column(SQLAlias(Self.id, as: SQLIdentifier("row_id")))
        for column in resource.csv { builder.column(column.selected) }
        return try await builder.where(Self.id, .greaterThan, SQLBind(lastID)).orderBy(Self.id).limit(2000).all()
    }
}
