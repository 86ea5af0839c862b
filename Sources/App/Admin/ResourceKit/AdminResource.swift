import SQLKit
import Vapor

/// A console resource, declared once: the shared machinery (`ResourceController` over a
/// `ResourceStore`) and the shared templates render its list, filters, form, detail page, CSV,
/// batch actions and audit trail. `ResourceRegistry` lists them and checks each at start-up.
/// Options are grouped as Django's `ModelAdmin` groups them: what the list shows, what the form
/// edits, what a record's page shows, and who may do what.
struct AdminResource: Sendable {
    /// URL segment, e.g. "categories".
    let slug: String
    let table: String
    let singular: String
    let plural: String
    /// The record's name (over alias `t`), for titles, flashes and the confirmation page.
    let displayName: SQLFragment
    var list: List
    var form: Form
    var detail = Detail()
    var access = Access()

    /// The list page: columns, search, filters, order, batch actions, CSV export and import.
    struct List: Sendable {
        /// Tables joined to `t` for list and detail columns.
        var joins: [AdminJoin] = []
        let columns: [AdminColumn]
        var search: AdminSearch?
        var filters: [AdminFilter] = []
        let defaultSort: String
        var defaultDescending = false
        var batchActions: [AdminBatchAction] = []
        /// The CSV export's columns, when not the list's.
        var csvColumns: [AdminColumn] = []
        /// Unfiltered lists above this many rows show the planner's estimate ("about N").
        var estimateAbove: Int = 20_000
        /// A CSV import page for this resource, linked from its list for those who may write.
        var importURL: String? = nil

        var csv: [AdminColumn] { csvColumns.isEmpty ? columns : csvColumns }
    }

    /// The create and edit form, and how a save is checked and completed.
    struct Form: Sendable {
        let fields: [AdminField]
        /// Constraint name → the field it concerns and the message to show beside it.
        var constraintMessages: [String: FieldMessage] = [:]
        /// Adjusts submitted values before validation (e.g. derives a blank slug from the name).
        var prepare: @Sendable (inout FormValues) -> Void = { _ in }
        /// Rules across fields (field → message).
        var validate: @Sendable (FormValues) -> [String: String] = { _ in [:] }
        /// Checks that need the request (settings, the network), after `validate` passed (field → message).
        var check: (@Sendable (FormValues, Request) async -> [String: String])?
        /// Writes what is not a column of the table (e.g. `category_ids[]`), in the same transaction.
        var afterSave: (@Sendable (Int, FormValues, any SQLDatabase) async throws -> Void)?
        /// Values of non-column fields for the edit form.
        var loadExtra: (@Sendable (Int, any SQLDatabase) async throws -> [String: [String]])?

        var storedFields: [AdminField] { fields.filter(\.stored) }
    }

    /// A record's page: its rows, related lists, extra actions, what deleting takes along, and
    /// the record as the audit log keeps it.
    struct Detail: Sendable {
        var columns: [AdminColumn] = []
        /// Lists shown on the detail page.
        var related: [AdminRelated] = []
        /// Extra buttons for those who may write: a label and the path under the record.
        var recordActions: [RecordAction] = []
        /// What deleting a record takes with it, for the confirmation page.
        var deleteWarning: (@Sendable (Int, any SQLDatabase) async throws -> String?)?
        /// Records of another resource that deleting a record changes (a category's books lose
        /// it): each gets its own audit row, like any other change of it, in the delete's transaction.
        var deleteChanges: AdminDeleteChanges?
        /// The record as JSON for the audit log (over alias `t`).
        var snapshot: SQLFragment = "to_jsonb(t)"
    }

    /// Who may do what, and where the resource sits in the console.
    struct Access: Sendable {
        var allowCreate = true
        /// A record with nothing to edit in a form (a family: its members change on pages of their own).
        var allowEdit = true
        var allowDelete = true
        /// Staff records: admins only, reads included. Otherwise editors and admins write, viewers read.
        var requiresAdmin = false
        /// Nested resources (rights windows) live under a parent record.
        var parent: AdminParent?
        /// The navigation's label, when not the plural.
        var menuLabel: String?
    }

    /// The navigation section the resource's pages belong to (a nested one, its parent's).
    var section: String { access.parent?.slug ?? slug }
    var navigationLabel: String { access.menuLabel ?? plural }
}

struct RecordAction: Sendable {
    let label: String
    let path: String
    /// Shown to admins only (the page it opens checks again).
    var adminOnly = false
}

struct FieldMessage: Sendable {
    let field: String
    let message: String
}

/// A table joined to the record `t`: `LEFT JOIN publishers p ON p.id = t.publisher_id`.
struct AdminJoin: Sendable {
    var left = true
    let table: String
    let alias: String
    let on: SQLFragment

    func add(to builder: SQLSelectBuilder) {
        builder.join(SQLAlias(SQLIdentifier(table), as: SQLIdentifier(alias)), method: left ? SQLJoinMethod.left : SQLJoinMethod.inner, on: on)
    }
}

/// A nested resource's parent: `/admin/books/:parent_id/rights_windows`.
struct AdminParent: Sendable {
    let slug: String          // "books"
    let table: String
    let column: String        // "book_id"
    let label: String         // "Book"
    /// The parent's name, over alias `t` of its table.
    let displayName: SQLFragment
}

struct AdminRelated: Sendable {
    let title: String
    let columns: [AdminColumn]
    /// Rows for a record id; each row has `id` and the columns' keys.
    let query: @Sendable (Int) -> SQLQueryString
    /// A link for each row (e.g. to edit it), from the record id and the row id; nil for none.
    var rowLink: (@Sendable (Int, Int) -> String?)?
    /// "Manage …" link from the record id, shown to editors.
    var manageLink: (@Sendable (Int) -> (label: String, href: String))?
    var emptyText = "None."
}

struct AdminBatchAction: Sendable {
    let name: String
    let label: String
    /// A second input the action needs (a category, a status), named `target_<name>`.
    let target: AdminFilter.Kind?
    let targetLabel: String?
    /// Applies the action to `ids` through the store, in one transaction; returns the flash message.
    let run: @Sendable (_ ids: [Int], _ target: String?, _ batch: BatchChange) async throws -> String
}

/// The records of `resource` that deleting a record of another resource changes (by a cascade of
/// the database): `ids(id)` selects their `id`s. `ResourceStore.delete` audits each as `update`.
struct AdminDeleteChanges: Sendable {
    /// A closure, so resources may name each other in their declarations.
    let resource: @Sendable () -> AdminResource
    let ids: @Sendable (Int) -> SQLQueryString
}
