import SQLKit

/// What an audited change did: the ids it really changed and, when its own statement returned
/// them (a cover's row as upserted or deleted, a deleted record's nothing), their snapshots.
struct AuditedChange: ExpressibleByArrayLiteral, Sendable {
    var ids: [Int]
    /// Nil: the store's, read before the change (of the ids it was given).
    var before: [Int: String]?
    /// Nil: the store reads them after the change.
    var after: [Int: String]?

    init(_ ids: [Int], before: [Int: String]? = nil, after: [Int: String]? = nil) {
        self.ids = ids
        self.before = before
        self.after = after
    }

    init(arrayLiteral ids: Int...) { self.init(ids) }
}

/// The one path of every audited console write of a resource's records — the form's save and
/// delete, batch actions, and for books also the review steps, the CSV import, the audit log's
/// revert and the cover: the records' snapshots before, the change, their snapshots after and one
/// audit row each with its typed `AuditAction`, in the caller's transaction. What the database
/// keeps on every path is left to its triggers, fired by these same statements: a book's
/// `content_version` and review state (migrations 0034, 0036), the catalog's version and change
/// log, and the webhook outbox from the audit rows (0039).
extension ResourceStore {
    /// The console's store of books, for the paths that write books beside a book's form.
    static func books(_ sql: any SQLDatabase) -> ResourceStore {
        ResourceStore(resource: .books, parentID: nil, sql: sql)
    }

    /// JSON snapshots of `ids` for the audit log: the declaration's (`detail.snapshot`), or
    /// `fragment` over the record `t` for a change that keeps only a part (a review step, a
    /// cover). `locking`: the rows are locked `FOR UPDATE` in the same statement — the row is then
    /// read as committed, but what the fragment's subqueries read is as of the statement's start
    /// (lock in a statement of its own first when that matters, as the revert does).
    func snapshots(_ ids: [Int], of fragment: SQLFragment? = nil, locking: Bool = false, on sql: any SQLDatabase) async throws -> [Int: String] {
        guard !ids.isEmpty else { return [:] }
        let builder = sql.select().column(Self.id)
            .column(SQLAlias(SQLQueryString("(\(fragment ?? resource.detail.snapshot))::text"), as: SQLIdentifier("snapshot")))
            .from(table).where(Self.id, .equal, SQLFunction("ANY", args: SQLBind(ids)))
        if locking { _ = builder.for(.update) }
        var result: [Int: String] = [:]
        for row in try await builder.all(decoding: ResourceRows.Snapshot.self) { result[row.id] = row.snapshot }
        return result
    }

    /// Runs `change` on `ids` in `transaction` and audits what it changed as `action` (`detail`:
    /// the batch action, the entry reverted, the import): the snapshots of `ids` before (locked
    /// when `locking`; `change` gets them, and throws to refuse), `change`, which returns the ids
    /// it really changed (a record it inserted included) in the order they are audited, their
    /// snapshots after, one audit row each — only where the snapshot changed, when
    /// `skippingUnchanged`. Returns the ids `change` returned. A change whose statement returns
    /// the rows as they were (`DELETE … RETURNING`) is given no ids and returns its `before`.
    @discardableResult
    func audited(_ action: AuditAction, detail: String? = nil, _ ids: [Int], snapshot fragment: SQLFragment? = nil,
                 locking: Bool = false, skippingUnchanged: Bool = false, in transaction: any SQLDatabase, audit: AuditWriter,
                 change: (_ sql: any SQLDatabase, _ before: [Int: String]) async throws -> AuditedChange) async throws -> [Int] {
        let read = try await snapshots(ids, of: fragment, locking: locking, on: transaction)
        let changed = try await change(transaction, read)
        let before = changed.before ?? read
        let after: [Int: String]
        if let returned = changed.after { after = returned } else { after = try await snapshots(changed.ids, of: fragment, on: transaction) }
        let audited = skippingUnchanged ? changed.ids.filter { before[$0] != after[$0] } : changed.ids
        try await audit.record(action, detail: detail, table: resource.table, ids: audited, before: before, after: after, on: transaction)
        return changed.ids
    }
}

/// A batch action's view of the store: it changes records and names what it changed; the
/// before/after snapshots and the audit rows are taken by `ResourceStore.audited`, for every
/// action alike.
struct BatchChange: Sendable {
    let store: ResourceStore
    let sql: any SQLDatabase
    let audit: AuditWriter

    /// Runs `change` on `ids`, which returns the ids it really changed; those are audited as `action`.
    func audited(_ action: String, _ ids: [Int], change: @Sendable (any SQLDatabase) async throws -> [Int]) async throws -> [Int] {
        var changed: [Int] = []
        // Audited in id order: a statement returns rows in the order it found them, which moves as rows are rewritten.
        try await store.audited(.batch, detail: action, ids, in: sql, audit: audit) { sql, _ in
            changed = try await change(sql)
            return AuditedChange(changed.sorted())
        }
        return changed
    }
}
