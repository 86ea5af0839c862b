import Foundation
import OpenAPIRuntime

/// The family circle: who shares the children — parents and caregivers — invitations by mail,
/// roles, removal and leaving (docs/accounts-and-mail.md, "Families"). A caregiver's change that
/// only a parent may make is `StorytimeError.forbidden` with `parent_role_required`
/// (`requiresParentRole`); `family().role` says which actions to offer.
extension StorytimeClient {
    /// The caller's family: members with their roles, pending invitations (empty for a
    /// caregiver), children, and the caller's own `role`.
    public func family() async throws -> Family {
        try await authorized { try await $0.getFamily().ok.body.json.data }
    }

    /// Mails `email` a link to join the family as `role`, valid 7 days and once (a parent only).
    /// The answer is the same whether or not the address has an account; inviting the address
    /// again ends its earlier link. `conflict` `already_a_member` / `family_full`;
    /// `tooManyRequests` past the address's mail budget.
    @discardableResult
    public func invite(email: String, role: FamilyRole) async throws -> FamilyInvitation {
        try await authorized {
            try await $0.inviteToFamily(body: .json(.init(email: email, role: role))).created.body.json.data
        }
    }

    /// Accepts an invitation with its mailed link (pasted whole, or just its token): the signed-in
    /// account — its confirmed address the one invited — joins that family with the invited role.
    /// `forbidden` `email_unverified` / `invitation_for_another_address`; `conflict`
    /// `already_in_a_family` while the account's own family has children or other members (leave
    /// it first); `invalidParameter` `invalid_token` for an unknown, used or expired link.
    @discardableResult
    public func accept(token linkOrToken: String) async throws -> Family {
        try await authorized {
            try await $0.acceptFamilyInvitation(body: .json(.init(token: Self.token(fromLink: linkOrToken)))).ok.body.json.data
        }
    }

    /// Withdraws a pending invitation: its link stops working (a parent only).
    public func revokeInvitation(_ invitationID: Int) async throws {
        _ = try await authorized { try await $0.revokeFamilyInvitation(path: .init(invitationId: invitationID)).noContent }
    }

    /// Changes a member's role and/or whether a caregiver may answer the children's requests
    /// (nil keeps the value; give at least one). The last parent cannot become a caregiver:
    /// `conflict` `last_parent`.
    @discardableResult
    public func updateMember(_ accountID: Int, role: FamilyRole? = nil, mayAnswerRequests: Bool? = nil) async throws -> FamilyMember {
        try await authorized {
            try await $0.updateFamilyMember(path: .init(accountId: accountID),
                                            body: .json(.init(role: role, mayAnswerRequests: mayAnswerRequests))).ok.body.json.data
        }
    }

    /// Removes a member (a parent only): their access to the children ends at once, the child
    /// devices they paired are signed out, and their account goes on in a family of its own.
    public func removeMember(_ accountID: Int) async throws {
        _ = try await authorized { try await $0.removeFamilyMember(path: .init(accountId: accountID)).noContent }
    }

    /// Leaves the family for a new, empty one of the caller's own (answered). The only member has
    /// nothing to leave (`only_member`); the last parent hands over first (`last_parent`).
    @discardableResult
    public func leaveFamily() async throws -> Family {
        try await authorized { try await $0.leaveFamily().ok.body.json.data }
    }
}

extension FamilyRole {
    /// Whether this role may change what a parent changes (controls, libraries, children, devices,
    /// the PIN, members and invitations).
    public var isParent: Bool { self == .parent }
}
