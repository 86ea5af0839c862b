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
        let columns = resource.csv
        let response = Response(status: .ok, body: .init(asyncStream: { writer in
            do {
                try await writer.write(.buffer(ByteBuffer(string: CSV.line(["id"] + columns.map(\.label)))))
                var lastID = 0
                while true {
                    let rows = try await store.exportChunk(request, after: lastID)
                    guard !rows.isEmpty else { break }
                    var chunk = ""
                    for row in rows {
                        lastID = try row.decode(column: "row_id", as: Int.self)
                        chunk += CSV.line([String(lastID)] + (try columns.map { try Cells.text(row, $0) }))
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

    /// A batch action on the selected rows, in one transaction, back to the list it came from.
    @Sendable
    func batch(req: Request) async throws -> Response {
        try requireWriter(req)
        let store = try await store(req)
        let list = paths(store).list
        let form = try FormBody(req)
        let back = form.value("return_to").flatMap { ConsolePath.validated($0, under: list) } ?? list
        guard let action = resource.batchActions.first(where: { $0.name == form.value("action") }) else {
            req.adminSession.flash("Choose an action for the selected rows.")
            return req.redirect(to: back)
        }
        let ids = Array(Set(form.values("ids[]").compactMap(Int.init).filter { $0 > 0 })).sorted()
        guard !ids.isEmpty else {
            req.adminSession.flash("Select at least one row first.")
            return req.redirect(to: back)
        }
        let target = form.value("target_\(action.name)").flatMap { $0.isEmpty ? nil : $0 }
        if action.target != nil && target == nil {
            req.adminSession.flash("Choose a \(action.targetLabel?.lowercased() ?? "target") for “\(action.label)”.")
            return req.redirect(to: back)
        }
        let audit = AuditWriter(staff: try req.staff)
        do {
            let message = try await req.transaction { sql in
                try await action.run(ids, target, BatchChange(store: store, sql: sql, audit: audit))
            }
            req.adminSession.flash(message)
        } catch let error where ConstraintViolation(error) != nil {
            req.adminSession.flash("Nothing changed: that \(action.targetLabel?.lowercased() ?? "choice") does not exist any more.")
        }
        return req.redirect(to: back)
    }
}
