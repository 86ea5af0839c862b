import SQLKit

/// The metrics' statement: this instance's database connections as PostgreSQL sees them.
enum MetricsQueries {
    /// This instance's connections by state (nil counts when there are none to count).
    struct Pool: Decodable { let busy: Int?; let idle: Int? }

    /// The connections of `applicationName` in `pg_stat_activity`, busy and idle (the one asking
    /// counts as idle).
    static func pool(applicationName: String, on sql: any SQLDatabase) async throws -> Pool? {
        try await sql.raw("""
            SELECT count(*) FILTER (WHERE state = 'active' AND pid <> pg_backend_pid()) AS busy,
                   count(*) FILTER (WHERE state <> 'active' OR pid = pg_backend_pid()) AS idle
              FROM pg_stat_activity WHERE application_name = \(bind: applicationName)
            """).first(decoding: Pool.self)
    }
}
