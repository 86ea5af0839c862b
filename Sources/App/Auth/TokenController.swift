import JWT
import SQLKit
import Vapor

/// `POST /api/v1/auth/token`: email and password for a bearer token, throttled per email and per
/// client address (`LoginThrottle`).
struct TokenController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.on(.POST, "auth", "token", body: .collect(maxSize: "16kb"), use: token)
    }

    struct TokenDTO: Content {
        let accessToken: String
        let tokenType: String
        let expiresIn: Int
    }

    @Sendable
    func token(req: Request) async throws -> TokenDTO {
        let body = try JSONBody(req)
        let email = try body.string("email", maxLength: 320).trimmingCharacters(in: .whitespaces)
        let password = try body.string("password", maxLength: 1000)
        let sql = req.sql

        let throttle = LoginThrottle(.parent, email: email, request: req)
        if let wait = try await throttle.reserve(on: sql) {
            throw Problem(status: .tooManyRequests, code: "too_many_requests",
                          detail: "Too many failed sign-ins; try again in \((wait + 59) / 60) minutes.",
                          headers: ["Retry-After": String(wait)])
        }

        let row = try await sql.raw("SELECT id, password_hash FROM parents WHERE lower(email) = lower(\(bind: email))").first()
        let parentID = try row?.decode(column: "id", as: Int.self)
        let valid: Bool
        if let hash = try row?.decode(column: "password_hash", as: String.self) {
            valid = (try? await req.password.async.verify(password, created: hash)) ?? false
        } else {
            // Spend the same bcrypt time when the email is unknown, so timing reveals no accounts.
            _ = try? await req.password.async.hash(password)
            valid = false
        }
        guard valid, let parentID else {
            req.application.metrics.loginFailed("parent")
            throw Problem(status: .unauthorized, code: "invalid_credentials", detail: "Email or password is wrong.")
        }
        try await throttle.succeeded(on: sql)

        let lifetime = req.application.settings.tokenLifetime
        let now = Date()
        let payload = ParentToken(sub: .init(value: String(parentID)), exp: .init(value: now.addingTimeInterval(lifetime)),
                                  iat: .init(value: now), nbf: .init(value: now.addingTimeInterval(-ParentToken.clockSkew)),
                                  aud: .init(value: [ParentToken.audience]))
        return TokenDTO(accessToken: try await req.jwt.sign(payload), tokenType: "Bearer", expiresIn: Int(lifetime))
    }

}
