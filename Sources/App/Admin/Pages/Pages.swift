import Core
import Vapor

/// What every console page shows around its content.
struct LayoutView: Encodable {
    struct NavItem: Encodable { let label: String; let href: String; let current: Bool }
    let title: String
    let user: String?
    let role: String?
    let canEdit: Bool
    /// The sidebar (`Navigation.swift`): the dashboard, then the groups of sections.
    let home: NavItem
    let groups: [NavGroup]
    let flash: [String]
    let csrfToken: String
    let paths = Paths()
    /// light, dark or auto (the system's, by `prefers-color-scheme`).
    let theme: String
    /// The theme the header's switch offers, and this page's path to come back to.
    let otherTheme: String
    let otherThemeLabel: String
    let back: String

    /// The console's fixed paths, for the layout's links and forms.
    struct Paths: Encodable {
        let dashboard = AdminPath.dashboard
        let logout = AdminPath.logout
        let ownPassword = AdminPath.ownPassword
        let stylesheet = AdminPath.stylesheet
        let script = AdminPath.script
        let audit = AdminPath.audit
        let playsReport = AdminPath.playsReport
        let searchMissesReport = AdminPath.searchMissesReport
        let rightsCalendar = AdminPath.rightsCalendar
        let bookImport = AdminPath.bookImport
        let books = AdminPath.list(AdminResource.books.slug)
        let account = AdminPath.account
        let theme = AdminPath.account + "/theme"
        let quickSearch = AdminPath.quickSearch
    }

    init(_ req: Request, title: String, section: String) {
        self.title = title
        let user = req.adminSession.user
        self.user = user?.email
        self.role = user?.role.rawValue
        self.canEdit = user?.canEdit ?? false
        (home, groups) = Self.sidebar(for: user, section: section, path: req.url.path)
        flash = req.adminSession.takeFlash()
        csrfToken = req.adminSession.csrfToken
        theme = user?.theme ?? "auto"
        otherTheme = theme == "dark" ? "light" : "dark"
        otherThemeLabel = theme == "dark" ? "Light mode" : "Dark mode"
        // The path only: a page's query can hold anything a link put there.
        back = ConsolePath.validated(req.url.path, under: AdminPath.dashboard) ?? AdminPath.dashboard
    }
}

struct CellView: Encodable {
    let text: String
    /// The column's format (a list's cells are styled by it: `col-link`, `col-datetime`, …).
    var kind = "text"
    var href: String?
    var badge: String?
    /// An image to show (a cover), lazy-loaded with its box's size so rows do not jump.
    var image: String?
}

struct RowView: Encodable {
    let id: Int
    let cells: [CellView]
}

struct HeaderView: Encodable {
    let label: String
    let sortURL: String?
    /// "ascending" / "descending" for aria-sort, nil when not the sort column.
    let sorted: String?
}

struct OptionView: Encodable {
    let value: String
    let label: String
    let selected: Bool
}

struct FilterView: Encodable {
    let name: String
    let label: String
    let isSelect: Bool
    let options: [OptionView]
    let value: String
    /// A picker's suggestions, for lookups with many rows.
    var lookupURL: String? = nil
}

struct PaginationView: Encodable {
    let page: Int
    let prevURL: String?
    let nextURL: String?
    let firstURL: String?
    let lastURL: String?
    let summary: String
}

struct BatchView: Encodable {
    let actions: [OptionView]
    let targets: [TargetView]
    let matchingLabel: String?
    let matchingQuery: String
    /// The choice an action needs (a category, a status), labelled with the action's own label.
    struct TargetView: Encodable { let action: String; let actionLabel: String; let label: String; let options: [OptionView] }
}

struct ListPage: Encodable {
    let layout: LayoutView
    let heading: String
    let parentHeading: String?
    let parentURL: String?
    let newURL: String?
    let newLabel: String
    let importURL: String?
    let exportURL: String
    let listURL: String
    let batchURL: String?
    let search: String?
    let searchLabel: String?
    let hasSearch: Bool
    let filters: [FilterView]
    let headers: [HeaderView]
    let rows: [RowView]
    let countText: String
    let pagination: PaginationView
    let batch: BatchView?
    let hidden: [OptionView]      // current sort/filters, kept when searching
    let perPageOptions: [OptionView]
    /// The columns a staff member may show or hide (kept in the URL as `col`, and in saved views).
    let columnOptions: [OptionView]
    let views: [SavedViews.Link]
    let saveViewURL: String?
    let currentQuery: String
    let resourceSlug: String
}

struct FieldView: Encodable {
    let name: String
    let label: String
    let type: String              // text, textarea, number, select, checkbox, datetime, checkboxes
    let value: String
    let error: String?
    let required: Bool
    let help: String?
    let options: [OptionView]
    let checked: Bool
    let min: Int?
    let max: Int?
    let maxLength: Int?
    /// A picker's suggestions (`/admin/lookup/<table>`).
    var lookupURL: String? = nil
}

struct FormPage: Encodable {
    let layout: LayoutView
    let heading: String
    let action: String
    let cancelURL: String
    let fields: [FieldView]
    let hasErrors: Bool
    let errorSummary: [String]
}

struct DetailView: Encodable {
    let label: String
    let cell: CellView
}

struct RelatedView: Encodable {
    let title: String
    let headers: [HeaderView]
    let rows: [RowView]
    let manageLabel: String?
    let manageURL: String?
    let emptyText: String
}

struct ShowPage: Encodable {
    let layout: LayoutView
    let heading: String
    let listURL: String
    let listLabel: String
    let editURL: String?
    let deleteURL: String?
    let historyURL: String
    let actions: [LayoutView.NavItem]
    let details: [DetailView]
    let related: [RelatedView]
}

struct ConfirmPage: Encodable {
    let layout: LayoutView
    let heading: String
    let message: String
    let warning: String?
    let action: String
    let cancelURL: String
    let button: String
}
