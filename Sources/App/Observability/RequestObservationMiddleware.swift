import Foundation
import NIOCore
import Vapor

/// Every request, once: its id (the caller's `X-Request-Id` when it is a plain token of at most
/// 128 characters, else a fresh UUID) on the logger and echoed in `X-Request-Id`; when it is
/// answered, one log line (request id, method, route pattern, status, duration). Requests are
/// counted and timed by Vapor itself, through swift-metrics (`AppMetrics`).
/// The line never holds a query string, header, cookie or body: nothing secret can reach a log.
/// Future-based, so the catalog's event-loop path stays a single hop.
struct RequestObservationMiddleware: Middleware {
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let started = ContinuousClock.now
        var id = request.id
        if !Self.isPlainID(id) {
            id = UUID().uuidString
            request.logger[metadataKey: "request-id"] = .string(id)   // Vapor put the caller's there
        }
        let requestID = id
        return next.respond(to: request).map { response in
            response.headers.replaceOrAdd(name: .xRequestId, value: requestID)
            Self.finished(request, status: response.status.code, started: started)
            return response
        }.flatMapErrorThrowing { error in
            // Only an error no middleware inside turned into a response (rare: the problem middleware runs inside).
            Self.finished(request, status: (error as? any AbortError)?.status.code ?? 500, started: started)
            throw error
        }
    }

    static func isPlainID(_ id: String) -> Bool {
        id.utf8.count <= 128 && !id.isEmpty && id.utf8.allSatisfy { c in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ".")
        }
    }

    /// The route's pattern (`/api/v1/children/:child_id/library`), or `unmatched`.
    static func route(of request: Request) -> String {
        guard let route = request.route else { return "unmatched" }
        return "/" + route.path.map(\.description).joined(separator: "/")
    }

    private static func finished(_ request: Request, status: UInt, started: ContinuousClock.Instant) {
        guard request.logger.logLevel <= .info else { return }
        let duration = ContinuousClock.now - started
        let route = route(of: request)
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        request.logger.info("request", metadata: [
            "method": .string(request.method.rawValue), "route": .string(route), "status": .stringConvertible(status),
            "duration_ms": .string(String(format: "%.2f", ms)),
        ])
    }
}
