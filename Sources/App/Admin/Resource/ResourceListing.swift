import Core
import SQLKit
import Vapor

/// One list request of a resource: its search, filters, sort and page, and the SQL they make.
/// A list page costs a fixed number of statements whatever its size: the count (or the
/// planner's estimate), the rows, and one per lookup list.
struct ResourceListing {
    static let perPageChoices = [25, 50, 100]
    static let countCap = 10_000

    let resource: AdminResource
    let req: Request
    let parentID: Int?
    let query: QueryParameters
    let search: String?
    let filterValues: [String: String]
    let sortKey: String
    let descending: Bool
    let page: Int
    let perPage: Int
    let conditions: [SQLQueryString]

    init(resource: AdminResource, req: Request, parentID: Int?, forExport: Bool = false) async throws {
        self.resource = resource
        self.req = req
        self.parentID = parentID
        let query = QueryParameters(query: req.url.query)
        self.query = query
        func value(_ name: String) -> String? {
            let text = query.pairs.first { $0.name == name }?.value.trimmingCharacters(in: .whitespaces)
            return text?.isEmpty == false && text?.unicodeScalars.contains("\u{0}") == false ? text : nil
        }
        var conditions: [SQLQueryString] = []
        if let parent = resource.parent, let parentID { conditions.append("t.\(unsafeRaw: parent.column) = \(bind: parentID)") }
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
        self.conditions = conditions.isEmpty ? ["true"] : conditions
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
        perPage = Self.perPageChoices.contains(Int(value("per_page") ?? "") ?? 0) ? Int(value("per_page")!)! : 50
    }

    var isFiltered: Bool { search != nil || !filterValues.isEmpty }

    static func select(_ columns: [AdminColumn]) -> SQLQueryString {
        SQLQueryString(columns.map { column -> String in
            let expression: String
            switch column.format {
            case .datetime: expression = "to_char((\(column.sql)) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')"
            case .boolean: expression = "CASE WHEN (\(column.sql)) THEN 'Yes' ELSE 'No' END"
            default: expression = "(\(column.sql))::text"
            }
            return "\(expression) AS \"\(column.key)\""
        }.joined(separator: ", "))
    }

    static func cellText(_ row: any SQLRow, _ column: AdminColumn) throws -> String {
        let text = try row.decode(column: column.key, as: String?.self)
        switch column.format {
        case .duration: return formatDuration(text.flatMap(Int.init))
        default: return text ?? "—"
        }
    }

    static func cell(_ row: any SQLRow, _ column: AdminColumn, resource: AdminResource, id: Int, parentID: Int?) throws -> CellView {
        let text = try cellText(row, column)
        switch column.format {
        case .link: return CellView(text: text, href: AdminPath.record(resource, id, parentID: parentID))
        case .badge: return CellView(text: text, badge: text)
        default: return CellView(text: text)
        }
    }

    static func lookup(_ query: String, on sql: any SQLDatabase) async throws -> [Choice] {
        try await sql.raw(SQLQueryString(query)).all().map {
            Choice(value: try $0.decode(column: "value", as: String.self), label: try $0.decode(column: "label", as: String.self))
        }
    }

    /// The URL of this list with `changes` applied (nil removes a parameter).
    func url(_ changes: [String: String?]) -> String {
        var pairs = query.pairs.filter { changes[$0.name] == nil && !$0.value.isEmpty }
        for (name, value) in changes.sorted(by: { $0.key < $1.key }) { if let value { pairs.append((name, value)) } }
        let encoded = QueryParameters(pairs: pairs).encoded
        return AdminPath.list(resource, parentID: parentID) + (encoded.isEmpty ? "" : "?" + encoded)
    }

    /// The exact count, capped; or the planner's estimate for a big unfiltered table.
    func count() async throws -> (count: Int, exact: Bool, capped: Bool) {
        let sql = req.sql
        if !isFiltered && resource.parent == nil {
            let estimate = try await sql.raw("SELECT reltuples::bigint AS n FROM pg_class WHERE oid = to_regclass(\(bind: resource.table))")
                .first()?.decode(column: "n", as: Int.self) ?? 0
            if estimate > resource.estimateAbove { return (estimate, false, false) }
        }
        let n = try await sql.raw("""
            SELECT count(*) AS n FROM (SELECT 1 FROM \(ident: resource.table) t \(unsafeRaw: resource.joins)
                                        WHERE \(conditions.joined(separator: " AND ")) LIMIT \(bind: Self.countCap + 1)) x
            """).first()!.decode(column: "n", as: Int.self)
        return (min(n, Self.countCap), true, n > Self.countCap)
    }

