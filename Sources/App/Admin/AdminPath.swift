import Vapor

/// Console paths in one place: route registration, links built in Swift and links in templates
/// (through `LayoutView.paths` and the pages) all come from here.
enum AdminPath {
    static let prefix = "admin"

    static func path(_ segments: String...) -> String { "/" + ([prefix] + segments).joined(separator: "/") }

    static let dashboard = path()
    static let login = path("login")
    static let logout = path("logout")
    static let audit = path("audit")
    static let playsReport = path("reports", "plays")
    static let searchMissesReport = path("reports", "searches")
    static let outbox = path("outbox")
    static let rightsCalendar = path("rights", "calendar")
    static let bookImport = path("books", "import")
    static let batches = path("batches")
    static let ownPassword = path("account", "password")
    static let account = path("account")
    static let secondFactor = path("login", "code")
    static let twoFactor = path("account", "two-factor")
    static let twoFactorQR = path("account", "two-factor", "qr.svg")
    static let apiTokens = path("account", "tokens")
    static let reviews = path("reviews")
    static let preview = path("preview")
    static let quickSearch = path("search")
    static let lookup = path("lookup")
    static let savedViews = path("views")
    static let webhookDeliveries = path("webhooks", "deliveries")
    /// The console's public files (served beside it, not under it).
    static let stylesheet = "/admin.css"
    static let script = "/admin.js"

    /// The segments after `/admin` of one of the paths above, to register its route.
    static func segments(_ path: String) -> [PathComponent] {
        path.dropFirst(dashboard.count).split(separator: "/").map { .constant(String($0)) }
    }

    /// Whether a request path is the console's (security headers, session cookie).
    static func contains(_ requestPath: String) -> Bool {
        requestPath == dashboard || requestPath.hasPrefix(dashboard + "/")
    }

    static func list(_ slug: String, query: String = "") -> String { path(slug) + query }
    static func record(_ slug: String, _ id: Int) -> String { path(slug, String(id)) }
    static func staffPassword(_ id: Int) -> String { record(AdminResource.staffUsers.slug, id) + "/" + ResourcePath.password }
    static func history(table: String, id: Int) -> String { "\(audit)?table=\(table)&record=\(id)" }
}

/// The paths of one resource (under its parent record when nested); `ResourceController`
/// registers its routes with the same segments.
struct ResourcePath: Sendable {
    static let new = "new", export = "export.csv", batch = "batch", edit = "edit", delete = "delete", password = "password"

    let list: String
    /// The parent record's page, when nested.
    let parent: String?

    init(_ resource: AdminResource, parentID: Int?) {
        if let parentResource = resource.access.parent, let parentID {
            let parent = AdminPath.record(parentResource.slug, parentID)
            self.parent = parent
            list = parent + "/" + resource.slug
        } else {
            parent = nil
            list = AdminPath.list(resource.slug)
        }
    }

    var new: String { list + "/" + Self.new }
    var export: String { list + "/" + Self.export }
    var batch: String { list + "/" + Self.batch }
    func record(_ id: Int) -> String { list + "/\(id)" }
    func edit(_ id: Int) -> String { record(id) + "/" + Self.edit }
    func delete(_ id: Int) -> String { record(id) + "/" + Self.delete }
    func action(_ id: Int, _ action: RecordAction) -> String { record(id) + "/" + action.path }
}
