import FluentKit
import FluentPostgresDriver
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Counts the SQL statements the app sends, so tests can hold a page to a fixed number of
/// queries. One counter per application; tests read it before and after a request.
final class QueryCounter: Sendable {
    private let value = NIOLockedValueBox(0)
    func increment() { value.withLockedValue { $0 += 1 } }
    var count: Int { value.withLockedValue { $0 } }
}

/// An `SQLDatabase` that counts every statement before handing it on.
struct CountingSQLDatabase: SQLDatabase {
    let base: any SQLDatabase
    let counter: QueryCounter

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        counter.increment()
        return base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        counter.increment()
        try await base.execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.withSession { session in
            try await closure(CountingSQLDatabase(base: session, counter: counter))
        }
    }
}


extension Database {
    /// This Fluent database as SQL, counted.
    func sql(counting counter: QueryCounter) -> any SQLDatabase {
        CountingSQLDatabase(base: self as! any SQLDatabase, counter: counter)
    }
}

extension Request {
    /// The request's database as SQL (counted).
    var sql: any SQLDatabase { db.sql(counting: application.appServices.queryCounter) }

    /// Runs `work` in one transaction: everything it writes lands, or nothing does.
    func transaction<T: Sendable>(_ work: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let counter = application.appServices.queryCounter
        return try await db.transaction { db in try await work(db.sql(counting: counter)) }
    }
}