    func page() async throws -> ListPage {
        let sql = req.sql
        let staff = try req.staff
        guard let sortColumn = resource.columns.first(where: { $0.key == sortKey }) ?? resource.columns.first else {
            throw Abort(.internalServerError, reason: "resource \(resource.slug) declares no columns")
        }
        let direction = descending ? "DESC" : "ASC"
        // No NULLS clause: the default null order is the one the indexes have, so a sort can walk one.
        let order = "\(sortColumn.sortSQL) \(direction), t.id \(direction)"
        let (total, exact, capped) = try await count()
        let rows = try await sql.raw("""
            SELECT t.id AS row_id, \(Self.select(resource.columns)) FROM \(ident: resource.table) t \(unsafeRaw: resource.joins)
             WHERE \(conditions.joined(separator: " AND "))
             ORDER BY \(unsafeRaw: order) LIMIT \(bind: perPage + 1) OFFSET \(bind: (page - 1) * perPage)
            """).all()
        let hasNext = rows.count > perPage
        let views = try rows.prefix(perPage).map { row -> RowView in
            let id = try row.decode(column: "row_id", as: Int.self)
            return RowView(id: id, cells: try resource.columns.map { try Self.cell(row, $0, resource: resource, id: id, parentID: parentID) })
        }

        // Filters and batch targets share lookups: one statement per distinct list.
        var lookups: [String: [Choice]] = [:]
        func choices(_ kind: AdminFilter.Kind) async throws -> [Choice]? {
            switch kind {
            case .choices(let choices): return choices
            case .lookup(let query):
                if lookups[query] == nil { lookups[query] = try await Self.lookup(query, on: sql) }
                return lookups[query]
            case .integer: return nil
            }
        }
        var filters: [FilterView] = []
        for filter in resource.filters {
            let current = filterValues[filter.name] ?? ""
            let options = try await choices(filter.kind)
            filters.append(FilterView(
                name: filter.name, label: filter.label, isSelect: options != nil,
                options: ([Choice(value: "", label: "Any")] + (options ?? [])).map { OptionView(value: $0.value, label: $0.label, selected: $0.value == current) },
                value: current))
        }
        var batch: BatchView?
        if staff.canEdit && !resource.batchActions.isEmpty {
            var targets: [BatchView.TargetView] = []
            for action in resource.batchActions {
                if let kind = action.target, let options = try await choices(kind) {
                    targets.append(.init(action: action.name, label: action.targetLabel ?? "Target",
                                         options: ([Choice(value: "", label: "Choose…")] + options).map { OptionView(value: $0.value, label: $0.label, selected: false) }))
                }
            }
            batch = BatchView(actions: resource.batchActions.map { OptionView(value: $0.name, label: $0.label, selected: false) }, targets: targets)
        }

        let headers = resource.columns.map { column -> HeaderView in
            guard column.sortable else { return HeaderView(label: column.label, sortURL: nil, sorted: nil) }
            let current = column.key == sortKey
            let next = current && !descending ? "-" + column.key : column.key
            return HeaderView(label: column.label, sortURL: url(["sort": next, "page": nil]),
                              sorted: current ? (descending ? "descending" : "ascending") : nil)
        }
        let lastPage = exact && !capped ? max(1, (total + perPage - 1) / perPage) : nil
        let noun = total == 1 ? resource.singular.lowercased() : resource.plural.lowercased()
        let countText = exact ? (capped ? "More than \(Self.countCap.formatted()) \(noun)" : "\(total.formatted()) \(noun)")
                              : "About \(total.formatted()) \(noun)"
        let pagination = PaginationView(
            page: page,
            prevURL: page > 1 ? url(["page": String(page - 1)]) : nil,
            nextURL: hasNext ? url(["page": String(page + 1)]) : nil,
            firstURL: page > 1 ? url(["page": nil]) : nil,
            lastURL: lastPage.flatMap { $0 > page ? url(["page": String($0)]) : nil },
            summary: lastPage.map { "Page \(page) of \($0)" } ?? "Page \(page)")
        let parentName: String?
        if let parent = resource.parent, let parentID {
            parentName = try await sql.raw("SELECT (\(unsafeRaw: parent.displaySQL))::text AS n FROM \(ident: parent.table) p WHERE p.id = \(bind: parentID)")
                .first()?.decode(column: "n", as: String.self)
        } else {
            parentName = nil
        }
        let canWrite = resource.requiresAdmin ? staff.isAdmin : staff.canEdit
        var hidden: [OptionView] = []
        if sortKey != resource.defaultSort || descending != resource.defaultDescending {
            hidden.append(OptionView(value: (descending ? "-" : "") + sortKey, label: "sort", selected: false))
        }
        if perPage != 50 { hidden.append(OptionView(value: String(perPage), label: "per_page", selected: false)) }
        return ListPage(
            layout: LayoutView(req, title: resource.plural, section: resource.parent?.slug ?? resource.slug),
            heading: parentName.map { "\(resource.plural) of “\($0)”" } ?? resource.plural,
            parentHeading: parentName,
            parentURL: resource.parent.flatMap { parent in parentID.map { "/admin/\(parent.slug)/\($0)" } },
            newURL: canWrite && resource.allowCreate ? AdminPath.list(resource, parentID: parentID) + "/new" : nil,
            newLabel: "New \(resource.singular.lowercased())",
            exportURL: AdminPath.list(resource, parentID: parentID) + "/export.csv" + (query.pairs.isEmpty ? "" : "?" + query.encoded),
            listURL: AdminPath.list(resource, parentID: parentID),
            batchURL: batch == nil ? nil : AdminPath.list(resource, parentID: parentID) + "/batch",
            search: search, searchLabel: resource.search?.label, hasSearch: resource.search != nil,
            filters: filters, headers: headers, rows: views, countText: countText, pagination: pagination,
            batch: batch, hidden: hidden,
            perPageOptions: Self.perPageChoices.map { OptionView(value: String($0), label: String($0), selected: $0 == perPage) })
    }
}

