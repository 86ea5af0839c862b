import Core
import SQLKit
import Vapor

/// One list page of a resource: rows, count, filters, batch controls and links. It costs a fixed
/// number of statements whatever its size: the count (or the planner's estimate), the rows, one
/// per distinct lookup list, the saved views, and the parent's name when nested.
struct ResourceListing {
    let store: ResourceStore
    let request: ListRequest
    let req: Request

    private var resource: AdminResource { store.resource }
    private var path: ResourcePath { ResourcePath(resource, parentID: store.parentID) }

    private func url(_ changes: [String: String?]) -> String { path.list + request.query(changes) }

    /// The columns shown: those chosen, else all.
    private var shown: [AdminColumn] {
        request.columns.isEmpty ? resource.list.columns : resource.list.columns.filter { request.columns.contains($0.key) }
    }

    func page() async throws -> ListPage {
        let staff = try req.staff
        let (total, exact, capped) = try await store.count(request)
        let rows = try await store.rows(request)
        let hasNext = rows.count > request.perPage
        let views = try rows.prefix(request.perPage).map { row -> RowView in
            let id = try row.rowID()
            return RowView(id: id, cells: try shown.map { try Cells.view(row, $0, link: path.record(id)) })
        }
        var lookups = LookupCache(sql: store.sql)
        var filters: [FilterView] = []
        for filter in resource.list.filters {
            let current = request.filterValues[filter.name] ?? ""
            let options = try await lookups.choices(filter.kind)
            var shown = current, lookupURL: String?
            if case .lookup(let lookup) = filter.kind, lookup.picker {
                lookupURL = AdminPath.lookup + "/" + lookup.table
                if let id = Int(current) { shown = try await lookup.label(of: id, on: store.sql) ?? current }
            }
            filters.append(FilterView(
                name: filter.name, label: filter.label, isSelect: options != nil,
                options: ([Choice(value: "", label: "Any")] + (options ?? [])).map { OptionView(value: $0.value, label: $0.label, selected: $0.value == current) },
                value: shown, lookupURL: lookupURL))
        }
        let countText = countText(total, exact: exact, capped: capped)
        let batch = staff.canEdit && !resource.list.batchActions.isEmpty ? try await batchView(&lookups, countText: countText) : nil
        let parentName = try await store.parentName()
        let canWrite = resource.access.requiresAdmin ? staff.isAdmin : staff.canEdit
        return ListPage(
            layout: LayoutView(req, title: resource.plural, section: resource.section),
            heading: parentName.map { "\(resource.plural) of “\($0)”" } ?? resource.plural,
            parentHeading: parentName,
            parentURL: path.parent,
            newURL: canWrite && resource.access.allowCreate ? path.new : nil,
            newLabel: "New \(resource.singular.lowercased())",
            importURL: canWrite ? resource.list.importURL : nil,
            exportURL: path.export + (request.query.pairs.isEmpty ? "" : "?" + request.query.encoded),
            listURL: path.list,
            batchURL: batch == nil ? nil : path.batch,
            search: request.search, searchLabel: resource.list.search?.label, hasSearch: resource.list.search != nil,
            filters: filters, headers: headers(), rows: views,
            countText: countText,
            pagination: pagination(hasNext: hasNext, lastPage: exact && !capped ? max(1, (total + request.perPage - 1) / request.perPage) : nil),
            batch: batch, hidden: hidden(),
            perPageOptions: ListRequest.perPageChoices.map { OptionView(value: String($0), label: String($0), selected: $0 == request.perPage) },
            columnOptions: resource.list.columns.filter { !$0.label.isEmpty }.map { OptionView(value: $0.key, label: $0.label, selected: request.columns.isEmpty || request.columns.contains($0.key)) },
            views: try await SavedViews.list(resource: resource.slug, staff: staff, current: request.query.encoded, listURL: path.list, on: store.sql),
            saveViewURL: resource.access.parent == nil ? AdminPath.savedViews : nil,
            currentQuery: request.query.pairs.filter { $0.name != "page" }.isEmpty ? "" : QueryParameters(pairs: request.query.pairs.filter { $0.name != "page" }).encoded,
            resourceSlug: resource.slug)
    }

    /// The batch controls; "everything matching" (not for nested lists) carries the filter, not the page.
    private func batchView(_ lookups: inout LookupCache, countText: String) async throws -> BatchView {
        var targets: [BatchView.TargetView] = []
        for action in resource.list.batchActions {
            if let kind = action.target, let options = try await lookups.choices(kind) {
                targets.append(.init(action: action.name, actionLabel: action.label, label: action.targetLabel ?? "Target",
                                     options: ([Choice(value: "", label: "Choose…")] + options).map { OptionView(value: $0.value, label: $0.label, selected: false) }))
            }
        }
        return BatchView(actions: resource.list.batchActions.map { OptionView(value: $0.name, label: $0.label, selected: false) }, targets: targets,
                         matchingLabel: resource.access.parent == nil ? "Everything matching this filter (\(countText))" : nil, matchingQuery: request.filterQuery)
    }

    private func headers() -> [HeaderView] {
        shown.map { column -> HeaderView in
            guard column.sortable else { return HeaderView(label: column.label, sortURL: nil, sorted: nil) }
            let current = column.key == request.sortKey
            let next = current && !request.descending ? "-" + column.key : column.key
            return HeaderView(label: column.label, sortURL: url(["sort": next, "page": nil]),
                              sorted: current ? (request.descending ? "descending" : "ascending") : nil)
        }
    }

    private func countText(_ total: Int, exact: Bool, capped: Bool) -> String {
        let noun = total == 1 ? resource.singular.lowercased() : resource.plural.lowercased()
        if !exact { return "About \(total.formatted()) \(noun)" }
        return capped ? "More than \(ResourceStore.countCap.formatted()) \(noun)" : "\(total.formatted()) \(noun)"
    }

    private func pagination(hasNext: Bool, lastPage: Int?) -> PaginationView {
        let page = request.page
        return PaginationView(
            page: page,
            prevURL: page > 1 ? url(["page": String(page - 1)]) : nil,
            nextURL: hasNext ? url(["page": String(page + 1)]) : nil,
            firstURL: page > 1 ? url(["page": nil]) : nil,
            lastURL: lastPage.flatMap { $0 > page ? url(["page": String($0)]) : nil },
            summary: lastPage.map { "Page \(page) of \($0)" } ?? "Page \(page)")
    }

    /// The current sort and page size, kept when the search form is sent.
    private func hidden() -> [OptionView] {
        var hidden: [OptionView] = []
        if request.sortKey != resource.list.defaultSort || request.descending != resource.list.defaultDescending {
            hidden.append(OptionView(value: (request.descending ? "-" : "") + request.sortKey, label: "sort", selected: false))
        }
        if request.perPage != ListRequest.defaultPerPage {
            hidden.append(OptionView(value: String(request.perPage), label: "per_page", selected: false))
        }
        return hidden
    }
}
