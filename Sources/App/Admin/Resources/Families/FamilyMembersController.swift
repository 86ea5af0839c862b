import Vapor

/// Admins act on a family (`/admin/families/:id/…`): a member's page — their role, whether a
/// caregiver answers the children's requests, removal from the family — and the revocation of a
/// pending invitation. The changes are the parents' own (`FamilyQueries`, under the family's lock),
/// so migrations/0038's rules hold: a family keeps a parent (the trigger's refusal shows beside the
/// field, or on the confirmation), a removed member founds a family of their own. Each change is
/// one transaction with its row in the staff audit log (table `families`: member and invitation
/// ids and states, never an address).
struct FamilyMembersController: RouteCollection {
    static let members = "members", remove = "remove", invitations = "invitations", revoke = "revoke"
    static let lastParentConstraint = "family_members_last_parent"
    static let lastParent = "A family keeps at least one parent: make another member a parent first."

    func boot(routes: any RoutesBuilder) throws {
        let family: [PathComponent] = [.constant(AdminResource.families.slug), .parameter("id")]
        let member = family + [.constant(Self.members), .parameter("account_id")]
        routes.get(member, use: show)
        routes.post(member, use: change)
        routes.get(member + [.constant(Self.remove)], use: confirmRemove)
        routes.post(member + [.constant(Self.remove)], use: removeMember)
        let invitation = family + [.constant(Self.invitations), .parameter("invitation_id"), .constant(Self.revoke)]
        routes.get(invitation, use: confirmRevoke)
        routes.post(invitation, use: revokeInvitation)
    }

    struct Item: Encodable { let label: String; let value: String }
    struct MemberPage: Encodable {
        let layout: LayoutView
        let heading: String
        let details: [Item]
        let familyURL: String
        let familyLabel: String
        let accountURL: String
        let historyURL: String
        let removeURL: String
        let action: String
        let roles: [OptionView]
        let mayAnswer: Bool
        let error: String?
    }

    private struct Refusal: Error { let message: String }
    private typealias Member = FamilyConsoleQueries.Member

    // MARK: - A member

    @Sendable
    func show(req: Request) async throws -> Response {
        let (family, member) = try await Self.member(req)
        return try await render(req, family, member, role: member.role.rawValue, mayAnswer: member.mayAnswerRequests, error: nil)
    }

    /// The role (and a caregiver's answering): the database decides the last-parent rule under
    /// the family's lock; its refusal is the form again with the message beside the role.
    @Sendable
    func change(req: Request) async throws -> Response {
        let (family, member) = try await Self.member(req)
        let form = try FormBody(req)
        let mayAnswer = form.value("may_answer_requests") == "on"
        guard let role = form.value("role").flatMap(FamilyRole.init(rawValue:)) else {
            return try await render(req, family, member, role: "", mayAnswer: mayAnswer, error: "Choose parent or caregiver.")
        }
        let audit = AuditWriter(staff: try req.staff)
        do {
            let changed = try await req.transaction { sql -> Bool in
                guard let now = try await FamilyQueries.lock([family], member: member.accountId, on: sql), now.familyId == family else {
                    throw Self.gone
                }
                guard now.role != role || now.mayAnswerRequests != mayAnswer else { return false }
                try await FamilyQueries.update(member: member.accountId, role: role, mayAnswerRequests: mayAnswer, on: sql)
                try await audit.record(.update, table: AdminResource.families.table, ids: [family],
                                       before: [family: Self.snapshot(member.accountId, now.role, now.mayAnswerRequests)],
                                       after: [family: Self.snapshot(member.accountId, role, mayAnswer)], on: sql)
                return true
            }
            req.adminSession.flash(changed ? "\(member.email) is now a \(role.rawValue) in family #\(family)." : "Nothing changed.")
            return req.redirect(to: AdminPath.record(AdminResource.families.slug, family))
        } catch let error where ConstraintViolation(error)?.constraint == Self.lastParentConstraint {
            return try await render(req, family, member, role: role.rawValue, mayAnswer: mayAnswer, error: Self.lastParent)
        }
    }

