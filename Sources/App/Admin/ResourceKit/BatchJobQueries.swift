import SQLKit

/// The statements of a batch job ("everything matching this filter"): the dry-run count, the job's
/// row in `batch_jobs` (created, moved on after each chunk, finished or failed), the next chunk of
/// matching ids, and the job as its page shows it.
enum BatchJobQueries {
    /// The exact number of records the filter matches now.
    static func count(_ request: ListRequest, store: ResourceStore) async throws -> Int {
        try await store.sql.number("SELECT count(*) AS n FROM (\(store.matching(request).column(ResourceStore.id).select)) x")
    }

    /// Records a running job; its id.
    static func insert(staff: StaffUser, resource: String, action: String, label: String, target: String?, filter: String, total: Int,
                       on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            INSERT INTO batch_jobs (staff_user_id, staff_email, resource, action, action_label, target, filter, total)
            VALUES (\(bind: staff.id), \(bind: staff.email), \(bind: resource), \(bind: action), \(bind: label),
                    \(bind: target), \(bind: filter), \(bind: total)) RETURNING id
            """).first(decoding: ResourceRows.ID.self)!.id
    }

    /// The ids of the next `limit` matching records after `lastID`, in id order.
    static func chunk(_ request: ListRequest, store: ResourceStore, after lastID: Int, limit: Int) async throws -> [Int] {
        try await store.matching(request).column(ResourceStore.id).where(ResourceStore.id, .greaterThan, SQLBind(lastID))
            .orderBy(ResourceStore.id).limit(limit).all(decoding: ResourceRows.ID.self).map(\.id)
    }

    static func progress(job: Int, processed: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE batch_jobs SET processed = \(bind: processed), updated_at = now() WHERE id = \(bind: job)").run()
    }

    static func finish(job: Int, processed: Int, summary: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE batch_jobs SET status = 'done', processed = \(bind: processed), message = \(bind: summary), updated_at = now() WHERE id = \(bind: job)
            """).run()
    }

    static func fail(job: Int, message: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE batch_jobs SET status = 'failed', message = \(bind: message), updated_at = now()
             WHERE id = \(bind: job)
            """).run()
    }

    /// A job as its page shows it.
    struct Job: Decodable {
        let resource: String
        let actionLabel: String
        let filter: String
        let total: Int
        let processed: Int
        let status: String
        let message: String?
        let staffUserId: Int?
        let staffEmail: String
        /// Running with no progress for `stalledAfter` seconds.
        let stalled: Bool
    }

    static func job(_ id: Int, stalledAfter: Double, on sql: any SQLDatabase) async throws -> Job? {
        try await sql.raw("""
            SELECT resource, action_label, filter, total, processed, status, message, staff_user_id, staff_email,
                   now() - updated_at > make_interval(secs => \(bind: stalledAfter)) AS stalled
              FROM batch_jobs WHERE id = \(bind: id)
            """).first(decoding: Job.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
