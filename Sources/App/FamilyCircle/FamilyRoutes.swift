import SQLKit
import Vapor

/// The family circle (`/api/v1/family`): who is in the caller's family, invitations by mail,
/// roles, removal and leaving. Reading, leaving and accepting are any member's; inviting and
/// changing members are a parent's (`routes.swift`: a caregiver's change is `parent_role_required`).
/// Every change locks the family's row first; the rules that must stay true (a family keeps a
/// parent; an account is in one family) are checked under that lock, and migrations/0038's
/// triggers refuse what slips past.
struct FamilyRoutes: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        let member = api.parent.grouped("family")
        member.get(use: show)
        member.on(.POST, "leave", body: .collect(maxSize: "1kb"), use: leave)
        member.on(.POST, "invitations", "accept", body: .collect(maxSize: "16kb"), use: FamilyInvitations.accept)
        let parent = api.familyParent.grouped("family")
        parent.on(.POST, "invitations", body: .collect(maxSize: "16kb"), use: FamilyInvitations.invite)
        parent.delete("invitations", ":invitation_id", use: FamilyInvitations.revoke)
        parent.on(.PATCH, "members", ":account_id", body: .collect(maxSize: "16kb"), use: update)
        parent.delete("members", ":account_id", use: remove)
    }

    @Sendable
    func show(req: Request) async throws -> ItemDTO<FamilyDTO> {
        ItemDTO(data: try await Self.family(of: try req.parentID, at: req.now, on: req.sql))
    }

    /// The family `account` is in, as `GET /family` shows it to that account at `now`.
    static func family(of account: Int, at now: Date, on sql: any SQLDatabase) async throws -> FamilyDTO {
        guard let membership = try await FamilyQueries.membership(of: account, on: sql) else { throw Problem.unauthorized }
        let family = membership.familyId
        return FamilyDTO(id: family, role: membership.role,
                         members: try await FamilyQueries.members(of: family, on: sql),
                         invitations: membership.role == .parent ? try await FamilyQueries.invitations(of: family, on: sql) : [],
                         children: try await ChildrenQueries.list(parent: account, at: now, on: sql))
    }

    static let lastParent = Problem(status: .conflict, code: "last_parent",
                                    detail: "A family keeps at least one parent: make another member a parent first.")
    static let noSuchMember = Problem.notFound("No such member of your family.")

    /// `PATCH /family/members/:account_id {role?, may_answer_requests?}`.
    @Sendable
    func update(req: Request) async throws -> ItemDTO<FamilyMemberDTO> {
        let target = try req.pathID("account_id", missing: "No such member of your family.")
        let body = try JSONBody(req)
        let role = try body.optionalString("role", maxLength: 20).map { text -> FamilyRole in
            guard let role = FamilyRole(rawValue: text) else { throw Problem.invalidParameter("role", "role must be parent or caregiver") }
            return role
        }
        let mayAnswer = try body.optionalBool("may_answer_requests")
        guard role != nil || mayAnswer != nil else {
            throw Problem.invalidParameter("role", "send role (parent or caregiver) and/or may_answer_requests (true or false)")
        }
        let me = try req.parentID
        let member = try await req.transaction { sql -> FamilyMemberDTO in
            let (mine, theirs) = try await Self.lockPair(me, target, on: sql)
            if role == .caregiver, theirs.role == .parent, try await FamilyQueries.counts(of: mine.familyId, on: sql).parents <= 1 {
                throw Self.lastParent
            }
            try await FamilyQueries.update(member: target, role: role, mayAnswerRequests: mayAnswer, on: sql)
            var details = ["account_id": String(target)]
            if let role { details["role"] = role.rawValue }
            if let mayAnswer { details["may_answer_requests"] = String(mayAnswer) }
            try await FamilyQueries.audit(me, family: mine.familyId, "family.member_update", details, on: sql)
            guard let updated = try await FamilyQueries.members(of: mine.familyId, on: sql).first(where: { $0.accountId == target }) else {
                throw Self.noSuchMember
            }
            return updated
        }
        return ItemDTO(data: member)
    }

    /// `DELETE /family/members/:account_id`: the member leaves the family at once (their next
    /// request about a child, on any instance, is a 404); their account stays, in a new family.
    @Sendable
    func remove(req: Request) async throws -> HTTPStatus {
        let target = try req.pathID("account_id", missing: "No such member of your family.")
        let me = try req.parentID
        let devices = try await req.transaction { sql -> [Int] in
            let (mine, theirs) = try await Self.lockPair(me, target, on: sql)
            if theirs.role == .parent, try await FamilyQueries.counts(of: mine.familyId, on: sql).parents <= 1 { throw Self.lastParent }
            try await FamilyQueries.audit(me, family: mine.familyId, "family.member_remove", ["account_id": String(target)], on: sql)
            return try await FamilyQueries.remove(target, from: mine.familyId, on: sql)
        }
        req.appServices.revokedSessions.note(devices)
        return .noContent
    }

    /// `POST /family/leave`: the caller leaves for a new family of their own. The only member
    /// has nothing to leave; the last parent hands over first.
    @Sendable
    func leave(req: Request) async throws -> ItemDTO<FamilyDTO> {
        let me = try req.parentID
        let devices = try await req.transaction { sql -> [Int] in
            let mine = try await FamilyQueries.lockOwn(me, on: sql)
            let counts = try await FamilyQueries.counts(of: mine.familyId, on: sql)
            if counts.members <= 1 {
                throw Problem(status: .conflict, code: "only_member",
                              detail: "You are the only member of your family, so there is no family to leave.")
            }
            if mine.role == .parent, counts.parents <= 1 { throw Self.lastParent }
            try await FamilyQueries.audit(me, family: mine.familyId, "family.leave", [:], on: sql)
            return try await FamilyQueries.remove(me, from: mine.familyId, on: sql)
        }
        req.appServices.revokedSessions.note(devices)
        return ItemDTO(data: try await Self.family(of: me, at: req.now, on: req.sql))
    }

    /// Locks the caller's family and reads both memberships under the lock: the caller's and
    /// the target's, which must be the same family (else the 404 of a stranger).
    static func lockPair(_ me: Int, _ target: Int, on sql: any SQLDatabase) async throws -> (Membership, Membership) {
        let mine = try await FamilyQueries.lockOwn(me, parentOnly: true, on: sql)
        guard let theirs = try await FamilyQueries.membership(of: target, on: sql), theirs.familyId == mine.familyId else {
            throw noSuchMember
        }
        return (mine, theirs)
    }
}
