import SQLKit
import Vapor

extension AdminResource {
    /// Where catalog events are sent (admins only). The signing secret is made by the database
    /// when an endpoint is created and shown on its page; the delivery log is its own page.
    static let webhookEndpoints = AdminResource(
        slug: "webhook_endpoints", table: "webhook_endpoints", singular: "Webhook endpoint", plural: "Webhook endpoints",
        displayName: "t.url",
        list: .init(
            columns: [
                AdminColumn("url", "URL", sortable: true, format: .link),
                AdminColumn("events", "Events", sql: "COALESCE(t.events, 'every event')"),
                AdminColumn("active", "Active", format: .boolean),
                AdminColumn("waiting", "Waiting", sql: "(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = t.id AND d.delivered_at IS NULL AND d.failed_at IS NULL)", format: .number),
                AdminColumn("id", "ID", sortable: true, format: .number),
            ],
            defaultSort: "id"
        ),
        form: .init(
            fields: [
                AdminField(name: "url", label: "URL", kind: .text(maxLength: 2000), required: true, help: "Where events are POSTed, signed the Standard Webhooks way."),
                AdminField(name: "description", label: "Description", kind: .text(maxLength: 300), nullable: true),
                AdminField(name: "events", label: "Events", kind: .text(maxLength: 300),
                           help: "Blank: every event. Or a comma-separated list of book.went_live, book.left, book.rights_changed, import.finished.", nullable: true),
                AdminField(name: "active", label: "Active", kind: .checkbox, defaultValue: "on"),
            ],
            constraintMessages: [
                "webhook_endpoints_url_format": FieldMessage(field: "url", message: "Enter an http(s) URL."),
                "webhook_endpoints_events_format": FieldMessage(field: "events", message: "Use event types from the list, separated by commas."),
            ],
            // Not to loopback, private, link-local or reserved addresses, nor to a name resolving
            // to one (each delivery checks again, after its own lookup).
            check: { values, req in
                guard case .text(let url)? = values["url"] else { return [:] }
                let targets = WebhookTargets(allowing: req.application.settings.webhookAllowPrivate)
                return await targets.formError(url).map { ["url": $0] } ?? [:]
            }
        ),
        detail: .init(
            columns: [
                AdminColumn("url", "URL"), AdminColumn("description", "Description"),
                AdminColumn("events", "Events", sql: "COALESCE(t.events, 'every event')"),
                AdminColumn("active", "Active", format: .boolean),
                AdminColumn("secret", "Signing secret"),
                AdminColumn("delivered", "Delivered", sql: "(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = t.id AND d.delivered_at IS NOT NULL)", format: .number),
                AdminColumn("failed", "Failed", sql: "(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = t.id AND d.failed_at IS NOT NULL)", format: .number),
                AdminColumn("created_at", "Created", format: .datetime),
            ],
            recordActions: [RecordAction(label: "Delivery log", path: "deliveries", adminOnly: true)],
            snapshot: "to_jsonb(t) - 'secret'"
        ),
        access: .init(requiresAdmin: true, menuLabel: "Webhooks")
    )
}
