/// Console paths in one place: routes and links use the same values.
enum AdminPath {
    static let dashboard = "/admin"
    static let login = "/admin/login"
    static let logout = "/admin/logout"
    static let audit = "/admin/audit"
    static let playsReport = "/admin/reports/plays"

    /// The list path of `resource`, under its parent record when nested.
    static func list(_ resource: AdminResource, parentID: Int?) -> String {
        if let parent = resource.parent, let parentID { return "/admin/\(parent.slug)/\(parentID)/\(resource.slug)" }
        return "/admin/\(resource.slug)"
    }

    static func record(_ resource: AdminResource, _ id: Int, parentID: Int?) -> String {
        list(resource, parentID: parentID) + "/\(id)"
    }

    static func history(table: String, id: Int) -> String { "\(audit)?table=\(table)&record=\(id)" }
}
