import Core
import SQLKit
import Vapor

/// The webhook delivery log (admins): the latest deliveries, of every endpoint or one, with their
/// attempts and last answer; any can be sent again (same `webhook-id`, so a receiver that already
/// has it drops the repeat). Redelivery is audited.
struct WebhookDeliveriesController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.webhookDeliveries), use: log)
        routes.get([.constant(AdminResource.webhookEndpoints.slug), .parameter("id"), .constant("deliveries")], use: log)
        routes.post(AdminPath.segments(AdminPath.webhookDeliveries) + [.parameter("delivery"), .constant("redeliver")], use: redeliver)
    }

    struct RowView: Encodable {
        let id: Int
        let url: String
        let endpointURL: String
        let event: String
        let messageID: String
        let created: String
        let attempts: Int
        let state: String
        let badge: String
        let answer: String
        let payload: String
        let redeliverURL: String
    }

    struct Page: Encodable {
        let layout: LayoutView
        let heading: String
        let rows: [RowView]
        let endpointsURL: String
    }

    @Sendable
    func log(req: Request) async throws -> View {
        try req.requireAdmin()
        let endpoint = req.parameters.get("id", as: Int.self)
        let rows = try await WebhookDeliveriesQueries.log(endpoint: endpoint, on: req.sql)
        let time = StaffTime(try req.staff)
        let views = rows.map { row in
            let state: (String, String) = row.deliveredAt != nil ? ("delivered", "ready") : row.failedAt != nil ? ("failed", "failed")
                : row.attempts == 0 ? ("waiting", "pending") : ("retrying at \(time.format(row.nextAttemptAt))", "pending")
            return RowView(id: row.id, url: row.url, endpointURL: AdminPath.record(AdminResource.webhookEndpoints.slug, row.endpointId),
                           event: row.eventType, messageID: row.messageId, created: time.format(row.createdAt), attempts: row.attempts,
                           state: state.0, badge: state.1, answer: row.lastStatus.map { "HTTP \($0)" } ?? row.lastError ?? "—",
                           payload: row.payload, redeliverURL: AdminPath.webhookDeliveries + "/\(row.id)/redeliver")
        }
        let heading = endpoint == nil ? "Webhook deliveries" : "Webhook deliveries of endpoint #\(endpoint!)"
        return try await req.view.render("webhook_deliveries", Page(layout: LayoutView(req, title: heading, section: AdminResource.webhookEndpoints.slug),
                                                                    heading: heading, rows: views, endpointsURL: AdminPath.list(AdminResource.webhookEndpoints.slug)))
    }

    @Sendable
    func redeliver(req: Request) async throws -> Response {
        try req.requireAdmin()
        guard let id = req.parameters.get("delivery", as: Int.self) else { throw Abort(.notFound) }
        let staff = try req.staff
        let found = try await req.transaction { sql -> Bool in
            guard try await WebhookDeliveriesQueries.redeliver(id, on: sql) else { return false }
            try await AuditWriter(staff: staff).record(.webhookRedeliver, table: "webhook_deliveries", ids: [id], before: [:], after: [:], on: sql)
            return true
        }
        guard found else { throw Abort(.notFound) }
        req.appServices.jobs.wake(WebhookDelivery.job)
        req.adminSession.flash("Delivery #\(id) will be sent again in a moment.")
        return req.redirect(to: req.headers.first(name: .referer).flatMap { ConsolePath.validated(URL(string: $0)?.path ?? "", under: AdminPath.dashboard) } ?? AdminPath.webhookDeliveries)
    }
}
