import Foundation
import Vapor

/// `POST /webhooks/video`: the video pipeline's events, signed the Standard Webhooks way with
/// `VIDEO_WEBHOOK_SECRET`. A 2xx tells the pipeline to stop retrying: `204` for an event applied,
/// superseded by a later one, or already received (its `webhook-id` seen before). Refusals are
/// problem+json: `400 missing_signature` / `stale_timestamp`, `401 invalid_signature`, `400` for a
/// malformed event (naming its field), `422 unknown_book`.
struct VideoWebhookController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.on(.POST, "webhooks", "video", body: .collect(maxSize: "64kb"), use: receive)
    }

    /// How far ahead of this server's clock an event's own timestamp may be (clocks drift).
    static let futureTolerance: TimeInterval = 300

    @Sendable
    func receive(req: Request) async throws -> Response {
        let body = req.body.data.map { Data($0.readableBytesView) } ?? Data()
        guard let key = WebhookSignature.key(secret: req.application.settings.videoWebhookSecret) else {
            throw Abort(.internalServerError, reason: "VIDEO_WEBHOOK_SECRET is not a key")
        }
        let id = req.headers.first(name: "webhook-id")
        do {
            try WebhookSignature.verify(id: id, timestamp: req.headers.first(name: "webhook-timestamp"),
                                        signatures: req.headers.first(name: "webhook-signature"), body: body, key: key, now: req.now)
        } catch {
            throw Self.problem(error)
        }
        let event = try VideoEvent(json: body)
        // The latest event wins by its timestamp: one from the future would win for ever.
        guard event.occurredAt <= req.now.addingTimeInterval(Self.futureTolerance) else {
            throw Problem.invalidParameter("timestamp", "timestamp must not be more than 5 minutes ahead of now")
        }
        let outcome = try await req.appServices.videoDeliveries.deliver(id!) {
            try await req.transaction { sql in try await VideoEvents.apply(event, webhookID: id!, payload: body, on: sql) }
        }
        guard let outcome else {
            throw Problem(status: .unprocessableEntity, code: "unknown_book", detail: "No book has the id \(event.bookID).", field: "data.book_id")
        }
        req.logger.info("video event", metadata: ["webhook_id": .string(id!), "type": .string(event.kind.rawValue),
                                                  "book_id": .stringConvertible(event.bookID), "outcome": .string(outcome.rawValue)])
        return Response(status: .noContent, headers: ["Webhook-Outcome": outcome.rawValue])
    }

    static func problem(_ failure: WebhookSignature.Failure) -> Problem {
        switch failure {
        case .missingHeaders:
            Problem(status: .badRequest, code: "missing_signature", detail: "webhook-id, webhook-timestamp and webhook-signature are required.")
        case .badTimestamp, .stale:
            Problem(status: .badRequest, code: "stale_timestamp", detail: "webhook-timestamp must be Unix seconds within 5 minutes of now.")
        case .badSignature:
            Problem(status: .unauthorized, code: "invalid_signature", detail: "No webhook-signature matches the body under the shared secret.")
        }
    }
}
