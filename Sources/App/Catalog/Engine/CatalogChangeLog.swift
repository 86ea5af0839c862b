import Foundation
import SQLKit

/// Retention of `catalog_changes`, the log the triggers write and instances catch up from.
///
/// Entries older than `retention` are deleted and `catalog_state.purged_through` records the
/// newest version deleted, so an instance that has not caught up since then (stopped, or cut off
/// from the database for that long) rebuilds instead of missing changes. Any instance may run it,
/// at any time; concurrent runs delete disjoint rows and only ever raise `purged_through`.
enum CatalogChangeLog {
    static let retention: TimeInterval = 24 * 3600
    /// How often each instance purges.
    static let interval: Duration = .seconds(600)

    /// Deletes the entries older than `retention` before `now` (the database's clock by
    /// default); returns how many rows went.
    @discardableResult
    static func purge(on sql: any SQLDatabase, olderThan age: TimeInterval = retention) async throws -> Int {
        let row = try await sql.raw("""
            WITH gone AS (
                DELETE FROM catalog_changes WHERE created_at < now() - make_interval(secs => \(bind: age)) RETURNING version
            ), newest AS (SELECT max(version) AS v, count(*) AS n FROM gone),
            marked AS (
                UPDATE catalog_state SET purged_through = GREATEST(purged_through, newest.v)
                  FROM newest WHERE newest.v IS NOT NULL RETURNING 1
            )
            SELECT n FROM newest
            """).first(decoding: Purged.self)
        return row?.n ?? 0
    }

    /// The purge's one row: how many entries went.
    private struct Purged: Decodable { let n: Int }
}
