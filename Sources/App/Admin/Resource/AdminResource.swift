import Core
import SQLKit
import Vapor

/// A console resource, declared once: the shared machinery (`ResourceController`) and the shared
/// templates render its list, filters, form, detail page, CSV, batch actions and audit trail.
struct AdminResource: Sendable {
    /// URL segment, e.g. "categories".
    let slug: String
    let table: String
    let singular: String
    let plural: String
    /// SQL (over alias `t`) naming one record, for titles, flashes and the audit log.
    let displayName: String
    /// Extra joins after `FROM table t` for list and detail columns.
    var joins: String = ""
    let columns: [AdminColumn]
    var detail: [AdminColumn] = []
    var search: AdminSearch?
    var filters: [AdminFilter] = []
    let fields: [AdminField]
    let defaultSort: String
    var defaultDescending = false
    var batchActions: [AdminBatchAction] = []
    var csvColumns: [AdminColumn] = []
    /// Constraint name → the field it concerns and the message to show beside it.
    var constraintMessages: [String: FieldMessage] = [:]
    /// Adjusts submitted values before validation (e.g. derives a blank slug from the name).
    var prepare: @Sendable (inout FormValues) -> Void = { _ in }
    /// Rules across fields (field → message).
    var validate: @Sendable (FormValues) -> [String: String] = { _ in [:] }
    /// Writes what is not a column of the table (e.g. `category_ids[]`), in the same transaction.
    var afterSave: (@Sendable (Int, FormValues, any SQLDatabase) async throws -> Void)?
    /// Values of non-column fields for the edit form.
    var loadExtra: (@Sendable (Int, any SQLDatabase) async throws -> [String: [String]])?
    /// What deleting a record takes with it, for the confirmation page.
    var deleteWarning: (@Sendable (Int, any SQLDatabase) async throws -> String?)?
    /// Lists shown on the detail page.
    var related: [AdminRelated] = []
    /// The record as JSON for the audit log (over alias `t`).
    var snapshot: String = "to_jsonb(t)"
    /// Nested resources (rights windows) live under a parent record.
    var parent: AdminParent?
    /// Unfiltered lists above this many rows show the planner's estimate ("about N").
    var estimateAbove: Int = 20_000
    var allowCreate = true
    var allowDelete = true
    /// A role that may write; viewers never may.
    var requiresAdmin = false
    /// Extra buttons on a record's page for those who may write: a label and the path under the record.
    var recordActions: [(label: String, path: String)] = []

    var csv: [AdminColumn] { csvColumns.isEmpty ? columns : csvColumns }
    var storedFields: [AdminField] { fields.filter(\.stored) }
}

struct FieldMessage: Sendable {
    let field: String
    let message: String
}

/// A nested resource's parent: `/admin/books/:parent_id/rights_windows`.
struct AdminParent: Sendable {
    let slug: String          // "books"
    let column: String        // "book_id"
    let label: String         // "Book"
    let displaySQL: String    // name of the parent, over alias `p` of its table
    let table: String
}

struct AdminColumn: Sendable {
    enum Format: String, Sendable { case text, link, duration, boolean, datetime, badge, number }
    let key: String
    let label: String
    let sql: String
    var sortable = false
    var format: Format = .text

    init(_ key: String, _ label: String, sql: String? = nil, sortable: Bool = false, format: Format = .text) {
        self.key = key
        self.label = label
        self.sql = sql ?? "t.\(key)"
        self.sortable = sortable
        self.format = format
    }
}

struct AdminSearch: Sendable {
    let label: String
    let condition: @Sendable (String) -> SQLQueryString?
}

struct Choice: Sendable, Encodable, Equatable {
    let value: String
    let label: String
}

struct AdminFilter: Sendable {
    enum Kind: Sendable {
        case choices([Choice])
        /// `SELECT value, label …` run once per page.
        case lookup(String)
        case integer(ClosedRange<Int>)
    }
    let name: String
    let label: String
    let kind: Kind
    /// The SQL condition for a valid value; nil when the value is not acceptable (ignored).
    let condition: @Sendable (String) -> SQLQueryString?
}

struct AdminField: Sendable {
    enum Kind: Sendable {
        case text(maxLength: Int)
        case textarea(maxLength: Int)
        case integer(ClosedRange<Int>)
        case choice([Choice])
        case lookup(String)
        case checkbox
        case datetime
        /// Checkboxes named `name[]`, not a column (see `afterSave`).
        case multiLookup(String)
    }
    let name: String
    let label: String
    let kind: Kind
    var required = false
    var help: String?
    /// Blank means NULL (rather than an error when required, or "" for text).
    var nullable = false
    var defaultValue: String?

    var stored: Bool {
        if case .multiLookup = kind { return false }
        return true
    }

    /// The SQL type a bound value is cast to.
    var sqlType: String {
        switch kind {
        case .text, .textarea, .choice: return "text"
        case .integer: return "integer"
        case .lookup: return "bigint"
        case .checkbox: return "boolean"
        case .datetime: return "timestamptz"
        case .multiLookup: return "bigint[]"
        }
    }

    /// SQL (over alias `t`) giving the value as the form shows it.
    var formSQL: String {
        switch kind {
        case .datetime: return "to_char(t.\(name) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI')"
        case .checkbox: return "CASE WHEN t.\(name) THEN 'on' END"
        default: return "t.\(name)::text"
        }
    }
}

struct AdminRelated: Sendable {
    let title: String
    let columns: [AdminColumn]
    /// Rows for a record id; each row has `id` and the columns' keys.
    let query: @Sendable (Int) -> SQLQueryString
    /// A link for each row (e.g. to edit it), from the record id and the row id.
    var rowLink: (@Sendable (Int, Int) -> String)?
    /// "Manage …" link from the record id, shown to editors.
    var manageLink: (@Sendable (Int) -> (label: String, href: String))?
    var emptyText = "None."
}

struct AdminBatchAction: Sendable {
    let name: String
    let label: String
    /// A second input the action needs (a category, a status), named `target`.
    let target: AdminFilter.Kind?
    let targetLabel: String?
    /// Applies the action to `ids` in the caller's transaction; returns the flash message.
    let run: @Sendable (_ ids: [Int], _ target: String?, _ sql: any SQLDatabase, _ audit: AuditWriter) async throws -> String
}
