import SQLKit

/// The probes' statements.
enum HealthQueries {
    struct CatalogState: Decodable { let version: Int }

    /// The catalog's current version (0 before the first).
    static func catalogVersion(on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("SELECT version FROM catalog_state").first(decoding: CatalogState.self)?.version ?? 0
    }

    /// The database answers.
    static func ping(on sql: any SQLDatabase) async throws {
        try await sql.raw("SELECT 1").run()
    }
}
