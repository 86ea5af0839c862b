import Vapor

/// The console's sections as staff find them: the dashboard, then groups (Catalog, Families,
/// Reports, Automation, Settings) of the pages the signed-in role may open — the layout's sidebar,
/// and the pages Ctrl-K finds.
extension LayoutView {
    struct NavGroup: Encodable {
        let id: String
        let label: String
        let items: [NavItem]
    }

    /// One place in the navigation: `section` is what a page passes to `LayoutView` to be in it.
    struct NavEntry {
        let group: String?
        let label: String
        let href: String
        let section: String
    }

    static let groups = ["Catalog", "Families", "Reports", "Automation", "Settings"]

    /// A resource's group, by its slug (a resource not named here is part of the catalog).
    static let resourceGroups = ["families": "Families", "parents": "Families", "webhook_endpoints": "Automation", "staff_users": "Settings"]

    /// The places `user` may open, in the sidebar's order within each group.
    static func entries(for user: StaffUser?) -> [NavEntry] {
        let admin = user?.isAdmin == true
        let resources = ResourceRegistry.navigation.filter { !$0.access.requiresAdmin || admin }
        func page(_ group: String, _ label: String, _ href: String, _ section: String) -> NavEntry {
            NavEntry(group: group, label: label, href: href, section: section)
        }
        return [NavEntry(group: nil, label: "Dashboard", href: AdminPath.dashboard, section: "dashboard")]
            + resources.map { page(resourceGroups[$0.slug] ?? "Catalog", $0.navigationLabel, AdminPath.list($0.slug), $0.slug) }
            + [page("Catalog", "Review queue", AdminPath.reviews, "reviews"), page("Catalog", "Preview", AdminPath.preview, "preview"),
               page("Catalog", "Rights calendar", AdminPath.rightsCalendar, "rights"),
               page("Catalog", "Missing translations", AdminPath.path(TranslationsController.path), "translations"),
               page("Reports", "Most played", AdminPath.playsReport, "reports"),
               page("Reports", "Searches that found nothing", AdminPath.searchMissesReport, "searches"),
               page("Reports", "Audit log", AdminPath.audit, "audit")]
            + (admin ? [page("Families", "Outbox", AdminPath.outbox, "outbox")] : [])
            + [page("Automation", "API tokens", AdminPath.apiTokens, "account"), page("Settings", "Your account", AdminPath.account, "account")]
    }

    /// Every place `user` may open, flat (what Ctrl-K searches).
    static func navigation(for user: StaffUser?) -> [NavItem] {
        entries(for: user).map { NavItem(label: $0.label, href: $0.href, current: false) }
    }

    /// The sidebar: the dashboard, then the groups that have a place for `user`. The current place is
    /// the page's section; where several places share it (the account's pages), the one whose path
    /// is the longest start of this page's.
    static func sidebar(for user: StaffUser?, section: String, path: String) -> (home: NavItem, groups: [NavGroup]) {
        let entries = entries(for: user)
        let candidates = entries.filter { $0.section == section }
        let current = candidates.filter { path == $0.href || path.hasPrefix($0.href + "/") }.max { $0.href.count < $1.href.count }
            ?? candidates.first
        func item(_ entry: NavEntry) -> NavItem { NavItem(label: entry.label, href: entry.href, current: entry.href == current?.href) }
        let home = entries.first { $0.group == nil }.map(item) ?? NavItem(label: "Dashboard", href: AdminPath.dashboard, current: false)
        let groups = Self.groups.compactMap { name -> NavGroup? in
            let items = entries.filter { $0.group == name }.map(item)
            return items.isEmpty ? nil : NavGroup(id: "nav-" + name.lowercased(), label: name, items: items)
        }
        return (home, groups)
    }
}
