import Core
import SQLKit
import Vapor

/// `from`, `to` and `book_id` of the history: `from` ≤ played_at < `to`. A bound is an RFC 3339
/// date-time or a date (`to` as a date includes that whole day), days in `tz` (default UTC).
struct HistoryFilter {
    var from: SQLQueryString?
    var to: SQLQueryString?
    var bookID: Int?

    /// Only a book (no dates).
    init(bookID: Int?) { self.bookID = bookID }

    init(_ query: QueryParameters, req: Request) async throws {
        let zone = try await req.timeZone(query)
        from = try Self.bound(query, "from", zone: zone, nextDay: false)
        to = try Self.bound(query, "to", zone: zone, nextDay: true)
        bookID = try query.integer("book_id", in: 1...Int(Int32.max), what: "a positive integer")
    }

    private static func bound(_ query: QueryParameters, _ name: String, zone: String, nextDay: Bool) throws -> SQLQueryString? {
        guard let text = try query.value(name) else { return nil }
        if let instant = Instants.dateTime(text) { return "\(bind: instant)" }
        guard Instants.day(text) != nil else {
            throw Problem.invalidParameter(name, "\(name) must be an RFC 3339 date-time or a date YYYY-MM-DD")
        }
        return "((\(bind: text)::date + \(literal: nextDay ? 1 : 0))::timestamp AT TIME ZONE \(bind: zone))"
    }

    var isEmpty: Bool { from == nil && to == nil && bookID == nil }
    var hasDates: Bool { from != nil || to != nil }

    func condition(child: Int) -> SQLQueryString {
        var sql: SQLQueryString = "p.child_id = \(bind: child)"
        if let from { sql += " AND p.played_at >= " + from }
        if let to { sql += " AND p.played_at < " + to }
        if let bookID { sql += " AND p.book_id = \(bind: bookID)" }
        return sql
    }
}
