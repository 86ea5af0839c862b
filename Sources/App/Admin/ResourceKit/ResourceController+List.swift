import Core
import SQLKit
import Vapor

extension ResourceController {
    @Sendable
    func list(req: Request) async throws -> View {
        try requireReader(req)
        let store = try await store(req)
        let listing = ResourceListing(store: store, request: ListRequest(resource, query: req.url.query), req: req)
        return try await req.view.render("list", listing.page())
    }

    /// The CSV of the current filter, streamed in keyset-ordered chunks so a million rows never
    /// sit in memory.
    @Sendable
    func export(req: Request) async throws -> Response {
        try requireReader(req)
        let store = try await store(req)
        let request = ListRequest(resource, query: req.url.query)
        let columns = resource.list.csv
        let response = Response(status: .ok, body: .init(asyncStream: { writer in
            do {
                try await writer.write(.buffer(ByteBuffer(string: CSV.line(["id"] + columns.map(\.label)))))
                var lastID = 0
                while true {
                    let rows = try await store.exportChunk(request, after: lastID)
                    guard !rows.isEmpty else { break }
                    var chunk = ""
                    for row in rows {
                        lastID = try row.rowID()
                        chunk += CSV.line([String(lastID)] + (try columns.map { try Cells.csv(row, $0) }))
                    }
                    try await writer.write(.buffer(ByteBuffer(string: chunk)))
                }
                try await writer.write(.end)
            } catch {
                try? await writer.write(.error(error))
            }
        }))
        response.headers.contentType = HTTPMediaType(type: "text", subType: "csv", parameters: ["charset": "utf-8"])
        response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"\(resource.slug).csv\"")
        return response
    }

    /// A batch action on the selected rows, in one transaction, back to the list it came from; or
    /// (`scope=matching`) on everything the list's filter matches: first a dry run that counts
    /// them and asks, then (`confirmed`) a job in chunks with a progress page (`BatchJobs`).
    @Sendable
    func batch(req: Request) async throws -> Response {
        try requireWriter(req)
        let store = try await store(req)
        let list = paths(store).list
        let form = try FormBody(req)
        let back = form.value("return_to").flatMap { ConsolePath.validated($0, under: list) } ?? list
        guard let action = resource.list.batchActions.first(where: { $0.name == form.value("action") }) else {
            req.adminSession.flash("Choose an action for the selected rows.")
            return req.redirect(to: back)
        }
        let target = form.value("target_\(action.name)").flatMap { $0.isEmpty ? nil : $0 }
        if action.target != nil && target == nil {
            req.adminSession.flash("Choose a \(action.targetLabel?.lowercased() ?? "target") for “\(action.label)”.")
            return req.redirect(to: back)
        }
        if form.value("scope") == "matching", resource.access.parent == nil {
            return try await batchMatching(req, store: store, action: action, target: target, filter: form.value("matching_query") ?? "",
                                           confirmed: form.value("confirmed") == "yes")
        }
        let ids = Array(Set(form.values("ids[]").compactMap(Int.init).filter { $0 > 0 })).sorted()
        guard !ids.isEmpty else {
            req.adminSession.flash("Select at least one row first.")
            return req.redirect(to: back)
        }
        let audit = AuditWriter(staff: try req.staff)
        do {
            let message = try await req.transaction { sql in
                try await action.run(ids, target, BatchChange(store: store, sql: sql, audit: audit))
            }
            req.adminSession.flash(message)
        } catch let error where ConstraintViolation(error) != nil {
            // The resource's own words for a constraint it names (a book not approved for families), else a target gone.
            let named = ConstraintViolation(error).flatMap { resource.form.constraintMessages[$0.constraint]?.message }
            req.adminSession.flash("Nothing changed: " + (named ?? "that \(action.targetLabel?.lowercased() ?? "choice") does not exist any more."))
        }
        return req.redirect(to: back)
    }

    struct BatchConfirmPage: Encodable {
        struct Field: Encodable { let name: String; let value: String }
        let layout: LayoutView
        let heading: String
        let message: String
        let action: String
        let fields: [Field]
        let cancelURL: String
        let button: String
    }

    private func batchMatching(_ req: Request, store: ResourceStore, action: AdminBatchAction, target: String?, filter text: String,
                               confirmed: Bool) async throws -> Response {
        // Only what ListRequest understands is kept of the filter (it is stored with the job).
        let request = ListRequest(resource, query: text)
        let filter = request.filterQuery
        let back = paths(store).list + (filter.isEmpty ? "" : "?" + filter)
        let total = try await BatchJobs.count(request, store: store)
        var targetName: String?
        if let kind = action.target, let target {
            var lookups = LookupCache(sql: req.sql)
            targetName = try await lookups.choices(kind)?.first { $0.value == target }?.label ?? target
        }
        let label = action.label + (targetName.map { " “\($0)”" } ?? "")
        guard total > 0 else {
            req.adminSession.flash("Nothing matches this filter: nothing to change.")
            return req.redirect(to: back)
        }
        if confirmed {
            let job = try await BatchJobs.start(resource: resource, action: action, label: label, target: target,
                                                filter: filter, total: total, staff: try req.staff, app: req.application)
            return req.redirect(to: AdminPath.batches + "/\(job)")
        }
        let noun = total == 1 ? resource.singular.lowercased() : resource.plural.lowercased()
        var fields = [BatchConfirmPage.Field(name: "action", value: action.name), .init(name: "scope", value: "matching"),
                      .init(name: "confirmed", value: "yes"), .init(name: "return_to", value: back), .init(name: "matching_query", value: filter)]
        if let target { fields.append(.init(name: "target_\(action.name)", value: target)) }
        let page = BatchConfirmPage(
            layout: LayoutView(req, title: "\(action.label): \(total) \(noun)", section: resource.section),
            heading: "\(label) — every \(resource.singular.lowercased()) matching \(BatchJobs.describe(request, of: resource))",
            message: "This will change \(total.formatted()) \(noun) (those it does not apply to are left as they are), \(BatchJobs.chunk.formatted()) at a time, each one in the audit log.",
            action: paths(store).batch, fields: fields, cancelURL: back, button: "Yes, change \(total.formatted()) \(noun)")
        return try await req.view.render("batch_confirm", page).encodeResponse(for: req)
    }
}