    @Sendable
    func confirmRemove(req: Request) async throws -> View {
        let (family, member) = try await Self.member(req)
        return try await req.view.render("confirm", removePage(req, family, member, refusal: nil))
    }

    /// Removal, as a parent's `DELETE /family/members/:id`: the member loses the children at once
    /// on every instance and founds a family of their own; refused for the last parent and for a
    /// family's only member (the confirmation again, 409, nothing changed).
    @Sendable
    func removeMember(req: Request) async throws -> Response {
        let (family, member) = try await Self.member(req)
        let audit = AuditWriter(staff: try req.staff)
        let refusal: String
        do {
            let devices = try await req.transaction { sql -> [Int] in
                guard let now = try await FamilyQueries.lock([family], member: member.accountId, on: sql), now.familyId == family else {
                    throw Self.gone
                }
                let counts = try await FamilyQueries.counts(of: family, on: sql)
                if counts.members <= 1 {
                    throw Refusal(message: "\(member.email) is this family's only member: there is no family to remove them from.")
                }
                if now.role == .parent, counts.parents <= 1 { throw Refusal(message: Self.lastParent) }
                try await audit.record(.update, table: AdminResource.families.table, ids: [family],
                                       before: [family: Self.snapshot(member.accountId, now.role, now.mayAnswerRequests)],
                                       after: [family: Self.json(["member #\(member.accountId)": "removed"])], on: sql)
                return try await FamilyQueries.remove(member.accountId, from: family, on: sql)
            }
            req.appServices.revokedSessions.note(devices)
            let signedOut = devices.isEmpty ? "" : " \(devices.count) child \(devices.count == 1 ? "device" : "devices") they paired signed out."
            req.adminSession.flash("\(member.email) was removed from family #\(family) and now has a family of their own.\(signedOut)")
            return req.redirect(to: AdminPath.record(AdminResource.families.slug, family))
        } catch let refused as Refusal {
            refusal = refused.message
        } catch let error where ConstraintViolation(error)?.constraint == Self.lastParentConstraint {
            refusal = Self.lastParent
        }
        return try await req.page("confirm", removePage(req, family, member, refusal: refusal), status: .conflict)
    }

    // MARK: - An invitation

    @Sendable
    func confirmRevoke(req: Request) async throws -> View {
        let (family, invitation) = try await Self.invitation(req)
        let page = ConfirmPage(
            layout: LayoutView(req, title: "Revoke an invitation", section: AdminResource.families.slug),
            heading: "Revoke the invitation of \(invitation.email) as a \(invitation.role.rawValue) of family #\(family)?",
            message: "Sent by \(invitation.invitedBy ?? "a former member") on \(invitation.sent), it works until \(invitation.expires) (UTC). "
                + "Its link stops working at once; a parent of the family can invite the address again.",
            warning: nil, action: AdminPath.familyInvitationRevoke(family, invitation.id),
            cancelURL: AdminPath.record(AdminResource.families.slug, family), button: "Yes, revoke it")
        return try await req.view.render("confirm", page)
    }

    @Sendable
    func revokeInvitation(req: Request) async throws -> Response {
        let (family, invitation) = try await Self.invitation(req)
        let audit = AuditWriter(staff: try req.staff)
        let revoked = try await req.transaction { sql -> Bool in
            guard try await FamilyQueries.revoke(invitation: invitation.id, family: family, on: sql) else { return false }
            let key = "invitation #\(invitation.id)"
            try await audit.record(.update, table: AdminResource.families.table, ids: [family],
                                   before: [family: Self.json([key: "pending"])], after: [family: Self.json([key: "revoked"])], on: sql)
            return true
        }
        req.adminSession.flash(revoked ? "The invitation of \(invitation.email) was revoked: its link no longer works."
                                       : "The invitation of \(invitation.email) was no longer pending.")
        return req.redirect(to: AdminPath.record(AdminResource.families.slug, family))
    }

