import Core
import SQLKit
import Vapor

/// Families sign themselves up: `POST /accounts`, `/accounts/verify`, `/accounts/verify/resend`,
/// `/auth/password-reset` and `/auth/password-reset/confirm`, and `GET /privacy-notice`.
///
/// Nothing here says whether an address has an account: sign-up, resend and reset answer 202 the
/// same way either way (a sign-up with a known address mails its owner instead), spend the same
/// bcrypt time, and share one budget per address and per client (`LoginThrottle`, kind `mail`).
/// Addresses are taken alone (`AccountInput.email`): a form such as `Name <a@b>` is a 422.
struct SignUpRoutes: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        let routes = api.anyone
        routes.get("privacy-notice", use: notice)
        let accounts = routes.grouped("accounts")
        accounts.on(.POST, body: .collect(maxSize: "16kb"), use: signUp)
        accounts.on(.POST, "verify", body: .collect(maxSize: "16kb"), use: verify)
        accounts.on(.POST, "verify", "resend", body: .collect(maxSize: "16kb"), use: resend)
        let reset = routes.grouped("auth", "password-reset")
        reset.on(.POST, body: .collect(maxSize: "16kb"), use: requestReset)
        reset.on(.POST, "confirm", body: .collect(maxSize: "16kb"), use: confirmReset)
    }

    struct NoticeDTO: Content { let version: String }
    struct AcceptedDTO: Content { let status: String; let detail: String }

    @Sendable
    func notice(req: Request) -> ItemDTO<NoticeDTO> { ItemDTO(data: NoticeDTO(version: PrivacyNotice.version)) }

    @Sendable
    func signUp(req: Request) async throws -> Response {
        let body = try JSONBody(req)
        let email = try AccountInput.email(body, "email")
        let password = try body.string("password", maxLength: 1000)
        try ParentPassword.requireStrong(password, field: "password", req: req)
        let country = try AccountInput.country(body)
        let zone = try body.string("time_zone", maxLength: 64)
        guard try await req.appServices.timeZoneNames.isFamilyZone(zone, on: req.sql) else {
            throw Problem.invalidParameter("time_zone", "time_zone must be an IANA time zone name such as Europe/Paris")
        }
        guard try body.string("privacy_notice", maxLength: 40) == PrivacyNotice.version else {
            throw Problem(status: .unprocessableEntity, code: "privacy_notice", detail: "privacy_notice must be the version of the current privacy notice (\(PrivacyNotice.version)), shown to the parent and accepted",
                          field: "privacy_notice")
        }
        try await AccountInput.spendMailBudget(email: email, req: req)
        let hash = try await req.password.async.hash(password)
        let (base, address) = (req.application.settings.publicBaseURL, req.clientAddress)
        try await req.transaction { sql in
            if let parent = try await AccountQueries.create(email: email, passwordHash: hash, country: country, timeZone: zone,
                                                            notice: PrivacyNotice.version, address: address, on: sql) {
                try await AccountQueries.mail(.verify, parent: parent, to: email, baseURL: base, AccountMail.verify, on: sql)
            } else if let owner = try await AccountQueries.find(email: email, on: sql) {
                try await AccountQueries.mail(.reset, parent: owner.id, to: owner.email, baseURL: base, AccountMail.signUpExisting, on: sql)
            }
        }
        req.appServices.jobs.wake(MailDelivery.job)
        return try await Self.accepted("Check your mail: we sent a link to confirm the address.", req: req)
    }

    /// Confirms an address: the sign-up's (or a resend's) link, or a new address (`POST /me/email`).
    @Sendable
    func verify(req: Request) async throws -> HTTPStatus {
        try await Self.verify(token: try JSONBody(req).string("token", maxLength: 200), req: req)
        return .noContent
    }

    /// Uses a verify or new-address token (shared with the page the mailed link opens). Verifying
    /// the address an account was made with ends any address change parked before (someone who
    /// signed up with another's address cannot keep a way out with the account).
    static func verify(token: String, req: Request) async throws {
        try await req.transaction { sql in
            guard let claim = try await AccountTokens.claim(token, purposes: [.verify, .email], on: sql) else { throw Problem.invalidBodyToken }
            switch claim.purpose {
            case .email:
                try await AccountEmail.apply(claim, on: sql)
            default:
                guard try await AccountQueries.markVerified(parent: claim.parent, email: claim.email, on: sql) else { throw Problem.invalidBodyToken }
            }
        }
    }

    @Sendable
    func resend(req: Request) async throws -> Response {
        let email = try AccountInput.email(JSONBody(req), "email")
        try await AccountInput.spendMailBudget(email: email, req: req)
        let base = req.application.settings.publicBaseURL
        try await req.transaction { sql in
            guard let account = try await AccountQueries.find(email: email, on: sql), !account.verified else { return }
            try await AccountQueries.mail(.verify, parent: account.id, to: account.email, baseURL: base, AccountMail.verify, on: sql)
        }
        req.appServices.jobs.wake(MailDelivery.job)
        return try await Self.accepted("If this address has an account still to confirm, a new link is on its way.", req: req)
    }

    @Sendable
    func requestReset(req: Request) async throws -> Response {
        let email = try AccountInput.email(JSONBody(req), "email")
        try await AccountInput.spendMailBudget(email: email, req: req)
        let base = req.application.settings.publicBaseURL
        try await req.transaction { sql in
            guard let account = try await AccountQueries.find(email: email, on: sql) else { return }
            try await AccountQueries.mail(.reset, parent: account.id, to: account.email, baseURL: base, AccountMail.reset, on: sql)
        }
        req.appServices.jobs.wake(MailDelivery.job)
        return try await Self.accepted("If this address has an account, a link to choose a new password is on its way.", req: req)
    }

    /// Sets the new password from a reset link: every device is signed out, the link and any
    /// other reset link end, any pending address change ends (the new password moves the
    /// account's security stamp), and the address counts as verified (its mailbox was reached).
    @Sendable
    func confirmReset(req: Request) async throws -> HTTPStatus {
        let body = try JSONBody(req)
        try await Self.reset(token: try body.string("token", maxLength: 200), password: try body.string("password", maxLength: 1000), req: req)
        return .noContent
    }

    /// Uses a reset token (shared with the page the mailed link opens).
    static func reset(token: String, password: String, req: Request) async throws {
        try ParentPassword.requireStrong(password, field: "password", req: req)
        let hash = try await req.password.async.hash(password)
        let revoked = try await req.transaction { sql in
            guard let claim = try await AccountTokens.claim(token, purposes: [.reset], on: sql) else { throw Problem.invalidBodyToken }
            try await AccountQueries.setPassword(hash, of: claim.parent, audit: .reset, on: sql)
            _ = try await AccountQueries.markVerified(parent: claim.parent, email: claim.email, on: sql)
            try await AccountTokens.retire(.reset, parent: claim.parent, on: sql)
            try await LoginThrottle.clear(.parent, email: claim.email, on: sql)
            return try await SessionQueries.revoke(devices: "d.parent_id = \(bind: claim.parent)", on: sql)
        }
        req.appServices.revokedSessions.note(revoked)
    }

    static func accepted(_ detail: String, req: Request) async throws -> Response {
        let response = try await AcceptedDTO(status: "accepted", detail: detail).encodeResponse(status: .accepted, for: req)
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }
}

/// The privacy notice a parent accepts at sign-up; its version is recorded with the acceptance.
enum PrivacyNotice {
    /// 2026-11-26: a family's members — its parents and caregivers — see its children's data.
    static let version = "2026-11-26"
}
