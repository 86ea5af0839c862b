import SQLKit
import Vapor

/// Invitations by mail (`/api/v1/family/invitations`). A parent invites an address as a parent
/// or a caregiver; the answer is the same whether or not the address has an account, and spends
/// that address's mail budget. The mailed token is single-use, kept as its SHA-256, for 7 days;
/// it is accepted by a signed-in account with a verified address equal to the invited one.
enum FamilyInvitations {
    static let lifetime: TimeInterval = 7 * 24 * 3600
    /// Members and pending invitations a family may have.
    static let familyLimit = 12
    static let page = "/account/invitation"

    @Sendable
    static func invite(req: Request) async throws -> Response {
        let body = try JSONBody(req)
        let email = try AccountInput.email(body, "email")
        guard let role = FamilyRole(rawValue: try body.string("role", maxLength: 20)) else {
            throw Problem.invalidParameter("role", "role must be parent or caregiver")
        }
        let me = try req.parentID
        try await AccountInput.spendMailBudget(email: email, req: req)
        let secret = RefreshSecret.make()
        let base = req.application.settings.publicBaseURL
        let invitation = try await req.transaction { sql -> FamilyInvitationDTO in
            let mine = try await FamilyQueries.lockOwn(me, parentOnly: true, on: sql)
            let members = try await FamilyQueries.members(of: mine.familyId, on: sql)
            if members.contains(where: { $0.email.lowercased() == email.lowercased() }) {
                throw Problem(status: .conflict, code: "already_a_member", detail: "\(email) is already a member of your family.", field: "email")
            }
            let counts = try await FamilyQueries.counts(of: mine.familyId, on: sql)
            let pendingForAddress = try await FamilyQueries.invitations(of: mine.familyId, on: sql).contains { $0.email.lowercased() == email.lowercased() }
            if counts.members + counts.invitations - (pendingForAddress ? 1 : 0) >= familyLimit {
                throw Problem(status: .conflict, code: "family_full",
                              detail: "A family has at most \(familyLimit) members and pending invitations together: end an invitation or remove a member first.")
            }
            let invitation = try await FamilyQueries.invite(family: mine.familyId, email: email, role: role, by: me,
                                                            tokenHash: RefreshSecret.hash(secret), lifetime: lifetime, on: sql)
            let inviter = members.first { $0.accountId == me }?.email ?? "A Storytime parent"
            try await Outbox.enqueue(.familyInvitation(from: inviter, role: role, link: base + page + "?token=" + secret),
                                     to: email, parent: nil, on: sql)
            try await FamilyQueries.audit(me, family: mine.familyId, "family.invite", ["email": email, "role": role.rawValue], on: sql)
            return invitation
        }
        req.appServices.jobs.wake(MailDelivery.job)
        return try await ItemDTO(data: invitation).encodeResponse(status: .created, for: req)
    }

    @Sendable
    static func revoke(req: Request) async throws -> HTTPStatus {
        let id = try req.pathID("invitation_id", missing: "No such invitation.")
        let me = try req.parentID
        try await req.transaction { sql in
            // The family first, then the invitation (the order an accept takes: no deadlock with one).
            let mine = try await FamilyQueries.lockOwn(me, parentOnly: true, on: sql)
            guard try await FamilyQueries.revoke(invitation: id, family: mine.familyId, on: sql) else { throw Problem.notFound("No such invitation.") }
            try await FamilyQueries.audit(me, family: mine.familyId, "family.invitation_revoke", ["invitation_id": String(id)], on: sql)
        }
        return .noContent
    }

    static let addressMismatch = Problem(status: .forbidden, code: "invitation_for_another_address",
                                         detail: "This invitation was sent to another address: sign in with that address, or ask for an invitation to yours.")
    static let alreadyInAFamily = Problem(status: .conflict, code: "already_in_a_family",
                                          detail: "Your account is in a family with children or other members. Leave it first (POST /api/v1/family/leave), or — as its last parent — make another member a parent, then accept again.")

    /// `POST /family/invitations/accept {token}`: the caller joins the inviting family with the
    /// invited role. Their own family must hold nothing else (no children, no other members); it
    /// goes. Both families are locked in id order, then the invitation — the order inviting and
    /// deleting an account take too (families, then invitations), so none of them deadlock: two
    /// accepts of one token, or an accept racing a removal, a re-invitation or the inviter's
    /// account deletion, are decided once.
    @Sendable
    static func accept(req: Request) async throws -> ItemDTO<FamilyDTO> {
        let token = try JSONBody(req).string("token", maxLength: 200)
        let me = try req.parentID
        let hash = RefreshSecret.hash(token)
        try await req.transaction { sql in
            guard let invitation = try await FamilyQueries.pendingInvitation(tokenHash: hash, lock: false, on: sql) else {
                throw Problem.invalidBodyToken
            }
            guard let account = try await AccountQueries.me(parent: me, on: sql) else { throw Problem.unauthorized }
            guard account.verified else {
                throw Problem(status: .forbidden, code: "email_unverified",
                              detail: "Confirm your email address first: follow the link we mailed you (or ask for a new one).")
            }
            guard account.email.lowercased() == invitation.email.lowercased() else { throw addressMismatch }
            let mine = try await FamilyQueries.lockOwn(me, also: [invitation.familyId], on: sql)
            // Still pending now that its family is locked (not used, revoked or replaced meanwhile).
            guard try await FamilyQueries.pendingInvitation(tokenHash: hash, lock: true, on: sql)?.id == invitation.id else {
                throw Problem.invalidBodyToken
            }
            if mine.familyId == invitation.familyId {
                throw Problem(status: .conflict, code: "already_a_member", detail: "You are already a member of this family.")
            }
            let counts = try await FamilyQueries.counts(of: mine.familyId, on: sql)
            if counts.children > 0 || counts.members > 1 { throw alreadyInAFamily }
            try await FamilyQueries.markAccepted(invitation.id, by: me, on: sql)
            try await FamilyQueries.move(me, to: invitation.familyId, role: invitation.role, on: sql)
            try await FamilyQueries.audit(me, family: invitation.familyId, "family.join", ["role": invitation.role.rawValue], on: sql)
        }
        return ItemDTO(data: try await FamilyRoutes.family(of: me, at: req.now, on: req.sql))
    }
}
