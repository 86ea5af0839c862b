@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// The console's Families (issue 45): admins see a family — members, pending invitations, children,
/// its log — and act on it: a member's role (a family keeps a parent), removal, an invitation's
/// revocation. Everything over HTTP, against PostgreSQL.
@Suite("Console: families", .app)
struct ConsoleFamiliesTests {
    struct Circle {
        let family: Int
        let ann: Application.ParentFixture   // the parent, with Ada (one book in her library) and Ben
        let cal: Application.ParentFixture   // a caregiver
        let invitationToken: String          // the mailed token of gran@example.com's invitation
    }

    /// Ann's family: Ann (parent), Cal (caregiver, moved in by SQL), an invitation Ann sent by mail.
    static func circle(_ app: Application) async throws -> Circle {
        let ann = try await app.makeParent(email: "ann@example.com", children: ["Ada", "Ben"])
        let cal = try await app.makeParent(email: "cal@example.com", children: [])
        let family = try await familyID(app, ann.id)
        try await app.sql.raw("UPDATE family_members SET family_id = \(bind: family), role = 'caregiver' WHERE account_id = \(bind: cal.id)").run()
        let book = try await app.makeBook("Goodnight Moon")
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: ann.children[0]), \(bind: book))").run()
        let invited = try await app.send(.POST, "/api/v1/family/invitations", token: ann.token, json: #"{"email":"gran@example.com","role":"caregiver"}"#)
        #expect(invited.status == .created)
        let mail = try await app.sql.raw("SELECT text_body FROM mail_outbox WHERE recipient = 'gran@example.com' ORDER BY id DESC LIMIT 1")
            .one().decode(column: "text_body", as: String.self)
        let range = try #require(mail.range(of: #"token=[A-Za-z0-9_-]+"#, options: .regularExpression))
        return Circle(family: family, ann: ann, cal: cal, invitationToken: String(mail[range].dropFirst("token=".count)))
    }

    static func familyID(_ app: Application, _ account: Int) async throws -> Int {
        try await app.sql.raw("SELECT family_id AS n FROM family_members WHERE account_id = \(bind: account)").one().decode(column: "n", as: Int.self)
    }

    static func role(_ app: Application, _ account: Int) async throws -> String {
        try await app.sql.raw("SELECT role AS r FROM family_members WHERE account_id = \(bind: account)").one().decode(column: "r", as: String.self)
    }

    static func invitationID(_ app: Application) async throws -> Int {
        try await app.count("SELECT id AS n FROM family_invitations WHERE email = 'gran@example.com'")
    }

    @Test("an admin sees the families list and a family's page: members with role and state, the pending invitation without its token, the children with their libraries, the family's log")
    func familyPage() async throws {
        let app = try app()
        let circle = try await Self.circle(app)
        let admin = try await app.console(role: .admin)
        let list = try await admin.get("/admin/families")
        #expect(list.status == .ok && list.html.contains("ann@example.com") && list.html.contains("/admin/families/\(circle.family)"))
        let found = try await admin.get("/admin/families?q=cal%40example")
        #expect(found.status == .ok && found.html.contains("/admin/families/\(circle.family)\""))
        #expect(try await admin.get("/admin/families?circle=several").html.contains("/admin/families/\(circle.family)\""))
        #expect(!(try await admin.get("/admin/families?circle=alone").html.contains("/admin/families/\(circle.family)\"")))

        // An entry whose member's account was deleted stays in the family's log, without an actor.
        try await app.sql.raw("INSERT INTO parent_audit_log (parent_id, family_id, action) VALUES (NULL, \(bind: circle.family), 'child.rename')").run()
        let page = try await admin.get("/admin/families/\(circle.family)")
        #expect(page.status == .ok)
        let html = page.html
        for text in ["ann@example.com", "cal@example.com", "caregiver", "Pending invitations", "gran@example.com", "Child #\(circle.ann.children[0])", "Child #\(circle.ann.children[1])",
                     "family.invite", "Family log", "a deleted account"] {
            #expect(html.contains(text), "the family page shows \(text)")
        }
        #expect(html.contains("/admin/families/\(circle.family)/members/\(circle.cal.id)"))
        #expect(html.contains("/admin/families/\(circle.family)/invitations/\(try await Self.invitationID(app))/revoke"))
        // Ada has one book in her library, Ben none; no page shows a child's name (docs/accounts-and-mail.md).
        #expect(html.range(of: "Child #\(circle.ann.children[0])</td><td>1</td>") != nil && html.range(of: "Child #\(circle.ann.children[1])</td><td>0</td>") != nil)
        #expect(!html.contains(">Ada<") && !html.contains(">Ben<"))
        #expect(!html.contains(circle.invitationToken) && !html.contains("token="))
        // Nothing to edit or delete on a family itself.
        #expect(!html.contains("/admin/families/\(circle.family)/edit") && !html.contains("/admin/families/\(circle.family)/delete"))
        #expect(try await admin.get("/admin/families/\(circle.family)/edit").status == .notFound)
        #expect(try await admin.get("/admin/families/new").status == .notFound)

        let member = try await admin.get("/admin/families/\(circle.family)/members/\(circle.cal.id)")
        #expect(member.status == .ok && member.html.contains("cal@example.com") && member.html.contains(#"<option value="caregiver" selected>"#))
        #expect(member.html.contains("/admin/parents/\(circle.cal.id)"))
        // The account page (still at /admin/parents) links to its family; a member of another family is not this family's.
        let account = try await admin.get("/admin/parents/\(circle.cal.id)")
        #expect(account.status == .ok && account.html.contains("/admin/families/\(circle.family)\""))
        #expect(try await admin.get("/admin/parents").status == .ok)
        let stranger = try await app.makeParent(email: "zed@example.com", children: [])
        #expect(try await admin.get("/admin/families/\(circle.family)/members/\(stranger.id)").status == .notFound)
    }

    @Test("editors and viewers get 403 on every family page and action, as on accounts")
    func adminsOnly() async throws {
        let app = try app()
        let circle = try await Self.circle(app)
        let invitation = try await Self.invitationID(app)
        for role in [StaffRole.editor, .viewer] {
            let staff = try await app.console(role: role)
            for path in ["/admin/families", "/admin/families/\(circle.family)", "/admin/families/export.csv",
                         "/admin/families/\(circle.family)/members/\(circle.cal.id)",
                         "/admin/families/\(circle.family)/members/\(circle.cal.id)/remove",
                         "/admin/families/\(circle.family)/invitations/\(invitation)/revoke", "/admin/parents"] {
                #expect(try await staff.get(path).status == .forbidden, "\(role) GET \(path)")
            }
            #expect(try await staff.post("/admin/families/\(circle.family)/members/\(circle.cal.id)", [("role", "parent")]).status == .forbidden)
            #expect(try await staff.post("/admin/families/\(circle.family)/members/\(circle.cal.id)/remove", []).status == .forbidden)
            #expect(try await staff.post("/admin/families/\(circle.family)/invitations/\(invitation)/revoke", []).status == .forbidden)
        }
        #expect(try await Self.role(app, circle.cal.id) == "caregiver")
        #expect(try await app.count("SELECT count(*) AS n FROM family_invitations WHERE revoked_at IS NOT NULL") == 0)
    }

    @Test("a role change: the last parent cannot become a caregiver (the form again, the message beside the role, nothing changed); otherwise saved and audited without addresses")
    func roleChange() async throws {
        let app = try app()
        let circle = try await Self.circle(app)
        let admin = try await app.console(role: .admin)
        let ann = "/admin/families/\(circle.family)/members/\(circle.ann.id)"
        let refused = try await admin.post(ann, [("role", "caregiver")])
        #expect(refused.status == .unprocessableEntity)
        #expect(refused.html.contains(#"<p class="error" id="error-role" role="alert">A family keeps at least one parent"#))
        #expect(refused.html.contains(#"<option value="caregiver" selected>"#))
        #expect(try await Self.role(app, circle.ann.id) == "parent")
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'families'") == 0)
        let nonsense = try await admin.post(ann, [("role", "boss")])
        #expect(nonsense.status == .unprocessableEntity && nonsense.html.contains("Choose parent or caregiver."))

        let promoted = try await admin.post("/admin/families/\(circle.family)/members/\(circle.cal.id)", [("role", "parent")])
        #expect(promoted.status == .seeOther && promoted.location == "/admin/families/\(circle.family)")
        #expect(try await admin.get("/admin/families/\(circle.family)").html.contains("cal@example.com is now a parent"))
        #expect(try await Self.role(app, circle.cal.id) == "parent")
        // Now Ann may become a caregiver who answers the children's requests.
        #expect(try await admin.post(ann, [("role", "caregiver"), ("may_answer_requests", "on")]).status == .seeOther)
        let ann2 = try await app.sql.raw("SELECT role, may_answer_requests FROM family_members WHERE account_id = \(bind: circle.ann.id)").one()
        #expect(try ann2.decode(column: "role", as: String.self) == "caregiver" && ann2.decode(column: "may_answer_requests", as: Bool.self))
        #expect(try await app.get("/api/v1/family", token: circle.cal.token).status == .ok)

        let audit = try await app.sql.raw("""
            SELECT kind, record_id, before::text AS b, after::text AS a FROM audit_log WHERE table_name = 'families' ORDER BY id
            """).all()
        #expect(audit.count == 2)
        let first = try #require(audit.first)
        #expect(try first.decode(column: "kind", as: String.self) == "update" && first.decode(column: "record_id", as: Int.self) == circle.family)
        #expect(try first.decode(column: "b", as: String.self).contains(#""member #\#(circle.cal.id) role": "caregiver""#))
        #expect(try first.decode(column: "a", as: String.self).contains(#""member #\#(circle.cal.id) role": "parent""#))
        #expect(try audit.allSatisfy { !(try $0.decode(column: "b", as: String.self) + $0.decode(column: "a", as: String.self)).contains("@") })
        #expect(try await admin.get("/admin/audit?table=families&record=\(circle.family)").html.contains("member #\(circle.cal.id) role"))
    }

    @Test("removing a member: they lose the children at once and found a family of their own; the last parent and a family's only member are refused")
    func removeMember() async throws {
        let app = try app()
        let circle = try await Self.circle(app)
        let admin = try await app.console(role: .admin)
        let base = "/admin/families/\(circle.family)/members"
        #expect(try await admin.get("\(base)/\(circle.cal.id)/remove").html.contains("Remove cal@example.com from family #\(circle.family)?"))
        let lastParent = try await admin.post("\(base)/\(circle.ann.id)/remove", [])
        #expect(lastParent.status == .conflict && lastParent.html.contains("A family keeps at least one parent"))
        #expect(try await Self.familyID(app, circle.ann.id) == circle.family)

        #expect(try await app.get("/api/v1/children", token: circle.cal.token).body.string.contains("Ada"))
        let removed = try await admin.post("\(base)/\(circle.cal.id)/remove", [])
        #expect(removed.status == .seeOther && removed.location == "/admin/families/\(circle.family)")
        let calFamily = try await Self.familyID(app, circle.cal.id)
        let calRole = try await Self.role(app, circle.cal.id)
        #expect(calFamily != circle.family && calRole == "parent")
        let children = try await app.get("/api/v1/children", token: circle.cal.token)
        #expect(children.status == .ok && !children.body.string.contains("Ada"))
        #expect(try await app.count("SELECT count(*) AS n FROM children WHERE family_id = \(bind: circle.family)") == 2)
        #expect(try await admin.get("/admin/families/\(circle.family)").html.contains("cal@example.com was removed from family"))
        #expect(!(try await admin.get("/admin/families/\(circle.family)").html.contains("cal@example.com")))
        #expect(try await admin.get("\(base)/\(circle.cal.id)").status == .notFound)

        // Cal is now alone in a family: there is nothing to remove them from.
        let alone = try await admin.post("/admin/families/\(calFamily)/members/\(circle.cal.id)/remove", [])
        #expect(alone.status == .conflict && alone.html.contains("only member"))
        #expect(try await Self.familyID(app, circle.cal.id) == calFamily)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'families'") == 1)
    }

    @Test("revoking an invitation: its confirmation shows address, role and inviter but no token; afterwards its link no longer works")
    func revokeInvitation() async throws {
        let app = try app()
        let circle = try await Self.circle(app)
        let admin = try await app.console(role: .admin)
        let path = "/admin/families/\(circle.family)/invitations/\(try await Self.invitationID(app))/revoke"
        let confirm = try await admin.get(path)
        #expect(confirm.status == .ok && confirm.html.contains("gran@example.com") && confirm.html.contains("caregiver")
                && confirm.html.contains("Sent by ann@example.com"))
        #expect(!confirm.html.contains(circle.invitationToken))
        let revoked = try await admin.post(path, [])
        #expect(revoked.status == .seeOther && revoked.location == "/admin/families/\(circle.family)")
        #expect(try await app.count("SELECT count(*) AS n FROM family_invitations WHERE revoked_at IS NOT NULL") == 1)
        #expect(try await admin.get("/admin/families/\(circle.family)").html.contains("its link no longer works"))
        #expect(!(try await admin.get("/admin/families/\(circle.family)").html.contains("gran@example.com")))
        #expect(try await admin.get(path).status == .notFound)
        #expect(try await admin.post(path, []).status == .notFound)
        let gran = try await app.makeParent(email: "gran@example.com", children: [])
        let accept = try await app.send(.POST, "/api/v1/family/invitations/accept", token: gran.token, json: #"{"token":"\#(circle.invitationToken)"}"#)
        #expect(accept.status == .badRequest)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'families' AND after::text LIKE '%revoked%'") == 1)
    }

    @Test("every family action needs the form's CSRF token: without it, 403 and nothing changes")
    func csrf() async throws {
        let app = try app()
        let circle = try await Self.circle(app)
        let admin = try await app.console(role: .admin)
        let base = "/admin/families/\(circle.family)"
        #expect(try await admin.post("\(base)/members/\(circle.cal.id)", [("role", "parent")], csrf: false).status == .forbidden)
        #expect(try await admin.post("\(base)/members/\(circle.cal.id)/remove", [], csrf: false).status == .forbidden)
        #expect(try await admin.post("\(base)/invitations/\(try await Self.invitationID(app))/revoke", [], csrf: false).status == .forbidden)
        #expect(try await Self.role(app, circle.cal.id) == "caregiver")
        #expect(try await Self.familyID(app, circle.cal.id) == circle.family)
        #expect(try await app.count("SELECT count(*) AS n FROM family_invitations WHERE revoked_at IS NULL") == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'families'") == 0)
    }
}
