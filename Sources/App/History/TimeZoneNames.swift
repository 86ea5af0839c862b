import Core
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// The IANA time-zone names PostgreSQL knows (read once; `pg_timezone_names` reads the zone files
/// on every query), so a `tz` parameter is checked before it reaches a statement.
final class TimeZoneNames: Sendable {
    private let names = NIOLockedValueBox<Set<String>?>(nil)
    struct Zone: Decodable { let name: String }

    func contains(_ name: String, on sql: any SQLDatabase) async throws -> Bool {
        if let known = names.withLockedValue({ $0 }) { return known.contains(name) }
        let rows = try await sql.raw("SELECT name FROM pg_timezone_names").all(decoding: Zone.self)
        let known = Set(rows.map(\.name))
        names.withLockedValue { $0 = known }
        return known.contains(name)
    }

    /// A zone a family may live in: PostgreSQL and Foundation both know it (days are cut in SQL
    /// for statistics and in Swift for bedtimes and budgets).
    func isFamilyZone(_ name: String, on sql: any SQLDatabase) async throws -> Bool {
        guard name.utf8.count <= 64, FamilyClock(timeZone: name) != nil else { return false }
        return try await contains(name, on: sql)
    }
}


extension Request {
    /// The `tz` query parameter (an IANA name PostgreSQL knows), UTC when absent.
    func timeZone(_ query: QueryParameters) async throws -> String {
        guard let name = try query.value("tz") else { return "UTC" }
        guard name.utf8.count <= 64, try await application.appServices.timeZoneNames.contains(name, on: sql) else {
            throw Problem.invalidParameter("tz", "tz must be an IANA time zone name such as Europe/Paris")
        }
        return name
    }
}
