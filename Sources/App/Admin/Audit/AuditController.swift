import Core
import SQLKit
import Vapor

/// `/admin/audit`: who changed what and when, with before → after, filterable by staff user and
/// by record (`?staff=ID`, `?table=books&record=ID`).
struct AuditController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.audit), use: list)
        routes.get(AdminPath.segments(AdminPath.audit) + [":audit_id", "revert"], use: confirmRevert)
        routes.post(AdminPath.segments(AdminPath.audit) + [":audit_id", "revert"], use: revert)
    }

    struct Change: Encodable { let field: String; let before: String; let after: String }
    struct Entry: Encodable {
        let when: String
        let who: String
        let action: String
        let record: String
        let recordURL: String?
        let changes: [Change]
        let revertURL: String?
    }
    struct Page: Encodable {
        let layout: LayoutView
        let entries: [Entry]
        let staff: [OptionView]
        let tables: [OptionView]
        let record: String
        let nextURL: String?
        let prevURL: String?
        let heading: String
    }

    static let perPage = 50
    static let tables = ResourceRegistry.all.map(\.table)
    /// Staff accounts (emails, roles) are admin-only records, in the audit as everywhere.
    static let adminOnlyTables = Set(ResourceRegistry.all.filter(\.access.requiresAdmin).map(\.table))

    @Sendable
    func list(req: Request) async throws -> View {
        let query = QueryParameters(query: req.url.query)
        let staffID = (try? query.integer("staff", in: 1...Int(Int64.max), what: "")) ?? nil
        let table = (try? query.value("table")).flatMap { $0.flatMap { Self.tables.contains($0) ? $0 : nil } }
        let record = (try? query.integer("record", in: 1...Int(Int64.max), what: "")) ?? nil
        let page = ((try? query.integer("page", in: 1...100_000, what: "")) ?? nil) ?? 1
        let visibleTables = try req.staff.isAdmin ? Self.tables : Self.tables.filter { !Self.adminOnlyTables.contains($0) }
        let filter = AuditQueries.Filter(visibleTables: visibleTables.count < Self.tables.count ? visibleTables : nil,
                                         staffID: staffID, table: table, record: record)
        let rows = try await AuditQueries.entries(filter, limit: Self.perPage + 1, offset: (page - 1) * Self.perPage, on: req.sql)
        let staffUser = try req.staff
        // One format for times, in the staff member's zone (the zone named after the time).
        let time = StaffTime(staffUser)
        let entries = rows.prefix(Self.perPage).map { row -> Entry in
            let table = row.tableName, id = row.recordId
            let revertible = AuditRevert.tables.contains(table) && staffUser.canEdit && row.kind.revertible
            return Entry(when: time.format(row.at) + " " + time.abbreviation, who: staffUser.name(ofStaff: row.staffUserId, email: row.staffEmail),
                         action: row.action,
                         record: "\(table) #\(id.map(String.init) ?? "?")",
                         recordURL: id.flatMap { Self.recordURL(table: table, id: $0) },
                         changes: Self.diff(before: row.before, after: row.after),
                         revertURL: revertible ? Self.revertPath(row.id) : nil)
        }
        let staff = [OptionView(value: "", label: "Anyone", selected: staffID == nil)] + (try await AuditQueries.staff(on: req.sql)).map {
            OptionView(value: String($0.id), label: staffUser.name(ofStaff: $0.id, email: $0.email), selected: $0.id == staffID)
        }
        let tables = [OptionView(value: "", label: "Any", selected: table == nil)] + visibleTables.map { OptionView(value: $0, label: $0, selected: $0 == table) }
        func url(_ page: Int) -> String { AdminPath.audit + "?" + query.setting("page", to: String(page)).encoded }
        return try await req.view.render("audit", Page(
            layout: LayoutView(req, title: "Audit log", section: "audit"), entries: Array(entries), staff: staff, tables: tables,
            record: record.map(String.init) ?? "",
            nextURL: rows.count > Self.perPage ? url(page + 1) : nil, prevURL: page > 1 ? url(page - 1) : nil,
            heading: table.map { t in record.map { "History of \(t) #\($0)" } ?? "Changes to \(t)" } ?? "Audit log"))
    }

    static func revertPath(_ auditID: Int) -> String { AdminPath.audit + "/\(auditID)/revert" }

    /// The change to revert, when the caller may write its records; 404 for anything else.
    private func revertable(_ req: Request) async throws -> AuditRevert {
        guard let id = req.parameters.get("audit_id").flatMap({ Int($0) }), id > 0,
              let revert = try await AuditRevert.load(id, on: req.sql) else {
            throw Abort(.notFound, reason: "This change cannot be reverted.")
        }
        if revert.resource.access.requiresAdmin { try req.requireAdmin() } else { try req.requireEditor() }
        return revert
    }

    private func confirmPage(_ req: Request, _ revert: AuditRevert, refusal: String?) -> ConfirmPage {
        ConfirmPage(layout: LayoutView(req, title: "Revert change #\(revert.auditID)", section: "audit"),
                    heading: "Revert change #\(revert.auditID) (\(revert.action)) of \(revert.resource.table) #\(revert.recordID)?",
                    message: revert.summary + " The revert is itself a change in the audit log.", warning: refusal,
                    action: Self.revertPath(revert.auditID), cancelURL: AdminPath.history(table: revert.resource.table, id: revert.recordID),
                    button: "Yes, revert")
    }

    /// Undoing a create deletes: the confirmation warns as the record's own delete would.
    @Sendable
    func confirmRevert(req: Request) async throws -> View {
        let revert = try await revertable(req)
        var warning: String?
        if case .delete = revert.kind { warning = try await revert.resource.detail.deleteWarning?(revert.recordID, req.sql) }
        return try await req.view.render("confirm", confirmPage(req, revert, refusal: warning))
    }

    /// Runs the revert in one transaction; a refusal (changed since, in use, gone) shows the
    /// confirmation again with the reason and changes nothing.
    @Sendable
    func revert(req: Request) async throws -> Response {
        let revert = try await revertable(req)
        let audit = AuditWriter(staff: try req.staff)
        let refusal: String
        do {
            try await req.transaction { sql in try await revert.run(in: sql, audit: audit) }
            req.adminSession.flash("Change #\(revert.auditID) was reverted.")
            let target = Self.recordURL(table: revert.resource.table, id: revert.recordID)
            if case .delete = revert.kind { return req.redirect(to: AdminPath.history(table: revert.resource.table, id: revert.recordID)) }
            return req.redirect(to: target ?? AdminPath.history(table: revert.resource.table, id: revert.recordID))
        } catch let refused as AuditRevert.Refused {
            refusal = refused.message
        } catch let error where ConstraintViolation(error)?.kind == .foreignKey {
            if case .delete = revert.kind {
                refusal = "This \(revert.resource.singular.lowercased()) is in use now, so it was not deleted."
            } else {
                refusal = "What this record pointed to (its book, publisher or a category) no longer exists."
            }
        } catch let error where ConstraintViolation(error) != nil {
            refusal = "The database refused the old values: \(ConstraintViolation(error)!.kind) constraint."
        }
        let response = try await req.view.render("confirm", confirmPage(req, revert, refusal: refusal)).encodeResponse(for: req)
        response.status = .conflict
        return response
    }

    static func recordURL(table: String, id: Int) -> String? {
        // A nested record (a rights window) has no page of its own without its parent.
        guard let resource = ResourceRegistry.resource(table: table), resource.access.parent == nil else { return nil }
        return AdminPath.record(resource.slug, id)
    }

    /// The fields that differ between two JSON snapshots (all of them for a create or delete).
    static func diff(before: String?, after: String?) -> [Change] {
        func object(_ text: String?) -> [String: Any] {
            guard let text, let data = text.data(using: .utf8) else { return [:] }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        }
        func show(_ value: Any?) -> String {
            guard let value, !(value is NSNull) else { return "—" }
            if let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]),
               let text = String(data: data, encoding: .utf8) {
                return text.hasPrefix("\"") && text.hasSuffix("\"") ? String(text.dropFirst().dropLast()) : text
            }
            return String(describing: value)
        }
        let old = object(before), new = object(after)
        let keys = Set(old.keys).union(new.keys).subtracting(["updated_at", "created_at"]).sorted()
        return keys.compactMap { key in
            let a = show(old[key]), b = show(new[key])
            return a == b ? nil : Change(field: key, before: a, after: b)
        }
    }
}
