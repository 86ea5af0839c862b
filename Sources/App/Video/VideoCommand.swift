import Core
import Foundation
import Vapor

/// `video simulate`: signs one event with `VIDEO_WEBHOOK_SECRET` and sends it to a running app's
/// `POST /webhooks/video`, as the encoding pipeline would — so a newcomer sees a video become ready.
struct VideoCommand: StorytimeCommandGroup {
    let name = "video"
    var help: String { "The video pipeline: simulate one of its signed events against a running app." }
    var subcommands: [String: any AnyAsyncCommand] { ["simulate": VideoSimulateCommand()] }
}

struct VideoSimulateCommand: StorytimeCommand {
    let options: Set<String> = ["book", "event", "duration", "captions", "reason", "url", "asset"]
    let usage = "App video simulate --book ID --event created|processing|ready|failed [--duration 340] [--captions en,fr] [--reason TEXT] [--url http://localhost:8080]"
    var help: String { "Signs and sends one video pipeline event to a running app (default: PUBLIC_BASE_URL)." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        guard let bookText = try arguments.single("book"), let book = Int(bookText), book > 0 else {
            throw Abort(.badRequest, reason: "--book must be a book id (usage: \(usage))")
        }
        let kindText = try arguments.single("event") ?? "ready"
        guard let kind = VideoEvent.Kind(rawValue: "video.asset." + kindText) else {
            throw Abort(.badRequest, reason: "--event must be created, processing, ready or failed")
        }
        var data: [String: Any] = ["book_id": book, "asset_id": try arguments.single("asset") ?? "sim_\(book)"]
        if kind == .ready {
            guard let duration = Int(try arguments.single("duration") ?? ""), (1...86_400).contains(duration) else {
                throw Abort(.badRequest, reason: "a ready event needs --duration SECONDS (1 to 86400)")
            }
            data["duration_seconds"] = duration
            let languages = (try arguments.single("captions") ?? "").split(separator: ",").map { String($0) }
            data["captions"] = languages.map { ["language": $0] }
        }
        if kind == .failed { data["reason"] = try arguments.single("reason") ?? "simulated failure" }
        let now = app.now
        let body = try JSONSerialization.data(withJSONObject: [
            "type": kind.rawValue, "timestamp": ISO8601DateFormatter.fractional.string(from: now), "data": data,
        ], options: [.sortedKeys, .withoutEscapingSlashes])
        guard let key = WebhookSignature.key(secret: app.settings.videoWebhookSecret) else {
            throw Abort(.internalServerError, reason: "VIDEO_WEBHOOK_SECRET is not a key")
        }
        let id = "msg_" + UUID().uuidString.lowercased()
        let timestamp = Int(now.timeIntervalSince1970)
        let base = try arguments.single("url") ?? app.settings.publicBaseURL
        let response = try await app.client.post(URI(string: base + "/webhooks/video"), headers: [
            "Content-Type": "application/json", "webhook-id": id, "webhook-timestamp": String(timestamp),
            "webhook-signature": WebhookSignature.sign(id: id, timestamp: timestamp, body: body, key: key),
        ]) { $0.body = ByteBuffer(data: body) }
        let outcome = response.headers.first(name: "Webhook-Outcome") ?? ""
        guard response.status == .noContent else {
            let text = response.body.map { String(buffer: $0) } ?? ""
            throw Abort(.badRequest, reason: "the app answered \(response.status.code): \(text)")
        }
        context.console.print("sent \(kind.rawValue) for book \(book) as \(id): \(outcome)")
    }
}

extension ISO8601DateFormatter {
    /// RFC 3339 with milliseconds, in UTC.
    static var fractional: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