    // MARK: - Parts

    private static let gone = Abort(.notFound, reason: "No such member of this family (they may have left it).")

    /// The family and another id from the path (admins only; 404 for anything but positive ids).
    private static func ids(_ req: Request, _ name: String) throws -> (Int, Int) {
        try req.requireAdmin()
        guard let family = req.parameters.get("id").flatMap({ Int($0) }), family > 0,
              let other = req.parameters.get(name).flatMap({ Int($0) }), other > 0 else { throw Abort(.notFound) }
        return (family, other)
    }

    private static func member(_ req: Request) async throws -> (Int, Member) {
        let (family, account) = try ids(req, "account_id")
        guard let member = try await FamilyConsoleQueries.member(account, of: family, on: req.sql) else { throw gone }
        return (family, member)
    }

    private static func invitation(_ req: Request) async throws -> (Int, FamilyConsoleQueries.Invitation) {
        let (family, id) = try ids(req, "invitation_id")
        guard let invitation = try await FamilyConsoleQueries.pendingInvitation(id, of: family, on: req.sql) else {
            throw Abort(.notFound, reason: "No such pending invitation (it may have been accepted, revoked or have expired).")
        }
        return (family, invitation)
    }

    /// A member as the staff audit log keeps it: ids and states, never the address.
    private static func snapshot(_ account: Int, _ role: FamilyRole, _ mayAnswer: Bool) -> String {
        json(["member #\(account) role": role.rawValue, "member #\(account) answers requests": mayAnswer ? "yes" : "no"])
    }

    private static func json(_ object: [String: String]) -> String {
        (try? JSONEncoder().encode(object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    private func removePage(_ req: Request, _ family: Int, _ member: Member, refusal: String?) -> ConfirmPage {
        ConfirmPage(layout: LayoutView(req, title: "Remove a member", section: AdminResource.families.slug),
                    heading: "Remove \(member.email) from family #\(family)?",
                    message: "They lose the family's children at once, on every instance, and the child devices they paired for them are signed out. "
                        + "Their account stays, in a new family of their own; the family's log keeps what they did.",
                    warning: refusal, action: AdminPath.familyMemberRemove(family, member.accountId),
                    cancelURL: AdminPath.familyMember(family, member.accountId), button: "Yes, remove")
    }

    private func render(_ req: Request, _ family: Int, _ member: Member, role: String, mayAnswer: Bool, error: String?) async throws -> Response {
        let page = MemberPage(
            layout: LayoutView(req, title: member.email, section: AdminResource.families.slug),
            heading: "Member of family #\(family): \(member.email)",
            details: [Item(label: "Role", value: member.role.rawValue),
                      Item(label: "Answers the children's requests", value: member.role == .parent ? "Yes (a parent)" : member.mayAnswerRequests ? "Yes" : "No"),
                      Item(label: "Joined (UTC)", value: member.joined),
                      Item(label: "Address confirmed", value: member.verified ? "Yes" : "No"),
                      Item(label: "Locked", value: member.locked ? "Yes" : "No"),
                      Item(label: "Signed-in devices", value: String(member.devices))],
            familyURL: AdminPath.record(AdminResource.families.slug, family), familyLabel: "Family #\(family)",
            accountURL: AdminPath.record(AdminResource.parents.slug, member.accountId),
            historyURL: AdminPath.history(table: AdminResource.families.table, id: family),
            removeURL: AdminPath.familyMemberRemove(family, member.accountId), action: AdminPath.familyMember(family, member.accountId),
            roles: FamilyRole.allCases.map { OptionView(value: $0.rawValue, label: $0.rawValue.capitalized, selected: $0.rawValue == role) },
            mayAnswer: mayAnswer, error: error)
        return try await req.page("family_member", page, status: error == nil ? .ok : .unprocessableEntity)
    }
}
