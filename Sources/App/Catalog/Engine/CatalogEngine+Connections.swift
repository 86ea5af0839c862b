import FluentKit
import PostgresKit
import PostgresNIO
import Vapor

/// Where a build and a change application read the database.
extension CatalogEngine {
    /// A connection of the build's own when `buildURL` names one, else one from the pool.
    func withBuildConnection<T: Sendable>(_ database: any Database, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard let buildURL else { return try await withConnection(database, body) }
        return try await DirectConnection.open(url: buildURL, logger: logger, body)
    }

    func withConnection<T: Sendable>(_ database: any Database, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard let postgres = database as? any PostgresDatabase else { throw Abort(.internalServerError, reason: "the catalog engine needs PostgreSQL") }
        return try await postgres.withConnection { connection in
            connection.eventLoop.makeFutureWithTask { try await body(connection) }
        }.get()
    }
}
