import JWT
import Vapor

/// The parent's bearer token: an HS256 JWT naming the parent, with an expiry.
struct ParentToken: JWTPayload, Authenticatable {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var aud: AudienceClaim

    static let audience = "storytime-parent-api"

    var parentID: Int? { Int(sub.value) }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try aud.verifyIntendedAudience(includes: Self.audience)
    }
}

/// Requires a valid parent token; anything else is a 401 problem.
struct ParentAuthMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let bearer = request.headers.bearerAuthorization else { throw Problem.unauthorized }
        let token: ParentToken
        do {
            token = try await request.jwt.verify(bearer.token, as: ParentToken.self)
        } catch {
            throw Problem.unauthorized
        }
        guard token.parentID != nil else { throw Problem.unauthorized }
        request.auth.login(token)
        return try await next.respond(to: request)
    }
}

extension Request {
    /// The signed-in parent's id (behind `ParentAuthMiddleware`).
    var parentID: Int {
        get throws {
            guard let id = auth.get(ParentToken.self)?.parentID else { throw Problem.unauthorized }
            return id
        }
    }
}
