import Foundation
import Vapor

/// `GET /api/v1/family`: the caller's family — its members, pending invitations (a parent's
/// view; a caregiver sees none) and children.
struct FamilyDTO: Content {
    let id: Int
    /// The caller's own role, so an app knows which actions to offer.
    let role: FamilyRole
    let members: [FamilyMemberDTO]
    let invitations: [FamilyInvitationDTO]
    let children: [ChildDTO]
}

struct FamilyMemberDTO: Content {
    let accountId: Int
    let email: String
    let role: FamilyRole
    let mayAnswerRequests: Bool
    let joinedAt: Date
}

struct FamilyInvitationDTO: Content {
    let id: Int
    let email: String
    let role: FamilyRole
    /// The address of the parent who invited (nil once that account is gone).
    @ExplicitNull var invitedBy: String?
    let createdAt: Date
    let expiresAt: Date
}
