import SQLKit
import Vapor

extension ResourceController {
    @Sendable
    func show(req: Request) async throws -> View {
        try requireReader(req)
        let store = try await store(req)
        let id = try recordID(req)
        let path = paths(store)
        let columns = resource.detail.columns.isEmpty ? resource.list.columns : resource.detail.columns
        guard let (name, row) = try await store.detail(id, columns: columns) else { throw notFound }
        let staff = try req.staff
        let details = try columns.map { DetailView(label: $0.label, cell: try Cells.view(row, $0, link: path.record(id))) }
        var related: [RelatedView] = []
        for section in resource.detail.related {
            related.append(try await relatedView(section, of: id, in: store, editor: staff.canEdit))
        }
        let writer = canWrite(staff)
        let page = ShowPage(
            layout: LayoutView(req, title: name, section: resource.section),
            heading: "\(resource.singular): \(name)",
            listURL: path.list, listLabel: "All \(resource.plural.lowercased())",
            editURL: writer && resource.access.allowEdit ? path.edit(id) : nil,
            deleteURL: writer && resource.access.allowDelete ? path.delete(id) : nil,
            historyURL: AdminPath.history(table: resource.table, id: id),
            actions: writer ? resource.detail.recordActions.filter { !$0.adminOnly || staff.isAdmin }
                .map { .init(label: $0.label, href: path.action(id, $0), current: false) } : [],
            details: details, related: related)
        return try await req.view.render("show", page)
    }

    private func relatedView(_ section: AdminRelated, of id: Int, in store: ResourceStore, editor: Bool) async throws -> RelatedView {
        let rows = try await store.related(section, of: id)
        let views = try rows.map { row -> RowView in
            let rowID = try row.decode(model: ResourceRows.ID.self).id
            var cells = try section.columns.map { column in
                let text = try Cells.text(row, column)
                return CellView(text: text, badge: column.format == .badge ? text : nil)
            }
            if let link = section.rowLink, !cells.isEmpty { cells[0].href = link(id, rowID) }
            return RowView(id: rowID, cells: cells)
        }
        let manage = editor ? section.manageLink?(id) : nil
        return RelatedView(title: section.title, headers: section.columns.map { HeaderView(label: $0.label, sortURL: nil, sorted: nil) },
                           rows: views, manageLabel: manage?.label, manageURL: manage?.href, emptyText: section.emptyText)
    }

    @Sendable
    func confirmDelete(req: Request) async throws -> View {
        try requireWriter(req)
        guard resource.access.allowDelete else { throw Abort(.notFound) }
        let store = try await store(req)
        let id = try recordID(req)
        let path = paths(store)
        guard let name = try await store.displayName(id) else { throw notFound }
        let warning = try await resource.detail.deleteWarning?(id, req.sql)
        let page = ConfirmPage(layout: LayoutView(req, title: "Delete \(name)", section: resource.section),
                               heading: "Delete \(resource.singular.lowercased()) “\(name)”?",
                               message: "This cannot be undone.", warning: warning,
                               action: path.delete(id), cancelURL: path.record(id), button: "Yes, delete")
        return try await req.view.render("confirm", page)
    }

    @Sendable
    func delete(req: Request) async throws -> Response {
        try requireWriter(req)
        guard resource.access.allowDelete else { throw Abort(.notFound) }
        let store = try await store(req)
        let id = try recordID(req)
        let audit = AuditWriter(staff: try req.staff)
        do {
            guard let name = try await req.transaction({ sql in try await store.delete(id, in: sql, audit: audit) }) else { throw notFound }
            req.adminSession.flash("\(resource.singular) “\(name)” was deleted.")
        } catch let error where ConstraintViolation(error)?.kind == .foreignKey {
            req.adminSession.flash("This \(resource.singular.lowercased()) is still in use and was not deleted.")
            return req.redirect(to: paths(store).record(id))
        }
        return req.redirect(to: paths(store).list)
    }
}
