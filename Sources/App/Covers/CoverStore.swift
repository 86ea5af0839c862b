import Foundation
import NIOCore
import SQLKit

/// Where cover files live, so that every instance serves them. One small protocol: PostgreSQL
/// (`PostgresCoverStore`, the default — backed up with the catalog, nothing else to run) today;
/// an S3-compatible bucket would implement the same two calls.
protocol CoverStore: Sendable {
    /// Keeps a file under its hash (storing one already kept is a no-op).
    func put(_ file: CoverProcessor.Rendition, on sql: any SQLDatabase) async throws
    /// A kept file's type and bytes.
    func get(hash: String, on sql: any SQLDatabase) async throws -> (contentType: String, bytes: Data)?
    /// Whether a file is kept under `hash` (its bytes not read).
    func contains(hash: String, on sql: any SQLDatabase) async throws -> Bool
}

struct PostgresCoverStore: CoverStore {
    func put(_ file: CoverProcessor.Rendition, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO cover_files (hash, content_type, width, height, bytes)
            VALUES (\(bind: file.hash), \(bind: file.contentType), \(bind: file.width), \(bind: file.height), \(bind: ByteBuffer(data: file.bytes)))
            ON CONFLICT (hash) DO NOTHING
            """).run()
    }

    func contains(hash: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT 1 AS x FROM cover_files WHERE hash = \(bind: hash)").first() != nil
    }

    func get(hash: String, on sql: any SQLDatabase) async throws -> (contentType: String, bytes: Data)? {
        guard let row = try await sql.raw("SELECT content_type, bytes FROM cover_files WHERE hash = \(bind: hash)")
            .first(decoding: File.self, keyDecodingStrategy: .convertFromSnakeCase) else { return nil }
        return (row.contentType, row.bytes)
    }

    /// A row of `cover_files` as served.
    private struct File: Decodable { let contentType: String; let bytes: Data }
}

/// The `cover` object of the parent API's book: `null` without an uploaded cover.
struct CoverDTO: Codable, Sendable, Equatable {
    struct RenditionDTO: Codable, Sendable, Equatable {
        let width: Int
        let height: Int
        let type: String
        /// Relative to the service's origin: `/covers/<hash>.webp`.
        let url: String
    }
    let width: Int
    let height: Int
    let dominantColor: String
    let renditions: [RenditionDTO]

    init(_ result: CoverProcessor.Result) {
        width = result.width
        height = result.height
        dominantColor = result.dominantColor
        renditions = result.renditions.map {
            RenditionDTO(width: $0.width, height: $0.height, type: $0.contentType, url: "/covers/\($0.hash).\($0.fileExtension)")
        }
    }

    /// The bytes kept in `book_covers.api_json`, which the engine copies into its answers: the
    /// API's own encoding (snake_case, sorted keys), so SQL answers (which decode and re-encode
    /// them) are the same bytes.
    func apiJSON() throws -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
