import Core
import Vapor

/// `GET /api/v1/children/:child_id/export` (parent): everything kept about the child, as one JSON
/// document — every row of every table that holds the child's data, each section named below —
/// or, with `format=csv`, its plays as CSV (the history export's CSV). `Cache-Control: no-store`.
struct ChildExportController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.parentAlways.get("export", use: export)
    }

    /// The document's sections and the tables they are read from (`child_id` names the child in
    /// each; the profile is the `children` row). A test holds this list to every table of the
    /// schema with a `child_id` column.
    static let sections: [(name: String, table: String, order: String)] = [
        ("controls", "child_controls", "child_id"),
        ("library", "library_entries", "id"),
        ("plays", "plays", "id"),
        ("play_month_totals", "play_month_totals", "month, book_id"),
        ("play_day_totals", "play_day_totals", "day"),
        ("play_fold_tails", "play_fold_tails", "book_id"),
        ("play_receipts", "play_receipts", "received_at, client_id"),
        ("requests", "book_requests", "id"),
        ("devices", "parent_devices", "id"),
        ("audit_log", "parent_audit_log", "id"),
        ("playback_reservations", "playback_reservations", "id"),
    ]

    enum Format: String, CaseIterable { case json, csv }

    @Sendable
    func export(req: Request) async throws -> Response {
        let child = try req.child.id
        let format = try QueryParameters(query: req.url.query).choice("format", as: Format.self, allowed: Format.allCases) ?? .json
        if format == .csv { return try await HistoryExport.respond(req: req, child: child, format: .csv, name: "plays") }
        let parent = try req.parentID
        guard let document = try await ChildExportQueries.document(child: child, parent: parent, sections: Self.sections, on: req.sql) else {
            throw Problem.notFound("No such child.")
        }
        let response = Response.json(ByteBuffer(string: document))
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"child-\(child).json\"")
        return response
    }
}
