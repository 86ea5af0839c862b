import SQLKit
import Vapor

/// The statement of the "searches that found nothing" report (`SearchMissesController`).
enum SearchMissesQueries {
    struct Miss: Decodable, Sendable { let query: String; let cause: String; let searches: Int; let families: Int; let countries: String }

    /// The queries that found nothing over the last `weeks` weeks, per cause, that at least
    /// `minFamilies` families ran; most searched first, at most 500.
    static func misses(weeks: Int, minFamilies: Int, on sql: any SQLDatabase) async throws -> [Miss] {
        try await sql.raw("""
            WITH recent AS (
                SELECT query, cause, sum(searches)::bigint AS searches, string_agg(DISTINCT NULLIF(country, ''), ' ' ORDER BY NULLIF(country, '')) AS countries
                  FROM search_misses WHERE week > current_date - \(bind: weeks * 7)::int GROUP BY query, cause
            ), families AS (
                SELECT query, count(DISTINCT family) AS n FROM search_miss_families
                 WHERE week > current_date - \(bind: weeks * 7)::int GROUP BY query
            )
            SELECT r.query, r.cause, r.searches, f.n AS families, COALESCE(r.countries, '') AS countries
              FROM recent r JOIN families f ON f.query = r.query
             WHERE f.n >= \(bind: minFamilies)
             ORDER BY r.searches DESC, r.query LIMIT 500
            """).all(decoding: Miss.self)
    }
}
