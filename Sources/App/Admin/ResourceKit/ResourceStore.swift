import SQLKit
import Vapor

/// Every statement the console sends about a resource's records: read one, save it (create and
/// update alike, Django's `changeform_view`), delete it, change a batch — each write through
/// `audited` (`ResourceStore+Audited.swift`), with its before/after snapshots and audit rows in
/// the same transaction. Nested resources only ever touch the records of their parent.
struct ResourceStore: Sendable {
    let resource: AdminResource
    let parentID: Int?
    let sql: any SQLDatabase
    /// The time zone pages show times in (the staff member's).
    var timeZone = "UTC"

    static let record = SQLIdentifier("t")
    static var id: SQLColumn { SQLColumn("id", table: "t") }

    var table: SQLAlias { SQLAlias(SQLIdentifier(resource.table), as: Self.record) }

    /// `SELECT … FROM table t` with the resource's joins, kept to the parent's records.
    func select(joined: Bool = true) -> SQLSelectBuilder {
        select(joins: joined ? resource.list.joins : [])
    }

    func select(joins: [AdminJoin]) -> SQLSelectBuilder {
        let builder = sql.select().from(table)
        for join in joins { join.add(to: builder) }
        return scoped(builder)
    }

    /// The joins that `expressions` refer to. A query that needs none of them stays on the
    /// record's own table, where an index-only walk is possible (a join, even one the planner
    /// removes, asks for the joining column and so for the table's rows).
    func joins(usedBy expressions: [any SQLExpression]) -> [AdminJoin] {
        var serializer = SQLSerializer(database: sql)
        for expression in expressions {
            expression.serialize(to: &serializer)
            serializer.write(" ")
        }
        return resource.list.joins.filter { serializer.sql.contains("\($0.alias).") || serializer.sql.contains("\"\($0.alias)\".") }
    }

    /// Only the parent's records, when nested.
    func scoped<Builder: SQLPredicateBuilder>(_ builder: Builder) -> Builder {
        if let parent = resource.access.parent, let parentID {
            builder.where(SQLColumn(parent.column, table: "t"), .equal, SQLBind(parentID))
        }
        return builder
    }

    private var name: any SQLExpression { SQLAlias(SQLQueryString("(\(resource.displayName))::text"), as: SQLIdentifier("display_name")) }

    /// The parent record's name; nil when there is no such parent.
    func parentName() async throws -> String? {
        guard let parent = resource.access.parent, let parentID else { return nil }
        return try await sql.select().column(SQLAlias(SQLQueryString("(\(parent.displayName))::text"), as: SQLIdentifier("display_name")))
            .from(SQLAlias(SQLIdentifier(parent.table), as: Self.record)).where(Self.id, .equal, SQLBind(parentID))
            .first(decoding: ResourceRows.DisplayName.self)?.displayName
    }

    func displayName(_ id: Int, on sql: (any SQLDatabase)? = nil) async throws -> String? {
        let builder = (sql ?? self.sql).select().column(name).from(table).where(Self.id, .equal, SQLBind(id))
        return try await scoped(builder).first(decoding: ResourceRows.DisplayName.self)?.displayName
    }

    /// One record with its name and `columns` (for the detail page).
    func detail(_ id: Int, columns: [AdminColumn]) async throws -> (name: String, row: any SQLRow)? {
        let builder = select().column(name)
        for column in columns { builder.column(column.selected(in: timeZone)) }
        guard let row = try await builder.where(Self.id, .equal, SQLBind(id)).first() else { return nil }
        return (try row.decode(model: ResourceRows.DisplayName.self).displayName, row)
    }

    /// A related section's rows for record `id` (the detail page's tables).
    func related(_ section: AdminRelated, of id: Int) async throws -> [any SQLRow] {
        try await sql.raw(section.query(id)).all()
    }

    /// The stored fields as the edit form shows them, and the non-column ones (`loadExtra`).
    func formValues(_ id: Int) async throws -> FormValues? {
        let builder = select(joined: false)
        for field in resource.form.storedFields { builder.column(field.formValue) }
        guard let row = try await builder.where(Self.id, .equal, SQLBind(id)).first() else { return nil }
        var raw: [String: String] = [:]
        for field in resource.form.storedFields { raw[field.name] = try row.decode(column: field.name, as: String?.self) ?? "" }
        return FormValues(raw: raw, lists: try await resource.form.loadExtra?(id, sql) ?? [:])
    }

    /// Creates (`id` nil) or updates a record from parsed `values`, audited when its snapshot
    /// changed; its id and name, nil when there is no such record to update.
    func save(_ id: Int?, _ values: FormValues, in transaction: any SQLDatabase, audit: AuditWriter) async throws -> (id: Int, name: String)? {
        let written = try await audited(id == nil ? .create : .update, id.map { [$0] } ?? [], skippingUnchanged: true,
                                        in: transaction, audit: audit) { transaction, before in
            let saved: Int
            if let id {
                guard !before.isEmpty else { return [] }
                let update = transaction.update(table)
                for field in resource.form.storedFields { update.set(SQLIdentifier(field.name), to: values.bound(field)) }
                guard try await scoped(update.where(Self.id, .equal, SQLBind(id))).returning(Self.id).first() != nil else { return [] }
                saved = id
            } else {
                var columns = resource.form.storedFields.map(\.name)
                var binds = resource.form.storedFields.map { values.bound($0) as any SQLExpression }
                if let parent = resource.access.parent, let parentID {
                    columns.append(parent.column)
                    binds.append(SQLBind(parentID))
                }
                saved = try await transaction.insert(into: SQLIdentifier(resource.table)).columns(columns).values(binds)
                    .returning("id").first(decoding: ResourceRows.ID.self)!.id
            }
            try await resource.form.afterSave?(saved, values, transaction)
            return [saved]
        }
        guard let saved = written.first else { return nil }
        return (saved, try await displayName(saved, on: transaction) ?? "")
    }

    /// Deletes a record with its audit row; its name, nil when there is no such record. The
    /// records of another resource the delete changes (`Detail.deleteChanges`: a category's books)
    /// are locked and snapshotted first and get an `update` audit row each, in the same transaction.
    func delete(_ id: Int, in transaction: any SQLDatabase, audit: AuditWriter) async throws -> String? {
        guard let name = try await displayName(id, on: transaction) else { return nil }
        let delete = { () async throws -> Void in
            _ = try await audited(.delete, [id], in: transaction, audit: audit) { transaction, _ in
                try await scoped(transaction.delete(from: table).where(Self.id, .equal, SQLBind(id))).run()
                return AuditedChange([id], after: [:])
            }
        }
        guard let changes = resource.detail.deleteChanges else {
            try await delete()
            return name
        }
        let others = ResourceStore(resource: changes.resource(), parentID: nil, sql: transaction)
        let ids = try await transaction.raw(changes.ids(id)).all(decoding: ResourceRows.ID.self).map(\.id).sorted()
        try await others.audited(.update, ids, locking: true, skippingUnchanged: true, in: transaction, audit: audit) { _, _ in
            try await delete()
            return AuditedChange(ids)
        }
        return name
    }
}
