import FluentKit
import SQLKit
import Vapor

extension DatabaseID {
    /// The read replica (`DATABASE_READ_URL`), when there is one.
    static let psqlRead = DatabaseID(string: "psql_read")
}

extension Request {
    /// Where this request reads the parent catalog's rows: the read replica when it has replayed
    /// `version` — the catalog version the request read from the primary — else the primary. So
    /// a commit is in the very next answer whatever the replica's lag: a lagging replica is only
    /// skipped, never read. One small statement on the replica (`catalog_state`) decides.
    func catalogSQL(atLeast version: Int) async -> any SQLDatabase {
        guard application.settings.databaseReadURL != nil else { return sql }
        let replica = db(.psqlRead).sql(counting: application.appServices.queryCounter)
        do {
            let replayed = try await replica.raw("SELECT version FROM catalog_state").first(decoding: CatalogEngine.VersionRow.self)?.version ?? -1
            if replayed >= version {
                application.appServices.metrics.catalogRead(from: "replica")
                return replica
            }
        } catch {
            logger.warning("read replica unavailable; reading the primary", metadata: ["error": .string(String(describing: error))])
        }
        application.appServices.metrics.catalogRead(from: "primary")
        return sql
    }
}
