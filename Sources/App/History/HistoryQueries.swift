import Core
import Foundation
import SQLKit

/// The SQL of one child's viewing history: pages, continue watching, removing plays. The child
/// is already the caller's (`req.child`).
struct HistoryQueries {
    let sql: any SQLDatabase
    let child: Int

    /// A page of the history in SQL: the page's play ids from the history index alone however
    /// deep the page (a late row lookup); then, for those only, the play, its book and whether it
    /// is a rewatch (the child had completed the book in an earlier play: one index probe).
    /// Unfiltered, the total is `plays`, the child's play count kept by triggers.
    /// A page after `cursor` (cursor paging: no offset), and the cursor after its last play when
    /// more may follow.
    func page(filter: HistoryFilter, after cursor: HistoryCursor?, perPage: Int, plays: Int) async throws -> (plays: [Play], total: Int, next: HistoryCursor?) {
        let condition = filter.condition(child: child)
        let total = filter.isEmpty ? plays : try await sql.number("SELECT count(*) AS n FROM plays p WHERE \(condition)")
        let after: SQLQueryString = cursor.map { " AND \($0.condition)" } ?? ""
        let rows = try await sql.raw("""
            SELECT p.id, p.position_seconds, p.completed, p.played_at, \(BookRefDTO.columns),
                   floor(extract(epoch FROM p.played_at) * 1000000)::bigint AS at_us,
                   EXISTS (SELECT 1 FROM plays q WHERE q.child_id = p.child_id AND q.book_id = p.book_id AND q.completed
                              AND (q.played_at, q.id) < (p.played_at, p.id)) AS rewatch
              FROM (SELECT p.id FROM plays p WHERE \(condition)\(after)
                     ORDER BY p.played_at DESC, p.id DESC LIMIT \(bind: perPage + 1)) page
              JOIN plays p ON p.id = page.id
              JOIN books b ON b.id = p.book_id LEFT JOIN video_assets v ON v.book_id = b.id
             ORDER BY p.played_at DESC, p.id DESC
            """).all(decoding: Play.self, keyDecodingStrategy: .convertFromSnakeCase)
        let listed = Array(rows.prefix(perPage))
        let next = rows.count > perPage ? try listed.last.map { play in
            guard let microseconds = play.atUs else { throw DecodingError.valueNotFound(Int64.self, .init(codingPath: [], debugDescription: "at_us")) }
            return HistoryCursor(microseconds: microseconds, id: play.id)
        } : nil
        return (listed, total, next)
    }

    /// A play of a history page, with its book and whether it is a rewatch (`at_us`: its
    /// moment in microseconds, in a cursor page only).
    struct Play: Decodable {
        let id: Int
        let book: BookRefDTO
        let positionSeconds: Int
        let completed: Bool
        let playedAt: Date
        let rewatch: Bool
        let atUs: Int64?

        enum CodingKeys: String, CodingKey { case id, positionSeconds, completed, playedAt, rewatch, atUs }
        init(from decoder: any Decoder) throws {
            book = BookRefDTO(try BookRefDTO.Row(from: decoder))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            positionSeconds = try container.decode(Int.self, forKey: .positionSeconds)
            completed = try container.decode(Bool.self, forKey: .completed)
            playedAt = try container.decode(Date.self, forKey: .playedAt)
            rewatch = try container.decode(Bool.self, forKey: .rewatch)
            atUs = try container.decodeIfPresent(Int64.self, forKey: .atUs)
        }
    }

    func page(filter: HistoryFilter, page: PageRequest, plays: Int) async throws -> (plays: [Play], total: Int) {
        let condition = filter.condition(child: child)
        let total = filter.isEmpty ? plays : try await sql.number("SELECT count(*) AS n FROM plays p WHERE \(condition)")
        guard page.offset < total else { return ([], total) }
        let rows = try await sql.raw("""
            SELECT p.id, p.position_seconds, p.completed, p.played_at, \(BookRefDTO.columns),
                   EXISTS (SELECT 1 FROM plays q WHERE q.child_id = p.child_id AND q.book_id = p.book_id AND q.completed
                              AND (q.played_at, q.id) < (p.played_at, p.id)) AS rewatch
              FROM (SELECT p.id FROM plays p WHERE \(condition)
                     ORDER BY p.played_at DESC, p.id DESC LIMIT \(bind: page.perPage) OFFSET \(bind: page.offset)) page
              JOIN plays p ON p.id = page.id
              JOIN books b ON b.id = p.book_id LEFT JOIN video_assets v ON v.book_id = b.id
             ORDER BY p.played_at DESC, p.id DESC
            """).all(decoding: Play.self, keyDecodingStrategy: .convertFromSnakeCase)
        return (rows, total)
    }

