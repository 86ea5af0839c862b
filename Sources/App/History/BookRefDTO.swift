import SQLKit
import Vapor

/// The small book reference of history entries: id, title, cover, duration.
struct BookRefDTO: Content, Equatable {
    let id: Int
    let title: String
    @ExplicitNull var coverImageUrl: String?
    @ExplicitNull var durationSeconds: Int?

    /// For `books b` with its video asset `v` LEFT JOINed.
    static let columns: SQLQueryString = """
        b.id AS book_id, b.title, b.cover_image_url, \(BookSQL.readyDuration("v")) AS duration_seconds
        """

    /// The row of `columns` (decoded with `.convertFromSnakeCase`).
    struct Row: Decodable { let bookId: Int; let title: String; let coverImageUrl: String?; let durationSeconds: Int? }

    init(_ row: Row) {
        id = row.bookId
        title = row.title
        coverImageUrl = row.coverImageUrl
        durationSeconds = row.durationSeconds
    }
}
