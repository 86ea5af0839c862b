import Foundation
import HTTPTypes
import OpenAPIRuntime

/// What went wrong, from the server's problem+json (`code`, `detail`, `field`, `Retry-After`) or
/// from the client itself. The server's stable `code` decides the case; `code` gives it back.
public enum StorytimeError: Error, Sendable, Equatable {
    /// 400 `invalid_parameter` / `invalid_body`: `field` names the parameter when there is one.
    case invalidParameter(code: String, field: String?, detail: String)
    /// 401 that signing in again did not cure (or no credentials to sign in with).
    case unauthorized(code: String, detail: String)
    /// 403, e.g. family controls; `retryAfter` in seconds when the server says when.
    case forbidden(code: String, detail: String, retryAfter: Int?)
    /// 404: unknown, or not the caller's — the server does not say which.
    case notFound(detail: String)
    /// 409 `duplicate`: already in the library.
    case duplicate(detail: String)
    /// Any other 409, by its code: `last_parent`, `only_member`, `already_a_member`,
    /// `already_in_a_family`, `family_full`, `request_decided`, `email_taken`, …
    case conflict(code: String, detail: String)
    /// 422, e.g. `rights_unavailable`.
    case unprocessable(code: String, detail: String)
    /// 429: too many attempts; `retryAfter` in seconds.
    case tooManyRequests(detail: String, retryAfter: Int?)
    /// 503: the service is briefly unavailable; `retryAfter` in seconds.
    case unavailable(detail: String, retryAfter: Int?)
    /// Any other error status.
    case server(status: Int, code: String, detail: String)
    /// A route that needs a token was called before `signIn`.
    case notSignedIn
    /// No answer (network) or an answer the document does not describe.
    case transport(String)

    /// The server's stable code (`duplicate`, `rights_unavailable`, …), or the client's own.
    public var code: String {
        switch self {
        case .invalidParameter(let code, _, _), .unauthorized(let code, _), .forbidden(let code, _, _),
             .unprocessable(let code, _), .conflict(let code, _), .server(_, let code, _):
            return code
        case .notFound: return "not_found"
        case .duplicate: return "duplicate"
        case .tooManyRequests: return "too_many_requests"
        case .unavailable: return "unavailable"
        case .notSignedIn: return "not_signed_in"
        case .transport: return "transport"
        }
    }

    /// A caregiver asked for a change only a parent of the family may make (403 `parent_role_required`).
    public var requiresParentRole: Bool {
        if case .forbidden("parent_role_required", _, _) = self { return true }
        return false
    }

    /// Why the child's family controls refused, when they did.
    public enum FamilyControlRefusal: Sendable, Equatable {
        /// `bedtime`: plays are allowed again after `retryAfter` seconds.
        case bedtime(retryAfter: Int?)
        /// `time_limit_reached`: the day's minutes are used; allowed again after `retryAfter` seconds.
        case timeLimitReached(retryAfter: Int?)
        /// `blocked_by_controls`: the book is too old for the child or blocked (403 on a play, 422 on a library add).
        case blocked
    }

    /// The family-controls refusal this error is, if it is one.
    public var familyControlRefusal: FamilyControlRefusal? {
        switch self {
        case .forbidden("bedtime", _, let retryAfter): return .bedtime(retryAfter: retryAfter)
        case .forbidden("time_limit_reached", _, let retryAfter): return .timeLimitReached(retryAfter: retryAfter)
        case .forbidden("blocked_by_controls", _, _), .unprocessable("blocked_by_controls", _): return .blocked
        default: return nil
        }
    }

    /// The error a problem+json answer stands for.
    init(status: Int, problem: ProblemBody?, retryAfter: Int?) {
        let code = problem?.code ?? "http_\(status)"
        let detail = problem?.detail ?? HTTPResponse.Status(code: status).reasonPhrase
        switch status {
        case 400: self = .invalidParameter(code: code, field: problem?.field, detail: detail)
        case 401: self = .unauthorized(code: code, detail: detail)
        case 403: self = .forbidden(code: code, detail: detail, retryAfter: retryAfter)
        case 404: self = .notFound(detail: detail)
        case 409: self = code == "duplicate" ? .duplicate(detail: detail) : .conflict(code: code, detail: detail)
        case 422: self = .unprocessable(code: code, detail: detail)
        case 429: self = .tooManyRequests(detail: detail, retryAfter: retryAfter)
        case 503: self = .unavailable(detail: detail, retryAfter: retryAfter)
        default: self = .server(status: status, code: code, detail: detail)
        }
    }

    /// The fields of an RFC 9457 problem the client reads.
    struct ProblemBody: Decodable {
        let code: String?
        let detail: String?
        let field: String?
    }

    /// `error` as thrown by the generated client, unwrapped to a `StorytimeError`.
    static func from(_ error: any Error) -> StorytimeError {
        if let error = error as? StorytimeError { return error }
        if let error = error as? ClientError { return from(error.underlyingError) }
        return .transport(String(describing: error))
    }
}

/// Turns every error answer into a thrown `StorytimeError`, so the facade sees only successes.
struct ProblemMiddleware: ClientMiddleware {
    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, responseBody) }
        var problem: StorytimeError.ProblemBody?
        if let responseBody, let data = try? await Data(collecting: responseBody, upTo: 64 * 1024) {
            problem = try? JSONDecoder().decode(StorytimeError.ProblemBody.self, from: data)
        }
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0) }
        throw StorytimeError(status: response.status.code, problem: problem, retryAfter: retryAfter)
    }
}
