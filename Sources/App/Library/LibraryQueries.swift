import Core
import Foundation
import SQLKit
import Vapor

/// The SQL of one child's library: its pages, adding and removing a book, recording a play.
/// Every statement names the child's parent too, so a statement can never reach another family.
struct LibraryQueries {
    let sql: any SQLDatabase
    let child: Int
    let parent: Int
    /// The request's instant (the app's clock): what is live, rights, a play's time.
    let now: Date

    /// "Watch it before it goes": the filter keeping only books whose rights (in `country`) end
    /// within `days` days; nothing when nil.
    private func leaving(within days: Int?, country: String) -> SQLQueryString {
        guard let days else { return "" }
        return " AND \(BookSQL.rightsEndsAt("b", in: country, at: now)) <= \(at: now) + make_interval(days => \(bind: days)::int)"
    }

    /// How many entries a page's filter keeps, and when a scheduled book of the library next
    /// enters or leaves the catalog.
    func count(leavingWithin days: Int?, country: String) async throws -> BookSQL.LiveCount {
        let leaving = leaving(within: days, country: country)
        return try await sql.raw("""
            SELECT count(*) FILTER (WHERE \(BookSQL.live("b", at: now))) AS n, min(\(BookSQL.nextLiveChange("b", at: now))) AS next_live_change
              FROM library_entries le JOIN books b ON b.id = le.book_id
             WHERE le.child_id = \(bind: child) AND b.status = 'active'\(leaving)
            """).first(decoding: BookSQL.LiveCount.self, keyDecodingStrategy: .convertFromSnakeCase) ?? .init(n: 0, nextLiveChange: nil)
    }

    /// One page of entries (rows `LibraryController.EntryDTO(row:)` reads, with `next_rights_change`).
    func page(_ parameters: LibraryParameters, leavingWithin days: Int?, country: String) async throws -> [any SQLRow] {
        let leaving = leaving(within: days, country: country)
        let order: SQLFragment
        switch parameters.sort {
        case .recentlyAdded: order = "le.added_at DESC, b.id DESC"
        case .title: order = "lower(b.title) ASC, b.id ASC"
        case .recentlyWatched: order = "le.last_played_at DESC NULLS LAST, le.added_at DESC, b.id DESC"
        }
        return try await sql.raw("""
            SELECT \(Self.entryColumns(country: country, at: now)), \(BookSQL.nextRightsChange("b", at: now)) AS next_rights_change
              FROM library_entries le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
             WHERE le.child_id = \(bind: child) AND \(BookSQL.live("b", at: now))\(leaving)
             ORDER BY \(order)
             LIMIT \(bind: parameters.page.perPage) OFFSET \(bind: parameters.page.offset)
            """).all()
    }

    /// What decides an add, in one statement: nil when the child is not the parent's.
    struct AddCheck: Decodable { let duplicate: Bool; let found: Bool; let rights: Bool; let country: String?; let blocked: Bool }

    func addCheck(book: Int, defaultCountry: String) async throws -> AddCheck? {
        let countryOf: SQLQueryString = "COALESCE(p.country, \(bind: defaultCountry))"
        return try await sql.raw("""
            SELECT EXISTS (SELECT 1 FROM library_entries WHERE child_id = c.id AND book_id = \(bind: book)) AS duplicate,
                   b.id IS NOT NULL AS found,
                   \(BookSQL.rightsAvailable("b", country: countryOf, at: now)) AS rights, p.country,
                   b.id IS NOT NULL AND storytime_blocked_for_child(c.id, b.id) AS blocked
              FROM children c \(FamilyRole.organizer(ofChild: "c", as: "p"))
              LEFT JOIN books b ON b.id = \(bind: book) AND \(BookSQL.live("b", at: now)) AND \(BookSQL.visible("b", country: countryOf))
             WHERE c.id = \(bind: child) AND c.family_id = \(FamilyRole.family(of: parent))
            """).first(decoding: AddCheck.self)
    }

