import FluentKit
import SQLKit
import Vapor

/// A batch action over everything a list's filter matches ("select all N matching"): confirmed
/// after a dry-run count, then run by this instance in chunks of `chunk` records in id order,
/// each chunk one transaction through the action's `BatchChange` (so every record it changes
/// has its audit row), with progress in `batch_jobs` for any instance to show.
enum BatchJobs {
    static let chunk = 1_000
    /// A running job with no progress for this long has lost its instance.
    static let stalledAfter: TimeInterval = 120

    /// What a list's filter says, for the confirmation and the job page.
    static func describe(_ request: ListRequest, of resource: AdminResource) -> String {
        var parts: [String] = []
        if let search = request.search { parts.append("search “\(search)”") }
        for filter in resource.list.filters {
            if let value = request.filterValues[filter.name] { parts.append("\(filter.label): \(value)") }
        }
        return parts.isEmpty ? "all \(resource.plural.lowercased())" : parts.joined(separator: "; ")
    }

    /// The exact number of records the filter matches now (the dry run).
    static func count(_ request: ListRequest, store: ResourceStore) async throws -> Int {
        try await BatchJobQueries.count(request, store: store)
    }

    /// Records the job and starts it on this instance (through the app's `JobRunner`, so shutdown
    /// waits for it); its id.
    static func start(resource: AdminResource, action: AdminBatchAction, label: String, target: String?, filter: String, total: Int,
                      staff: StaffUser, app: Application) async throws -> Int {
        let counter = app.appServices.queryCounter
        let id = try await BatchJobQueries.insert(staff: staff, resource: resource.slug, action: action.name, label: label, target: target,
                                                  filter: filter, total: total, on: app.db.sql(counting: counter))
        let logger = app.logger
        let database = app.db
        app.appServices.jobs.spawn("batch job \(id)") {
            do {
                try await run(job: id, resource: resource, action: action, target: target, filter: filter, staff: staff, on: database, counter: counter)
            } catch {
                logger.error("batch job \(id) failed: \(String(reflecting: error))")
                // The resource's own words for a constraint it names (a live book's content under review).
                let named = ConstraintViolation(error).flatMap { resource.form.constraintMessages[$0.constraint]?.message }
                try? await BatchJobQueries.fail(job: id, message: named.map { "Stopped: \($0) The chunks before it are done." }
                                                    ?? "Stopped by an error; the chunks before it are done.",
                                                on: database.sql(counting: counter))
            }
        }
        return id
    }

    private static func run(job: Int, resource: AdminResource, action: AdminBatchAction, target: String?, filter: String,
                            staff: StaffUser, on database: any Database, counter: QueryCounter) async throws {
        let request = ListRequest(resource, query: filter)
        let audit = AuditWriter(staff: staff)
        let sql = database.sql(counting: counter)
        var lastID = 0, processed = 0
        var messages: [String] = []
        while true {
            let store = ResourceStore(resource: resource, parentID: nil, sql: sql)
            let ids = try await BatchJobQueries.chunk(request, store: store, after: lastID, limit: chunk)
            guard let last = ids.last else { break }
            let message = try await database.transaction { db in
                let sql = db.sql(counting: counter)
                return try await action.run(ids, target, BatchChange(store: ResourceStore(resource: resource, parentID: nil, sql: sql), sql: sql, audit: audit))
            }
            messages.append(message)
            lastID = last
            processed += ids.count
            try await BatchJobQueries.progress(job: job, processed: processed, on: sql)
        }
        let summary = messages.count == 1 ? messages[0] : "\(processed) \(resource.plural.lowercased()) processed in \(messages.count) chunks."
        try await BatchJobQueries.finish(job: job, processed: processed, summary: summary, on: sql)
    }
}

/// `/admin/batches/:id`: a job's progress, refreshing itself every second while it runs (a meta
/// refresh: no script).
struct BatchJobController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.batches) + [":job_id"], use: show)
    }

    struct Page: Encodable {
        let layout: LayoutView
        let heading: String
        let filter: String
        let who: String
        let processed: Int
        let total: Int
        let state: String
        let running: Bool
        let message: String?
        let listURL: String
        let auditURL: String
    }

    @Sendable
    func show(req: Request) async throws -> View {
        guard let id = req.parameters.get("job_id").flatMap({ Int($0) }), id > 0,
              let job = try await BatchJobQueries.job(id, stalledAfter: BatchJobs.stalledAfter, on: req.sql),
              let resource = ResourceRegistry.all.first(where: { job.resource == $0.slug })
        else { throw Abort(.notFound) }
        let status = job.status, stalled = job.stalled
        let processed = job.processed, total = job.total
        let state = switch status {
        case "running" where stalled: "Interrupted: the instance running it stopped. What is done stays done; run the action again to finish."
        case "running": "Running…"
        case "done": "Done."
        default: "Failed."
        }
        let filter = job.filter
        let page = Page(
            layout: LayoutView(req, title: "Batch #\(id)", section: resource.section),
            heading: "\(job.actionLabel) — \(resource.plural.lowercased()) matching a filter",
            filter: BatchJobs.describe(ListRequest(resource, query: filter), of: resource),
            who: try req.staff.name(ofStaff: job.staffUserId, email: job.staffEmail), processed: processed, total: total, state: state,
            running: status == "running" && !stalled, message: job.message,
            listURL: AdminPath.list(resource.slug, query: filter.isEmpty ? "" : "?" + filter),
            auditURL: AdminPath.audit + "?table=" + resource.table)
        return try await req.view.render("batch_job", page)
    }
}
