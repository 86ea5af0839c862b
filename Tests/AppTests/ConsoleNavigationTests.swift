@testable import App
import Testing

@Suite("The console's sidebar")
struct ConsoleNavigationTests {
    static let admin = StaffUser(id: 1, email: "a@x.test", role: .admin)
    static let editor = StaffUser(id: 2, email: "e@x.test", role: .editor)

    static func labels(_ groups: [LayoutView.NavGroup]) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: groups.map { ($0.label, $0.items.map(\.label)) })
    }

    static func paths(_ groups: [LayoutView.NavGroup]) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: groups.map { ($0.label, $0.items.map(\.href)) })
    }

    @Test("an admin sees every group, each place once, in the groups staff expect")
    func adminGroups() {
        let (home, groups) = LayoutView.sidebar(for: Self.admin, section: "dashboard", path: AdminPath.dashboard)
        #expect(home.label == "Dashboard" && home.current)
        #expect(groups.map(\.label) == ["Catalog", "Families", "Reports", "Automation", "Settings"])
        let byGroup = Self.labels(groups)
        #expect(byGroup["Catalog"] == ["Books", "Categories", "Publishers", "Video assets", "Search synonyms", "Review queue", "Preview", "Rights calendar", "Missing translations"])
        // Families: the families' and the parents' own pages (their paths kept), and the mail sent to them.
        let families = ResourceRegistry.all.filter { ["families", "parents"].contains($0.slug) }.map { AdminPath.list($0.slug) }
        #expect(Self.paths(groups)["Families"] == families + [AdminPath.outbox])
        #expect(families.contains(AdminPath.list("parents")))
        #expect(byGroup["Reports"] == ["Most played", "Searches that found nothing", "Audit log"])
        #expect(byGroup["Automation"] == ["Webhooks", "API tokens"])
        #expect(byGroup["Settings"] == ["Staff", "Your account"])
        #expect(groups.flatMap(\.items).allSatisfy { !$0.current })
    }

    @Test("an editor sees no admin place, and no group left empty")
    func editorGroups() {
        let (_, groups) = LayoutView.sidebar(for: Self.editor, section: "books", path: AdminPath.list("books"))
        #expect(groups.map(\.label) == ["Catalog", "Reports", "Automation", "Settings"])
        let all = groups.flatMap(\.items).map(\.label)
        let hrefs = groups.flatMap(\.items).map(\.href)
        for adminOnly in ["parents", "outbox", "webhook_endpoints", "staff_users"] { #expect(!hrefs.contains(AdminPath.path(adminOnly))) }
        #expect(groups.flatMap(\.items).filter(\.current).map(\.label) == ["Books"])
        // Ctrl-K searches the same places.
        #expect(LayoutView.navigation(for: Self.editor).map(\.label) == ["Dashboard"] + all)
    }

    @Test("one current place: of two in a section, the one whose path the page is under")
    func currentPlace() {
        func current(_ section: String, _ path: String) -> [String] {
            let (home, groups) = LayoutView.sidebar(for: Self.admin, section: section, path: path)
            return ([home] + groups.flatMap(\.items)).filter(\.current).map(\.label)
        }
        #expect(current("account", AdminPath.apiTokens) == ["API tokens"])
        #expect(current("account", AdminPath.apiTokens + "/3/revoke") == ["API tokens"])
        #expect(current("account", AdminPath.twoFactor) == ["Your account"])
        #expect(current("account", AdminPath.account) == ["Your account"])
        #expect(current("books", AdminPath.record("books", 7) + "/rights_windows") == ["Books"])
        #expect(current("webhook_endpoints", AdminPath.webhookDeliveries) == ["Webhooks"])
        #expect(current("", AdminPath.quickSearch) == [])
    }
}