    /// The new entry, or nil when a concurrent add won (the unique key decides).
    func insert(book: Int, country: String) async throws -> LibraryController.EntryDTO? {
        try await sql.raw("""
            WITH added AS (
                INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: book))
                ON CONFLICT (child_id, book_id) DO NOTHING RETURNING child_id, book_id, added_at, last_played_at
            )
            SELECT \(Self.entryColumns(country: country, at: now))
              FROM added le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
            """).first().map(LibraryController.EntryDTO.init(row:))
    }

    /// False when the book was not in the library.
    func remove(book: Int) async throws -> Bool {
        try await sql.raw("""
            DELETE FROM library_entries le USING children c
             WHERE le.child_id = c.id AND c.id = \(bind: child) AND c.family_id = \(FamilyRole.family(of: parent))
               AND le.book_id = \(bind: book)
            RETURNING le.id
            """).first() != nil
    }

    /// A play as stored.
    struct Play: Content { let bookId: Int; let positionSeconds: Int; let completed: Bool; let playedAt: Date }

    /// Stores a play and moves the entry's `last_played_at`; nil when the book is not in the
    /// library or not live. A backdated play keeps its moment; a future one is now.
    func recordPlay(book: Int, position: Int, completed: Bool, playedAt: Date?) async throws -> Play? {
        try await sql.raw("""
            WITH entry AS (
                UPDATE library_entries le SET last_played_at = GREATEST(le.last_played_at, LEAST(COALESCE(\(bind: playedAt), \(at: now)), \(at: now)))
                  FROM children c, books b
                 WHERE le.child_id = c.id AND c.id = \(bind: child) AND c.family_id = \(FamilyRole.family(of: parent))
                   AND le.book_id = \(bind: book) AND b.id = le.book_id AND \(BookSQL.live("b", at: now))
                RETURNING le.child_id, le.book_id
            )
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
            SELECT child_id, book_id, \(bind: position), \(bind: completed), LEAST(COALESCE(\(bind: playedAt), \(at: now)), \(at: now)) FROM entry
            RETURNING book_id, position_seconds, completed, played_at
            """).first(decoding: Play.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}

extension LibraryQueries {
    /// What `LibraryController.EntryDTO(row:)` reads, for `library_entries le` joined to `books b`
    /// and its joins; rights (and `playable`, as a playback grant judges it) as they are in `country` at `now`.
    static func entryColumns(country: String?, at now: Date) -> SQLQueryString {
        """
        \(BookDTO.columns(country: country, at: now)), le.added_at, le.last_played_at,
        (SELECT count(*) FROM plays q WHERE q.child_id = le.child_id AND q.book_id = le.book_id AND q.completed) AS completed_count,
        (SELECT \(BookSQL.progress(position: "q.position_seconds", completed: "q.completed")) FROM plays q
          WHERE q.child_id = le.child_id AND q.book_id = le.book_id ORDER BY q.played_at DESC, q.id DESC LIMIT 1) AS progress,
        \(BookSQL.rightsEndsAt("b", in: country, at: now)) AS rights_ends_at, \(PlaybackQueries.playabilityColumns(country: country, at: now))
        """
    }

    /// The entry's own columns of a row of `entryColumns` (the book's are `BookDTO(row:)`'s).
    struct EntryRow: Decodable {
        let addedAt: Date
        let lastPlayedAt: Date?
        let progress: Double?
        let completedCount: Int
        let rightsEndsAt: Date?
    }

    /// The entry of `book` in `child`'s library, as the API shows it.
    static func entry(child: Int, book: Int, country: String?, at now: Date, on sql: any SQLDatabase) async throws -> LibraryController.EntryDTO? {
        try await sql.raw("""
            SELECT \(entryColumns(country: country, at: now)) FROM library_entries le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
             WHERE le.child_id = \(bind: child) AND le.book_id = \(bind: book)
            """).first().map(LibraryController.EntryDTO.init(row:))
    }
}
