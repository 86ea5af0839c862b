import Foundation
import NIOConcurrencyHelpers
import Vapor

/// A per-account request budget on `/api` (`RATE_LIMIT_REQUESTS` per `RATE_LIMIT_WINDOW_SECONDS`;
/// signed-out requests by client address), announced with the IETF httpapi draft's headers:
/// `RateLimit-Policy: "account";q=600;w=60` and `RateLimit: "account";r=<left>;t=<seconds to
/// the window's end>`. Past it, 429 `rate_limited` with `Retry-After`.
///
/// Counted in each instance's memory, in fixed windows aligned on the clock: behind a load
/// balancer spreading an account's requests over N instances, an account may make up to N times
/// the budget (README, "API conventions": divide the budget by the instances). A token this
/// instance has not verified yet counts against its address until the first answer verifies it.
struct RateLimitMiddleware: Middleware {
    let limit: Int
    let window: Int
    let counters = Counters()

    final class Counters: Sendable {
        private struct State { var window = 0; var counts: [String: Int] = [:] }
        private let state = NIOLockedValueBox(State())

        /// Counts a request of `key` in the window starting at `windowStart`; the new count.
        func count(_ key: String, windowStart: Int) -> Int {
            state.withLockedValue { state in
                if state.window != windowStart { state = State(window: windowStart) }
                state.counts[key, default: 0] += 1
                return state.counts[key]!
            }
        }
    }

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard limit > 0, request.isParentAPI else { return next.respond(to: request) }
        let date = request.now
        let now = Int(date.timeIntervalSince1970)
        let start = now - now % window
        let reset = start + window - now
        let used = counters.count(Self.key(request, at: date), windowStart: start)
        let policy = "\"account\";q=\(limit);w=\(window)"
        guard used <= limit else {
            var problem = Problem(status: .tooManyRequests, code: "rate_limited",
                                  detail: "Too many requests: \(limit) per \(window) seconds; try again in \(reset) seconds.")
            problem.headers = ["Retry-After": String(reset), "RateLimit-Policy": policy, "RateLimit": "\"account\";r=0;t=\(reset)"]
            return request.eventLoop.makeSucceededFuture(problem.response())
        }
        return next.respond(to: request).map { response in
            response.headers.replaceOrAdd(name: "RateLimit-Policy", value: policy)
            response.headers.replaceOrAdd(name: "RateLimit", value: "\"account\";r=\(limit - used);t=\(reset)")
            return response
        }
    }

    /// The account of a token this instance verified (valid at `now`), else the client's address.
    static func key(_ request: Request, at now: Date) -> String {
        if let bearer = request.headers.bearerToken,
           let parent = request.application.appServices.verifiedTokens.token(bearer, at: now)?.parentID {
            return "p\(parent)"
        }
        return "a" + request.clientAddress
    }
}
