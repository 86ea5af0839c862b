import Foundation
import SQLKit
import Vapor

/// Console: `/admin/video_assets/:id/replay` — an admin applies the asset's last pipeline event
/// (the latest by the pipeline's timestamp) again, e.g. after fixing the asset by hand went wrong.
/// Audited as that admin (`pipeline replay: …`); the event is marked replayed.
struct VideoReplayController: RouteCollection {
    static let path = "replay"

    func boot(routes: any RoutesBuilder) throws {
        let replay: [PathComponent] = [.constant(AdminResource.videoAssets.slug), .parameter("id"), .constant(Self.path)]
        routes.get(replay, use: confirm)
        routes.post(replay, use: self.replay)
    }

    private struct Last { let webhookID: String; let type: String; let occurredAt: Date; let payload: String; let book: String }

    private func last(_ req: Request) async throws -> (Int, Last?) {
        try req.requireAdmin()
        guard let id = req.parameters.get("id", as: Int.self), id > 0 else { throw Abort(.notFound) }
        guard let asset = try await VideoReplayQueries.asset(id: id, on: req.sql) else { throw Abort(.notFound) }
        let event = try await VideoReplayQueries.lastEvent(book: asset.bookId, on: req.sql)
        return (id, event.map { Last(webhookID: $0.webhookId, type: $0.type, occurredAt: $0.occurredAt, payload: $0.payload, book: asset.title) })
    }

    @Sendable
    func confirm(req: Request) async throws -> View {
        let (id, last) = try await last(req)
        let record = AdminPath.record(AdminResource.videoAssets.slug, id)
        let page = ConfirmPage(layout: LayoutView(req, title: "Replay the last pipeline event", section: AdminResource.videoAssets.slug),
                               heading: "Replay the last pipeline event?",
                               message: last.map { "\($0.type) of \(ISO8601DateFormatter().string(from: $0.occurredAt)) (\($0.webhookID)) for “\($0.book)” is applied again, whatever came after it." }
                                   ?? "The pipeline has sent no events for this video.",
                               warning: nil, action: record + "/" + Self.path, cancelURL: record, button: "Yes, replay it")
        return try await req.view.render("confirm", page)
    }

    @Sendable
    func replay(req: Request) async throws -> Response {
        let (id, last) = try await last(req)
        let record = AdminPath.record(AdminResource.videoAssets.slug, id)
        guard let last else {
            req.adminSession.flash("The pipeline has sent no events for this video.")
            return req.redirect(to: record)
        }
        let staff = try req.staff
        let event = try VideoEvent(json: Data(last.payload.utf8))
        _ = try await req.transaction { sql in
            try await VideoReplayQueries.markReplayed(webhookID: last.webhookID, on: sql)
            return try await VideoEvents.apply(event, webhookID: last.webhookID, payload: Data(), replaying: true, replayedBy: staff, on: sql)
        }
        req.adminSession.flash("Replayed \(last.type) (\(last.webhookID)).")
        return req.redirect(to: record)
    }
}