extension AdminColumn {
    /// What the list orders by: case-insensitive for text columns.
    var sortSQL: String { format == .link || format == .text ? "lower((\(sql))::text)" : sql }
}

/// 340 → "5:40"; 3725 → "1:02:05"; nil → "—".
func formatDuration(_ seconds: Int?) -> String {
    guard let seconds, seconds >= 0 else { return "—" }
    let h = seconds / 3600, m = (seconds % 3600) / 60, s = seconds % 60
    return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
}

enum FormRenderer {
    static func field(_ field: AdminField, values: FormValues, error: String?, options: [Choice]) -> FieldView {
        let value = values.raw[field.name] ?? ""
        var type = "text", min: Int?, max: Int?, maxLength: Int?, checked = false
        var optionViews: [OptionView] = []
        switch field.kind {
        case .text(let limit): maxLength = limit
        case .textarea(let limit): type = "textarea"; maxLength = limit
        case .integer(let range): type = "number"; min = range.lowerBound; max = range.upperBound
        case .choice, .lookup:
            type = "select"
            let blank = field.nullable || !field.required ? [OptionView(value: "", label: "—", selected: value.isEmpty)] : []
            optionViews = blank + options.map { OptionView(value: $0.value, label: $0.label, selected: $0.value == value) }
        case .checkbox: type = "checkbox"; checked = !value.isEmpty
        case .datetime: type = "datetime"
        case .multiLookup:
            type = "checkboxes"
            let selected = Set(values.lists[field.name] ?? [])
            optionViews = options.map { OptionView(value: $0.value, label: $0.label, selected: selected.contains($0.value)) }
        }
        return FieldView(name: field.name, label: field.label, type: type, value: value, error: error,
                         required: field.required, help: field.help, options: optionViews, checked: checked,
                         min: min, max: max, maxLength: maxLength)
    }
}
