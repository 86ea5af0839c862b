import SQLKit
import Vapor

/// A member's role in a family (`family_members.role`): a parent may do everything; a caregiver
/// sees the children, records plays, gets playback grants and, when a parent allowed it, answers
/// the children's requests — and gets the 403 `parent_role_required` for any other change.
enum FamilyRole: String, Codable, CaseIterable, Sendable { case parent, caregiver }

/// The caller's place in a family: which family, as what.
struct Membership: Codable, Sendable {
    let familyId: Int
    let role: FamilyRole
    let mayAnswerRequests: Bool
}

extension FamilyRole {
    /// The family of the account `account`, as a subquery (every account has exactly one).
    static func family(of account: Int) -> SQLQueryString {
        "(SELECT fm.family_id FROM family_members fm WHERE fm.account_id = \(bind: account))"
    }

    /// Joins the organizer of child `child`'s family — its parent of longest standing, whose time
    /// zone and country the children's day and rights follow — as `alias` (a `parents` row).
    static func organizer(ofChild child: String, as alias: String) -> SQLQueryString {
        """
        JOIN LATERAL (SELECT op.* FROM family_members om JOIN parents op ON op.id = om.account_id
                       WHERE om.family_id = \(ident: child).family_id AND om.role = 'parent'
                       ORDER BY om.joined_at, om.account_id LIMIT 1) \(ident: alias) ON true
        """
    }
}

/// What a route group of the parent API asks of the caller's role (`routes.swift`). `writes`: a
/// caregiver reads, and any other method is `parent_role_required`; `always`: a parent only,
/// reads too; `answers`: a parent, or a caregiver a parent allowed to answer requests (writes).
struct FamilyRoleMiddleware: AsyncMiddleware {
    enum Rule: Sendable { case writes, always, answers }
    let rule: Rule

    func respond(to req: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if req.childDeviceChild == nil, rule == .always || req.isWrite {
            let (role, mayAnswer) = try await req.familyRole()
            let allowed = role == .parent || (rule == .answers && mayAnswer)
            if !allowed { throw Problem.parentRoleRequired }
        }
        return try await next.respond(to: req)
    }
}

extension Request {
    /// The caller's role in its family: from the child's state on a child's route (read with the
    /// child, this request), else from the database.
    func familyRole() async throws -> (FamilyRole, Bool) {
        if let state = try? child { return (state.role, state.mayAnswerRequests) }
        guard let membership = try await FamilyQueries.membership(of: parentID, on: sql) else { throw Problem.unauthorized }
        return (membership.role, membership.mayAnswerRequests)
    }
}
