import Core
import SQLKit
import Vapor

/// The shared machinery: list, filter, sort, paginate, export, batch, create, show, edit, delete
/// and audit for any declared `AdminResource`.
struct ResourceController: RouteCollection, Sendable {
    let resource: AdminResource

    func boot(routes: any RoutesBuilder) throws {
        var base: [PathComponent] = []
        // A nested resource's parent id takes the name the parent's own routes use (":id"):
        // the router needs one parameter name per position.
        if let parent = resource.parent { base = [.constant(parent.slug), .parameter("id")] }
        base.append(.constant(resource.slug))
        let id: PathComponent = .parameter(idParameter)
        routes.get(base, use: list)
        routes.get(base + ["export.csv"], use: export)
        routes.post(base + ["batch"], use: batch)
        routes.get(base + ["new"], use: new)
        routes.post(base, use: create)
        routes.get(base + [id], use: show)
        routes.get(base + [id, "edit"], use: edit)
        routes.post(base + [id], use: update)
        routes.get(base + [id, "delete"], use: confirmDelete)
        routes.post(base + [id, "delete"], use: delete)
    }

    // MARK: - Request parts

    private var idParameter: String { resource.parent == nil ? "id" : "record_id" }

    private func parentID(_ req: Request) async throws -> Int? {
        guard let parent = resource.parent else { return nil }
        guard let id = req.parameters.get("id").flatMap(Int.init), id > 0,
              try await req.sql.raw("SELECT 1 AS one FROM \(ident: parent.table) WHERE id = \(bind: id)").first() != nil else {
            throw Abort(.notFound, reason: "No such \(parent.label.lowercased()).")
        }
        return id
    }

    private func recordID(_ req: Request) throws -> Int {
        guard let id = req.parameters.get(idParameter).flatMap(Int.init), id > 0 else {
            throw Abort(.notFound, reason: "No such \(resource.singular.lowercased()).")
        }
        return id
    }

    private func scope(_ parentID: Int?) -> [SQLQueryString] {
        guard let parent = resource.parent, let parentID else { return [] }
        return ["t.\(unsafeRaw: parent.column) = \(bind: parentID)"]
    }

    /// Resources for admins only (staff) are hidden from everyone else, reads included.
    private func requireReader(_ req: Request) throws {
        if resource.requiresAdmin { try requireAdmin(req) }
    }

    private func requireWriter(_ req: Request) throws {
        if resource.requiresAdmin { try requireAdmin(req) } else { try requireEditor(req) }
    }

    // MARK: - List

    @Sendable
    func list(req: Request) async throws -> View {
        try requireReader(req)
        let parentID = try await parentID(req)
        let listing = try await ResourceListing(resource: resource, req: req, parentID: parentID)
        return try await req.view.render("list", listing.page())
    }