    /// The latest play of each book in the library: one index probe per entry.
    private var latest: SQLQueryString {
        """
        SELECT le.book_id, l.position_seconds, l.completed, l.played_at
          FROM library_entries le
          CROSS JOIN LATERAL (SELECT position_seconds, completed, played_at FROM plays
                               WHERE child_id = le.child_id AND book_id = le.book_id ORDER BY played_at DESC, id DESC LIMIT 1) l
         WHERE le.child_id = \(bind: child)
        """
    }

    /// How many books are started and not completed, and when one of them next enters or leaves the catalog.
    func continueCount(at now: Date) async throws -> BookSQL.LiveCount {
        try await sql.raw("""
            SELECT count(*) FILTER (WHERE \(BookSQL.live("b", at: now))) AS n, min(\(BookSQL.nextLiveChange("b", at: now))) AS next_live_change
              FROM (\(latest)) l JOIN books b ON b.id = l.book_id WHERE NOT l.completed AND b.status = 'active'
            """).first(decoding: BookSQL.LiveCount.self, keyDecodingStrategy: .convertFromSnakeCase) ?? .init(n: 0, nextLiveChange: nil)
    }

    /// A continued book's latest play, beside its book (`BookDTO(row:)`) in a `continuePage` row.
    struct Continued: Decodable { let lastPosition: Int; let lastPlayed: Date; let progress: Double? }

    static func continued(_ row: any SQLRow) throws -> Continued {
        try row.decode(model: Continued.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// A page of them, most recently played first (rows with the book, `last_position`,
    /// `last_played`, `progress` and `next_rights_change`).
    func continuePage(_ page: PageRequest, country: String, at now: Date) async throws -> [any SQLRow] {
        try await sql.raw("""
            SELECT \(BookDTO.columns(country: country, at: now)), l.position_seconds AS last_position, l.played_at AS last_played,
                   \(BookSQL.progress(position: "l.position_seconds", completed: "l.completed")) AS progress,
                   \(BookSQL.nextRightsChange("b", at: now)) AS next_rights_change
              FROM (\(latest)) l JOIN books b ON b.id = l.book_id \(BookDTO.joins)
             WHERE NOT l.completed AND \(BookSQL.live("b", at: now))
             ORDER BY l.played_at DESC, b.id DESC
             LIMIT \(bind: page.perPage) OFFSET \(bind: page.offset)
            """).all()
    }

    struct Removed: Decodable { let bookId: Int }

    /// Unmarks one play; false when the child has no such play. Run in a transaction.
    func removePlay(_ id: Int) async throws -> Bool {
        guard let book = try await sql.raw("DELETE FROM plays WHERE id = \(bind: id) AND child_id = \(bind: child) RETURNING book_id")
            .first(decoding: Removed.self, keyDecodingStrategy: .convertFromSnakeCase)?.bookId else { return false }
        try await recomputeLastPlayed(book: book)
        return true
    }

    /// Removes all of one book's plays. Run in a transaction.
    func removePlays(book: Int) async throws {
        try await sql.raw("DELETE FROM plays WHERE child_id = \(bind: child) AND book_id = \(bind: book)").run()
        try await recomputeLastPlayed(book: book)
    }

    /// The library entry's last_played_at becomes the latest play left (or null).
    private func recomputeLastPlayed(book: Int) async throws {
        try await sql.raw("""
            UPDATE library_entries SET last_played_at = (SELECT max(played_at) FROM plays WHERE child_id = \(bind: child) AND book_id = \(bind: book))
             WHERE child_id = \(bind: child) AND book_id = \(bind: book)
            """).run()
    }
}
