import SQLKit
import Vapor

/// The signed-in parent's own account: `POST /me/email` (a new address, confirmed from its
/// mailbox before it takes effect, while the account stays as it was when asked; the old one is
/// told) and `DELETE /me` (the whole family, with a receipt). Both need the current password,
/// throttled like a sign-in.
struct AccountSettingsRoutes: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        let me = api.parent.grouped("me")
        me.on(.POST, "email", body: .collect(maxSize: "16kb"), use: changeEmail)
        me.on(.DELETE, body: .collect(maxSize: "16kb"), use: delete)
    }

    /// The same 202 and the same notice to the current address whether or not `email` has an
    /// account (a taken one is told instead of mailed a link), within the mail budget of `email`.
    /// A newer request ends the older; the link is bound to the account's security stamp now.
    @Sendable
    func changeEmail(req: Request) async throws -> Response {
        let body = try JSONBody(req)
        let email = try AccountInput.email(body, "email")
        let password = try body.string("password", maxLength: 1000)
        let parent = try req.parentID
        try await ParentPassword.requireCurrent(password, parent: parent, req: req)
        try await AccountInput.spendMailBudget(email: email, req: req)
        let base = req.application.settings.publicBaseURL
        try await req.transaction { sql in
            guard let account = try await AccountQueries.lock(parent: parent, on: sql) else { throw Problem.unauthorized }
            guard account.email.lowercased() != email.lowercased() else {
                throw Problem.invalidParameter("email", "email is already this account's address")
            }
            try await AccountTokens.endPending(.email, parent: parent, on: sql)
            if let owner = try await AccountQueries.find(email: email, on: sql) {
                try await Outbox.enqueue(AccountMail.addressInUse(), to: owner.email, parent: owner.id, on: sql)
            } else {
                try await AccountQueries.mail(.email, parent: parent, to: email, stamp: account.securityStamp, baseURL: base, AccountMail.newEmail, on: sql)
            }
            try await Outbox.enqueue(.emailChangeRequested(to: email), to: account.email, parent: parent, on: sql)
        }
        req.appServices.jobs.wake(MailDelivery.job)
        return try await SignUpRoutes.accepted("Check the new address's mail: the change takes effect once it is confirmed.", req: req)
    }

    @Sendable
    func delete(req: Request) async throws -> ItemDTO<AccountRemovalDTO> {
        let password = try JSONBody(req).string("password", maxLength: 1000)
        let parent = try req.parentID
        try await ParentPassword.requireCurrent(password, parent: parent, req: req)
        guard let removed = try await req.transaction({ sql in try await AccountQueries.delete(parent: parent, on: sql) }) else {
            throw Problem.unauthorized
        }
        req.appServices.forget(children: removed.children)
        req.appServices.revokedSessions.note(removed.devices)
        req.appServices.revokedSessions.note(account: parent)
        req.logger.info("account deleted", metadata: ["parent": .stringConvertible(parent), "children": .stringConvertible(removed.children.count)])
        return ItemDTO(data: removed.receipt)
    }
}

/// A confirmed new address replacing the old one — only while the account is as it was when the
/// change was asked (its security stamp unchanged; `AccountTokens.claim` checked it under the row
/// lock, the conditional update checks it again). Moving the address moves the stamp, which ends
/// every other pending change and every link mailed to the old address (migration 0031).
enum AccountEmail {
    static func apply(_ claim: AccountTokens.Claim, on sql: any SQLDatabase) async throws {
        guard let stamp = claim.stamp else { throw Problem.invalidBodyToken }
        do {
            guard try await AccountQueries.moveEmail(parent: claim.parent, to: claim.email, stamp: stamp, on: sql) else { throw Problem.invalidBodyToken }
        } catch let error where ConstraintViolation(error)?.constraint == "parents_email_key" {
            throw Problem(status: .conflict, code: "email_taken", detail: "Another account took this address meanwhile.", field: "email")
        }
        try await AccountTokens.retire(.email, parent: claim.parent, on: sql)
    }
}
