import Core
import Vapor

/// An RFC 9457 problem, the one shape of every /api error. `code` is stable for clients;
/// `field` names the parameter or body field at fault.
struct Problem: AbortError, Sendable {
    let status: HTTPResponseStatus
    let code: String
    let detail: String
    var field: String?
    var headers: HTTPHeaders = [:]

    var reason: String { detail }

    static func invalidParameter(_ field: String, _ detail: String) -> Problem {
        Problem(status: .badRequest, code: "invalid_parameter", detail: detail, field: field)
    }
    static func invalidBody(_ detail: String) -> Problem {
        Problem(status: .badRequest, code: "invalid_body", detail: detail)
    }
    static let unauthorized = Problem(status: .unauthorized, code: "unauthorized",
                                      detail: "A valid bearer token is required.",
                                      headers: ["WWW-Authenticate": #"Bearer realm="storytime""#])
    /// A bearer token that is there but not valid (malformed, expired, another key): RFC 6750's
    /// challenge says so; the code stays `unauthorized` (sign in again).
    static let rejectedToken = Problem(status: .unauthorized, code: "unauthorized",
                                       detail: "The bearer token is not valid (malformed or expired); sign in again.",
                                       headers: ["WWW-Authenticate": #"Bearer realm="storytime", error="invalid_token""#])
    /// A bearer token whose device was signed out (RFC 6750's `invalid_token`).
    static let invalidToken = Problem(status: .unauthorized, code: "invalid_token",
                                      detail: "This device was signed out; sign in again.",
                                      headers: ["WWW-Authenticate": #"Bearer realm="storytime", error="invalid_token""#])
    /// A refresh (or other single-use) token that is unknown, used or expired — never saying which.
    static let invalidBodyToken = Problem(status: .badRequest, code: "invalid_token",
                                          detail: "This token is not valid (unknown, used or expired).")
    /// The account's current password, required to change something important, is wrong.
    static let wrongPassword = Problem(status: .forbidden, code: "wrong_password", detail: "The password is wrong.", field: "password")
    /// A child device (child mode) asking for what only a parent may do.
    static let parentOnly = Problem(status: .forbidden, code: "parent_only",
                                    detail: "Only a parent can do this: unlock with the parent PIN (POST /api/v1/auth/pin) or sign in as the parent.")
    /// A caregiver asking for what only a parent of the family may do.
    static let parentRoleRequired = Problem(status: .forbidden, code: "parent_role_required",
                                            detail: "Only a parent of the family can do this; caregivers can watch, record plays and ask for playback.")
    static func notFound(_ detail: String) -> Problem { Problem(status: .notFound, code: "not_found", detail: detail) }

    init(status: HTTPResponseStatus, code: String, detail: String, field: String? = nil, headers: HTTPHeaders = [:]) {
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field
        self.headers = headers
    }

    init(_ error: ParameterError) {
        self = .invalidParameter(error.field, error.message)
    }

    /// The problem for any error: ours as they are, an unreachable database as 503, Vapor's by
    /// status. Under `--env production` an unexpected error's detail is never shown.
    init(from error: any Error, environment: Environment) {
        let hideDetail = environment == .production
        switch error {
        case let problem as Problem:
            self = problem
        case let error where DatabaseOutage.matches(error):
            self.init(status: .serviceUnavailable, code: "unavailable",
                      detail: "The catalog database cannot be reached right now; try again in a few seconds.",
                      headers: ["Retry-After": "5"])
        case let error as ParameterError:
            self.init(error)
        case let abort as any AbortError:
            self.init(status: abort.status, code: Self.code(for: abort.status),
                      detail: abort.status == .internalServerError && hideDetail ? "Something went wrong." : abort.reason,
                      headers: abort.headers)
        default:
            self.init(status: .internalServerError, code: "internal_error",
                      detail: hideDetail ? "Something went wrong." : String(describing: error))
        }
    }

    static func code(for status: HTTPResponseStatus) -> String {
        switch status.code {
        case 400: return "bad_request"
        case 401: return "unauthorized"
        case 403: return "forbidden"
        case 404: return "not_found"
        case 405: return "method_not_allowed"
        case 409: return "duplicate"
        case 413: return "payload_too_large"
        case 415: return "unsupported_media_type"
        case 422: return "unprocessable"
        case 429: return "too_many_requests"
        case 503: return "unavailable"
        default: return status.code >= 500 ? "internal_error" : "client_error"
        }
    }

    /// The problem document, keys sorted as the app's encoder sorts them (written by hand: a
    /// child's tablet meets many 404s for books its controls hide, and the encoder cost more
    /// than the rest of such a request).
    func response() -> Response {
        var json = JSONWriter()
        json.raw(#"{"code":"#); json.string(code)
        json.raw(#","detail":"#); json.string(detail)
        if let field { json.raw(#","field":"#); json.string(field) }
        json.raw(#","status":"#); json.int(Int(status.code))
        json.raw(#","title":"#); json.string(status.reasonPhrase)
        json.raw(#","type":"#); json.string("https://storytime.example/problems/" + code.replacingOccurrences(of: "_", with: "-"))
        json.raw("}")
        var headers = self.headers
        headers.replaceOrAdd(name: .contentType, value: "application/problem+json; charset=utf-8")
        return Response(status: status, headers: headers, body: .init(buffer: ByteBuffer(bytes: json.bytes)))
    }
}

/// Turns every error into a response: problem+json under /api, a short page elsewhere.
/// Replaces Vapor's ErrorMiddleware so no error escapes in another shape.
struct ProblemErrorMiddleware: Middleware {
    let environment: Environment
    /// The page for errors outside /api (the console's, from `configure`).
    let page: @Sendable (Problem, Request) async -> Response

    /// Future-based, so a request that succeeds adds no hop to the task pool.
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request).flatMapError { error in
            let problem = Problem(from: error, environment: environment)
            if problem.status.code >= 500 {
                request.logger.report(error: error)
            }
            if request.answersProblemJSON {
                return request.eventLoop.makeSucceededFuture(problem.response())
            }
            return request.eventLoop.makeFutureWithTask { await page(problem, request) }
        }
    }
}
