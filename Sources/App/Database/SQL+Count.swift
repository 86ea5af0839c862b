import SQLKit
import Vapor

extension SQLDatabase {
    /// `SELECT count(*) FROM table WHERE column = value`.
    func count(from table: String, where column: String, is value: some Encodable & Sendable) async throws -> Int {
        try await select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from(table)
            .where(SQLIdentifier(column), .equal, SQLBind(value)).first(decoding: NumberRow.self)?.n ?? 0
    }

    /// The number `n` of a query that returns one row (`SELECT count(*) AS n …`).
    func number(_ query: SQLQueryString) async throws -> Int {
        try await raw(query).first(decoding: NumberRow.self)?.n ?? 0
    }
}

/// The row of `count` and `number`: one number, `n`.
private struct NumberRow: Decodable { let n: Int }

extension SQLQueryFetcher {
    /// The one row a statement always returns (an `INSERT … RETURNING`, an aggregate): its absence
    /// is a bug, thrown as an error (a 500 logged), never a crash of the instance.
    func one() async throws -> any SQLRow {
        guard let row = try await first() else { throw Abort(.internalServerError, reason: "a statement returned no row") }
        return row
    }

    /// `one()`, decoded as `D`.
    func one<D: Decodable>(decoding type: D.Type, keyDecodingStrategy: SQLRowDecoder.KeyDecodingStrategy = .useDefaultKeys) async throws -> D {
        try await one().decode(model: D.self, keyDecodingStrategy: keyDecodingStrategy)
    }
}
