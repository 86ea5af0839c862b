import SQLKit
import Vapor

/// `POST /api/v1/me/password {current_password, new_password}`: the current one required (and
/// throttled like a sign-in), the new one by `ParentPassword`'s rules. Every other device is
/// signed out; this one stays signed in.
struct PasswordRoutes: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        api.parent.on(.POST, "me", "password", body: .collect(maxSize: "16kb"), use: change)
    }

    @Sendable
    func change(req: Request) async throws -> HTTPStatus {
        let body = try JSONBody(req)
        let current = try body.string("current_password", maxLength: 1000)
        let new = try body.string("new_password", maxLength: 1000)
        try ParentPassword.requireStrong(new, field: "new_password", req: req)
        let parent = try req.parentID
        try await ParentPassword.requireCurrent(current, parent: parent, req: req, problem: Problem(
            status: .forbidden, code: "wrong_password", detail: "The current password is wrong.", field: "current_password"))
        let hash = try await req.password.async.hash(new)
        let device = req.deviceID ?? 0
        let revoked = try await req.transaction { sql in
            try await AccountQueries.setPassword(hash, of: parent, audit: .changed, on: sql)
            return try await SessionQueries.revoke(devices: "d.parent_id = \(bind: parent) AND d.id <> \(bind: device)", on: sql)
        }
        req.appServices.revokedSessions.note(revoked)
        return .noContent
    }
}
