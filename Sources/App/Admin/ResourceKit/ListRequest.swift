import Core
import Foundation
import PostgresNIO
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
    /// The columns chosen (`col`, repeated; a saved view keeps them); empty: all of them.
    let columns: [String]

    init(_ resource: AdminResource, query text: String?) {
        let query = QueryParameters(query: text)
        self.query = query
        func value(_ name: String) -> String? { ConsoleText.search(query.pairs.first { $0.name == name }?.value) }
        var conditions: [SQLQueryString] = []
        search = resource.list.search == nil ? nil : value("q").map { String($0.prefix(200)) }
        if let search, let condition = resource.list.search?.condition(search) { conditions.append(condition) }
        var filterValues: [String: String] = [:]
        for filter in resource.list.filters {
            if let text = value(filter.name), let condition = filter.condition(text) {
                filterValues[filter.name] = text
                conditions.append(condition)
            }
        }
        self.filterValues = filterValues
        self.conditions = conditions
        let sortText = value("sort") ?? ""
        let key = sortText.hasPrefix("-") ? String(sortText.dropFirst()) : sortText
        if resource.list.columns.contains(where: { $0.key == key && $0.sortable }) {
            sortKey = key
            descending = sortText.hasPrefix("-")
        } else {
            sortKey = resource.list.defaultSort
            descending = resource.list.defaultDescending
        }
        page = max(1, min(Int(value("page") ?? "") ?? 1, 100_000))
        let perPage = Int(value("per_page") ?? "") ?? 0
        self.perPage = Self.perPageChoices.contains(perPage) ? perPage : Self.defaultPerPage
        let chosen = Set(query.pairs.filter { $0.name == "col" }.map(\.value))
        columns = resource.list.columns.map(\.key).filter(chosen.contains)
    }

    var isFiltered: Bool { search != nil || !filterValues.isEmpty }

    /// The query string of what the list selects — its search and filters, not its page or order.
    var filterQuery: String {
        QueryParameters(pairs: query.pairs.filter { !["page", "per_page", "sort", "col"].contains($0.name) }).encoded
    }

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

    /// The records a list request selects: the parent's, matching its search and filters, with
    /// the joins those conditions and `also` refer to.
    func matching(_ request: ListRequest, also: [any SQLExpression] = []) -> SQLSelectBuilder {
        let builder = select(joins: joins(usedBy: request.conditions + also))
        for condition in request.conditions { builder.where(condition) }
        return builder
    }

    /// How long an exact count of a big table may take before the planner's estimate is shown.
    static let countBudget = "150ms"

    /// A table's size as the planner knows it, and its exact count when it is small.
    private struct Size: Decodable { let estimate: Int; let n: Int? }

    /// The list's count: exact (capped) when that is cheap, else the planner's estimate ("about N").
    /// A small table is counted in the statement that reads its size; a big one unfiltered is its
    /// size; a big one filtered is counted within `countBudget`, then estimated.
    func count(_ request: ListRequest, budget: String = countBudget) async throws -> (count: Int, exact: Bool, capped: Bool) {
        let capped = matching(request).column(SQLLiteral.numeric("1")).limit(Self.countCap + 1).select
        let count: SQLQueryString = "SELECT count(*) AS n FROM (\(capped)) x"
        func exact(_ n: Int) -> (count: Int, exact: Bool, capped: Bool) { (min(n, Self.countCap), true, n > Self.countCap) }
        if resource.access.parent != nil { return exact(try await sql.number(count)) }
        // The count's subquery runs only when the table is small (a lazily evaluated init plan).
        let row = try await sql.raw("""
            SELECT c.reltuples::bigint AS estimate, CASE WHEN c.reltuples <= \(literal: resource.list.estimateAbove) THEN (\(count)) END AS n
              FROM pg_class c WHERE c.oid = to_regclass(\(bind: resource.table))
            """).first(decoding: Size.self)
        if let n = row?.n { return exact(n) }
        let estimate = row?.estimate ?? 0
        guard request.isFiltered else { return (estimate, false, false) }
        do {
            return exact(try await sql.withSession { session in
                try await session.raw("BEGIN").run()
                do {
                    try await session.raw("SET LOCAL statement_timeout = \(literal: budget)").run()
                    let n = try await session.number(count)
                    try await session.raw("COMMIT").run()
                    return n
                } catch {
                    try? await session.raw("ROLLBACK").run()
                    throw error
                }
            })
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "57014" {
            return (try await plannedRows(matching(request).column(SQLLiteral.numeric("1")).select), false, false)
        }
    }

    private struct Plan: Decodable {
        let plan: String
        enum CodingKeys: String, CodingKey { case plan = "QUERY PLAN" }
    }

    /// The planner's estimate of the rows of `query`.
    private func plannedRows(_ query: any SQLExpression) async throws -> Int {
        let plan = try await sql.raw("EXPLAIN (FORMAT JSON) \(query)").first(decoding: Plan.self)?.plan ?? "[]"
        let top = (try? JSONSerialization.jsonObject(with: Data(plan.utf8))) as? [[String: Any]]
        return ((top?.first?["Plan"] as? [String: Any])?["Plan Rows"] as? NSNumber)?.intValue ?? 0
    }

    /// One page of rows (and one more, to know whether a next page exists), each with `row_id`.
    ///
    /// A late row lookup: the page's ids are found first from the sort key alone (an index-only
    /// walk where an index has it, however deep the page), then only those rows are read with
    /// their columns, joins and subqueries. Joins the ids do not need are removed by the planner.
    func rows(_ request: ListRequest) async throws -> [any SQLRow] {
        let sortColumn = resource.list.columns.first { $0.key == request.sortKey } ?? resource.list.columns[0]
        let direction: SQLDirection = request.descending ? .descending : .ascending
        // No NULLS clause: the default null order is the one the indexes have, so a sort can walk one.
        let ids = matching(request, also: [sortColumn.sortExpression]).column(Self.id)
            .orderBy(sortColumn.sortExpression, direction).orderBy(Self.id, direction)
            .limit(request.perPage + 1).offset((request.page - 1) * request.perPage)
        let page = sql.select().column(SQLAlias(Self.id, as: SQLIdentifier("row_id")))
            .from(SQLAlias(SQLGroupExpression(ids.select), as: SQLIdentifier("page")))
            .join(table, method: SQLJoinMethod.inner, on: SQLBinaryExpression(SQLColumn("id", table: "page"), .equal, Self.id))
        for join in resource.list.joins { join.add(to: page) }
        for column in resource.list.columns { page.column(column.selected(in: timeZone)) }
        return try await page.orderBy(sortColumn.sortExpression, direction).orderBy(Self.id, direction).all()
    }

    /// The CSV's next chunk of rows after `lastID`, in id order (a keyset, so a million rows stream).
    func exportChunk(_ request: ListRequest, after lastID: Int) async throws -> [any SQLRow] {
        let builder = matching(request, also: resource.list.csv.map(\.expression)).column(SQLAlias(Self.id, as: SQLIdentifier("row_id")))
        for column in resource.list.csv { builder.column(column.selected) }
        return try await builder.where(Self.id, .greaterThan, SQLBind(lastID)).orderBy(Self.id).limit(2000).all()
    }
}