    /// The CSV of the current filter, streamed in keyset-ordered chunks so a million rows never
    /// sit in memory.
    @Sendable
    func export(req: Request) async throws -> Response {
        try requireReader(req)
        let parentID = try await parentID(req)
        let listing = try await ResourceListing(resource: resource, req: req, parentID: parentID, forExport: true)
        let conditions = listing.conditions
        let columns = resource.csv
        let resource = self.resource
        let sql = req.sql
        let response = Response(status: .ok, body: .init(asyncStream: { writer in
            do {
                try await writer.write(.buffer(ByteBuffer(string: CSV.line(["id"] + columns.map(\.label)))))
                var lastID = 0
                while true {
                    let rows = try await sql.raw("""
                        SELECT t.id AS row_id, \(ResourceListing.select(columns)) FROM \(ident: resource.table) t \(unsafeRaw: resource.joins)
                         WHERE \((conditions + ["t.id > \(bind: lastID)"]).joined(separator: " AND "))
                         ORDER BY t.id LIMIT 2000
                        """).all()
                    guard !rows.isEmpty else { break }
                    var chunk = ""
                    for row in rows {
                        lastID = try row.decode(column: "row_id", as: Int.self)
                        let cells = try columns.map { try ResourceListing.cellText(row, $0) }
                        chunk += CSV.line([String(lastID)] + cells)
                    }
                    try await writer.write(.buffer(ByteBuffer(string: chunk)))
                }
                try await writer.write(.end)
            } catch {
                try? await writer.write(.error(error))
            }
        }))
        response.headers.contentType = HTTPMediaType(type: "text", subType: "csv", parameters: ["charset": "utf-8"])
        response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"\(resource.slug).csv\"")
        return response
    }

    @Sendable
    func batch(req: Request) async throws -> Response {
        try requireWriter(req)
        let parentID = try await parentID(req)
        let form = try FormBody(req)
        let back = form.value("return_to").flatMap { ConsolePath.validated($0, under: AdminPath.list(resource, parentID: parentID)) }
            ?? AdminPath.list(resource, parentID: parentID)
        guard let action = resource.batchActions.first(where: { $0.name == form.value("action") }) else {
            req.adminSession.flash("Choose an action for the selected rows.")
            return req.redirect(to: back)
        }
        let ids = Array(Set(form.values("ids[]").compactMap(Int.init).filter { $0 > 0 })).sorted()
        guard !ids.isEmpty else {
            req.adminSession.flash("Select at least one row first.")
            return req.redirect(to: back)
        }
        let target = form.value("target_\(action.name)").flatMap { $0.isEmpty ? nil : $0 }
        if action.target != nil && target == nil {
            req.adminSession.flash("Choose a \(action.targetLabel?.lowercased() ?? "target") for “\(action.label)”.")
            return req.redirect(to: back)
        }
        let audit = AuditWriter(staff: try req.staff)
        do {
            let message = try await req.transaction { sql in try await action.run(ids, target, sql, audit) }
            req.adminSession.flash(message)
        } catch let error where ConstraintViolation(error) != nil {
            req.adminSession.flash("Nothing changed: that \(action.targetLabel?.lowercased() ?? "choice") does not exist any more.")
        }
        return req.redirect(to: back)
    }

    // MARK: - Show

    @Sendable
    func show(req: Request) async throws -> View {
        try requireReader(req)
        let parentID = try await parentID(req)
        let id = try recordID(req)
        let columns = resource.detail.isEmpty ? resource.columns : resource.detail
        guard let row = try await req.sql.raw("""
            SELECT t.id AS row_id, (\(unsafeRaw: resource.displayName))::text AS display_name, \(ResourceListing.select(columns))
              FROM \(ident: resource.table) t \(unsafeRaw: resource.joins)
             WHERE \((scope(parentID) + ["t.id = \(bind: id)"]).joined(separator: " AND "))
            """).first() else {
            throw Abort(.notFound, reason: "No such \(resource.singular.lowercased()).")
        }
        let staff = try req.staff
        let name = try row.decode(column: "display_name", as: String.self)
        let details = try columns.map { DetailView(label: $0.label, cell: try ResourceListing.cell(row, $0, resource: resource, id: id, parentID: parentID)) }
        var related: [RelatedView] = []
        for section in resource.related {
            let rows = try await req.sql.raw(section.query(id)).all()
            let views = try rows.map { row -> RowView in
                let rowID = try row.decode(column: "id", as: Int.self)
                var cells = try section.columns.map { CellView(text: try ResourceListing.cellText(row, $0), badge: $0.format == .badge ? try ResourceListing.cellText(row, $0) : nil) }
                if let link = section.rowLink, !cells.isEmpty { cells[0].href = link(id, rowID) }
                return RowView(id: rowID, cells: cells)
            }
            let manage = staff.canEdit ? section.manageLink?(id) : nil
            related.append(RelatedView(title: section.title, headers: section.columns.map { HeaderView(label: $0.label, sortURL: nil, sorted: nil) },
                                       rows: views, manageLabel: manage?.label, manageURL: manage?.href, emptyText: section.emptyText))
        }
        let writer = resource.requiresAdmin ? staff.isAdmin : staff.canEdit
        let page = ShowPage(
            layout: LayoutView(req, title: name, section: resource.parent?.slug ?? resource.slug),
            heading: "\(resource.singular): \(name)",
            listURL: AdminPath.list(resource, parentID: parentID), listLabel: "All \(resource.plural.lowercased())",
            editURL: writer ? AdminPath.record(resource, id, parentID: parentID) + "/edit" : nil,
            deleteURL: writer && resource.allowDelete ? AdminPath.record(resource, id, parentID: parentID) + "/delete" : nil,
            historyURL: AdminPath.history(table: resource.table, id: id),
            actions: writer ? resource.recordActions.map { .init(label: $0.label, href: AdminPath.record(resource, id, parentID: parentID) + "/" + $0.path, current: false) } : [],
            details: details, related: related)
        return try await req.view.render("show", page)
    }

    // MARK: - Forms

    @Sendable
    func new(req: Request) async throws -> View {
        try requireWriter(req)
        guard resource.allowCreate else { throw Abort(.notFound) }
        let parentID = try await parentID(req)
        var raw: [String: String] = [:]
        for field in resource.fields { raw[field.name] = field.defaultValue ?? "" }
        return try await renderForm(req, values: FormValues(raw: raw, lists: [:]), errors: [:], id: nil, parentID: parentID)
    }

    @Sendable
    func edit(req: Request) async throws -> View {
        try requireWriter(req)
        let parentID = try await parentID(req)
        let id = try recordID(req)
        let selects = resource.storedFields.map { "\($0.formSQL) AS \"\($0.name)\"" }.joined(separator: ", ")
        guard let row = try await req.sql.raw("""
            SELECT \(unsafeRaw: selects) FROM \(ident: resource.table) t WHERE \((scope(parentID) + ["t.id = \(bind: id)"]).joined(separator: " AND "))
            """).first() else {
            throw Abort(.notFound, reason: "No such \(resource.singular.lowercased()).")
        }
        var raw: [String: String] = [:]
        for field in resource.storedFields { raw[field.name] = try row.decode(column: field.name, as: String?.self) ?? "" }
        let lists = try await resource.loadExtra?(id, req.sql) ?? [:]
        return try await renderForm(req, values: FormValues(raw: raw, lists: lists), errors: [:], id: id, parentID: parentID)
    }

    private func renderForm(_ req: Request, values: FormValues, errors: [String: String], id: Int?, parentID: Int?) async throws -> View {
        var fields: [FieldView] = []
        var lookups: [String: [Choice]] = [:]
        for field in resource.fields {
            var options: [Choice] = []
            switch field.kind {
            case .choice(let choices): options = choices
            case .lookup(let query), .multiLookup(let query):
                if lookups[query] == nil { lookups[query] = try await ResourceListing.lookup(query, on: req.sql) }
                options = lookups[query]!
            default: break
            }
            fields.append(FormRenderer.field(field, values: values, error: errors[field.name], options: options))
        }
        let name = id.map { "\(resource.singular) #\($0)" }
        let heading = id == nil ? "New \(resource.singular.lowercased())" : "Edit \(name!.lowercased())"
        let action = id.map { AdminPath.record(resource, $0, parentID: parentID) } ?? AdminPath.list(resource, parentID: parentID)
        let cancel = id.map { AdminPath.record(resource, $0, parentID: parentID) } ?? AdminPath.list(resource, parentID: parentID)
        let summary = resource.fields.compactMap { field in errors[field.name].map { "\(field.label): \($0)" } }
        let page = FormPage(layout: LayoutView(req, title: heading, section: resource.parent?.slug ?? resource.slug),
                            heading: heading, action: action, cancelURL: cancel, fields: fields,
                            hasErrors: !errors.isEmpty, errorSummary: summary)
        return try await req.view.render("form", page)
    }

    /// Parses and validates a submission; nil errors means ready to save.
    private func submission(_ req: Request) throws -> (FormValues, [String: String]) {
        var values = FormValues(form: try FormBody(req), fields: resource.fields)
        resource.prepare(&values)
        var errors = values.parse(resource.fields)
        if errors.isEmpty { errors = resource.validate(values) }
        return (values, errors)
    }

    private func invalid(_ req: Request, _ values: FormValues, _ errors: [String: String], id: Int?, parentID: Int?) async throws -> Response {
        let response = try await renderForm(req, values: values, errors: errors, id: id, parentID: parentID).encodeResponse(for: req)
        response.status = .unprocessableEntity
        return response
    }

    /// A constraint violation as a field error, when the resource names it.
    private func fieldError(for error: any Error) -> [String: String]? {
        guard let violation = ConstraintViolation(error) else { return nil }
        if let message = resource.constraintMessages[violation.constraint] { return [message.field: message.message] }
        if violation.kind == .foreignKey, let field = resource.fields.first(where: { violation.constraint.contains($0.name) }) {
            return [field.name: "Choose from the list."]
        }
        return ["_": "The database refused this change (\(violation.constraint))."]
    }

    @Sendable
    func create(req: Request) async throws -> Response {
        try requireWriter(req)
        guard resource.allowCreate else { throw Abort(.notFound) }
        let parentID = try await parentID(req)
        let (values, errors) = try submission(req)
        guard errors.isEmpty else { return try await invalid(req, values, errors, id: nil, parentID: parentID) }
        let resource = self.resource
        let audit = AuditWriter(staff: try req.staff)
        var columns = resource.storedFields.map { SQLQueryString("\"\($0.name)\"") }
        var binds = resource.storedFields.map { values.sql($0) }
        if let parent = resource.parent, let parentID {
            columns.append(SQLQueryString("\"\(parent.column)\""))
            binds.append("\(bind: parentID)")
        }
        let insertColumns = columns.joined(separator: ", ")
        let insertValues = binds.joined(separator: ", ")
        do {
            let (id, name) = try await req.transaction { sql -> (Int, String) in
                let row = try await sql.raw("""
                    INSERT INTO \(ident: resource.table) (\(insertColumns)) VALUES (\(insertValues)) RETURNING id
                    """).first()!
                let id = try row.decode(column: "id", as: Int.self)
                try await resource.afterSave?(id, values, sql)
                let after = try await AuditWriter.snapshots(resource.snapshot, table: resource.table, ids: [id], on: sql)
                try await audit.record("create", table: resource.table, ids: [id], before: [:], after: after, on: sql)
                let name = try await sql.raw("SELECT (\(unsafeRaw: resource.displayName))::text AS n FROM \(ident: resource.table) t WHERE t.id = \(bind: id)")
                    .first()!.decode(column: "n", as: String.self)
                return (id, name)
            }
            req.adminSession.flash("\(resource.singular) “\(name)” was created.")
            return req.redirect(to: AdminPath.record(resource, id, parentID: parentID))
        } catch {
            guard let fieldErrors = fieldError(for: error) else { throw error }
            return try await invalid(req, values, fieldErrors, id: nil, parentID: parentID)
        }
    }

    @Sendable
    func update(req: Request) async throws -> Response {
        try requireWriter(req)
        let parentID = try await parentID(req)
        let id = try recordID(req)
        let (values, errors) = try submission(req)
        guard errors.isEmpty else { return try await invalid(req, values, errors, id: id, parentID: parentID) }
        let resource = self.resource
        let audit = AuditWriter(staff: try req.staff)
        let assignments = resource.storedFields.map { SQLQueryString("\"\($0.name)\" = ") + values.sql($0) }.joined(separator: ", ")
        let conditions = (scope(parentID) + ["t.id = \(bind: id)"]).joined(separator: " AND ")
        do {
            let name = try await req.transaction { sql -> String? in
                let before = try await AuditWriter.snapshots(resource.snapshot, table: resource.table, ids: [id], on: sql)
                guard !before.isEmpty, try await sql.raw("""
                    UPDATE \(ident: resource.table) t SET \(assignments) WHERE \(conditions) RETURNING t.id
                    """).first() != nil else { return nil }
                try await resource.afterSave?(id, values, sql)
                let after = try await AuditWriter.snapshots(resource.snapshot, table: resource.table, ids: [id], on: sql)
                if before[id] != after[id] {
                    try await audit.record("update", table: resource.table, ids: [id], before: before, after: after, on: sql)
                }
                return try await sql.raw("SELECT (\(unsafeRaw: resource.displayName))::text AS n FROM \(ident: resource.table) t WHERE t.id = \(bind: id)")
                    .first()!.decode(column: "n", as: String.self)
            }
            guard let name else { throw Abort(.notFound, reason: "No such \(resource.singular.lowercased()).") }
            req.adminSession.flash("\(resource.singular) “\(name)” was saved.")
            return req.redirect(to: AdminPath.record(resource, id, parentID: parentID))
        } catch {
            guard let fieldErrors = fieldError(for: error) else { throw error }
            return try await invalid(req, values, fieldErrors, id: id, parentID: parentID)
        }
    }

    // MARK: - Delete

    @Sendable
    func confirmDelete(req: Request) async throws -> View {
        try requireWriter(req)
        guard resource.allowDelete else { throw Abort(.notFound) }
        let parentID = try await parentID(req)
        let id = try recordID(req)
        guard let row = try await req.sql.raw("""
            SELECT (\(unsafeRaw: resource.displayName))::text AS n FROM \(ident: resource.table) t
             WHERE \((scope(parentID) + ["t.id = \(bind: id)"]).joined(separator: " AND "))
            """).first() else {
            throw Abort(.notFound, reason: "No such \(resource.singular.lowercased()).")
        }
        let name = try row.decode(column: "n", as: String.self)
        let warning = try await resource.deleteWarning?(id, req.sql)
        let page = ConfirmPage(layout: LayoutView(req, title: "Delete \(name)", section: resource.parent?.slug ?? resource.slug),
                               heading: "Delete \(resource.singular.lowercased()) “\(name)”?",
                               message: "This cannot be undone.", warning: warning,
                               action: AdminPath.record(resource, id, parentID: parentID) + "/delete",
                               cancelURL: AdminPath.record(resource, id, parentID: parentID), button: "Yes, delete")
        return try await req.view.render("confirm", page)
    }

    @Sendable
    func delete(req: Request) async throws -> Response {
        try requireWriter(req)
        guard resource.allowDelete else { throw Abort(.notFound) }
        let parentID = try await parentID(req)
        let id = try recordID(req)
        let resource = self.resource
        let audit = AuditWriter(staff: try req.staff)
        let conditions = (scope(parentID) + ["t.id = \(bind: id)"]).joined(separator: " AND ")
        do {
            let name = try await req.transaction { sql -> String? in
                guard let row = try await sql.raw("SELECT (\(unsafeRaw: resource.displayName))::text AS n FROM \(ident: resource.table) t WHERE \(conditions)").first() else {
                    return nil
                }
                let before = try await AuditWriter.snapshots(resource.snapshot, table: resource.table, ids: [id], on: sql)
                try await sql.raw("DELETE FROM \(ident: resource.table) t WHERE \(conditions)").run()
                try await audit.record("delete", table: resource.table, ids: [id], before: before, after: [:], on: sql)
                return try row.decode(column: "n", as: String.self)
            }
            guard let name else { throw Abort(.notFound, reason: "No such \(resource.singular.lowercased()).") }
            req.adminSession.flash("\(resource.singular) “\(name)” was deleted.")
        } catch let error where ConstraintViolation(error)?.kind == .foreignKey {
            req.adminSession.flash("This \(resource.singular.lowercased()) is still in use and was not deleted.")
            return req.redirect(to: AdminPath.record(resource, id, parentID: parentID))
        }
        return req.redirect(to: AdminPath.list(resource, parentID: parentID))
    }
}

enum CSV {
    /// One CSV line; cells that a spreadsheet would run as formulas are defused.
    static func line(_ cells: [String]) -> String {
        cells.map { cell -> String in
            var text = cell
            if let first = text.first, "=+-@".contains(first), Int(text) == nil { text = "'" + text }
            if text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            }
            return text
        }.joined(separator: ",") + "\r\n"
    }
}
