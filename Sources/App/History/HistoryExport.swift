import Core
import FluentPostgresDriver
import PostgresNIO
import Vapor

/// `GET /children/:id/history/export?format=json|csv`: the whole viewing history, streamed from
/// the database in 32 KB chunks (constant memory, whatever its size). JSON is grouped by book,
/// each with its events in time order; CSV is one event a row, formula-safe.
struct HistoryExport {
    enum Format: String, CaseIterable { case json, csv }

    static func respond(req: Request, child: Int) async throws -> Response {
        let query = QueryParameters(query: req.url.query)
        return try await respond(req: req, child: child, format: try query.choice("format", as: Format.self, allowed: Format.allCases) ?? .json)
    }

    /// The history of `child` in `format`, as a download named `<name>-<child>.<format>`.
    static func respond(req: Request, child: Int, format: Format, name: String = "history") async throws -> Response {
        guard let postgres = req.db as? any PostgresDatabase else { throw Abort(.internalServerError) }
        let logger = req.logger
        var headers: HTTPHeaders = ["Cache-Control": "no-store",
                                    "Content-Disposition": "attachment; filename=\"\(name)-\(child).\(format.rawValue)\""]
        headers.contentType = format == .csv ? HTTPMediaType(type: "text", subType: "csv", parameters: ["charset": "utf-8"]) : .json
        let response = Response(status: .ok, headers: headers)
        response.body = .init(asyncStream: { writer in
            do {
                try await postgres.withConnection { connection in
                    connection.eventLoop.makeFutureWithTask {
                        try await stream(child: child, format: format, on: connection, logger: logger) { try await writer.write(.buffer($0)) }
                    }
                }.get()
                try await writer.write(.end)
            } catch {
                logger.error("history export failed", metadata: ["error": .string(String(reflecting: error))])
                try? await writer.write(.error(error))
            }
        })
        return response
    }

    private static func stream(child: Int, format: Format, on connection: PostgresConnection, logger: Logger,
                               _ write: (ByteBuffer) async throws -> Void) async throws {
        let rows = try await connection.query("""
            SELECT p.id, p.book_id, b.title, b.author,
                   to_char(p.played_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), p.position_seconds, p.completed,
                   COALESCE(bool_or(p.completed) OVER (PARTITION BY p.book_id ORDER BY p.played_at, p.id
                                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false)
              FROM plays p JOIN books b ON b.id = p.book_id
             WHERE p.child_id = \(child)
             ORDER BY p.book_id, p.played_at, p.id
            """, logger: logger)
        var out = JSONWriter()
        var currentBook: Int?
        if format == .json { out.raw("{\"data\":[") } else {
            out.bytes += Array(CSV.line(["play_id", "book_id", "title", "author", "played_at", "position_seconds", "completed", "rewatch"]).utf8)
        }
        for try await (id, book, title, author, playedAt, position, completed, rewatch)
                in rows.decode((Int, Int, String, String, String, Int, Bool, Bool).self) {
            switch format {
            case .csv:
                out.bytes += Array(CSV.line([String(id), String(book), title, author, playedAt, String(position),
                                             String(completed), String(rewatch)]).utf8)
            case .json:
                if book != currentBook {
                    if currentBook != nil { out.raw("]},") }
                    currentBook = book
                    out.raw("{\"book\":{\"author\":"); out.string(author)
                    out.raw(",\"id\":"); out.int(book)
                    out.raw(",\"title\":"); out.string(title)
                    out.raw("},\"events\":[")
                } else {
                    out.raw(",")
                }
                out.raw("{\"completed\":"); out.raw(completed ? "true" : "false")
                out.raw(",\"id\":"); out.int(id)
                out.raw(",\"played_at\":"); out.string(playedAt)
                out.raw(",\"position_seconds\":"); out.int(position)
                out.raw(",\"rewatch\":"); out.raw(rewatch ? "true" : "false")
                out.raw("}")
            }
            if out.bytes.count >= 32 * 1024 {
                try await write(ByteBuffer(bytes: out.bytes))
                out.bytes.removeAll(keepingCapacity: true)
            }
        }
        if format == .json { out.raw(currentBook == nil ? "]}" : "]}]}") }
        try await write(ByteBuffer(bytes: out.bytes))
    }
}
