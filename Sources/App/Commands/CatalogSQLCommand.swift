import Core
import SQLKit
import Vapor

/// `catalog-sql 'QUERY'`: prints the statements the catalog list runs, uncached, for a query
/// string (binds inlined as literals), so `make bench` can time the app's own SQL with pgbench.
struct CatalogSQLCommand: StorytimeCommand {
    let options: Set<String> = ["query"]
    let usage = "App catalog-sql --query 'q=godnight&age=4'"
    var help: String { "Prints the SQL statements of a catalog list request (for pgbench)." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let query = QueryParameters(query: try arguments.single("query") ?? "")
        let parameters = try Self.parse(query)
        let now = context.application.now
        let text = try await context.withDatabase { sql -> String in
            let queries = CatalogQueries(sql: sql, now: now)
            if parameters.words.isEmpty {
                return [queries.countQuery(parameters, search: nil), queries.pageQuery(parameters, search: nil)]
                    .map { inline($0, in: sql) + ";" }.joined(separator: "\n")
            }
            var lexicon = TypoVocabulary()
            lexicon.insertAll(try await sql.raw("SELECT term FROM search_terms").all(decoding: Term.self).map(\.term))
            let synonyms = try await SynonymStore().current(version: -1, on: sql)
            let search = CatalogQueries.Search(expansions: parameters.words.map { SearchExpansion($0, vocabulary: lexicon, synonyms: synonyms) })
            return inline(queries.searchPageQuery(parameters, search: search), in: sql) + ";"
        }
        context.console.print(text)
    }

    /// A row of the vocabulary.
    private struct Term: Decodable { let term: String }

    private static func parse(_ query: QueryParameters) throws -> CatalogParameters {
        let result = Result { () throws(ParameterError) -> CatalogParameters in try CatalogParameters(query) }
        switch result {
        case .success(let parameters): return parameters
        case .failure(let error): throw Abort(.badRequest, reason: "\(error.field): \(error.message)")
        }
    }

    /// The statement with its binds written as SQL literals, on one line.
    private func inline(_ query: SQLQueryString, in sql: any SQLDatabase) -> String {
        let (text, binds) = sql.serialize(query)
        var result = text
        for (index, bind) in binds.enumerated().reversed() {
            let literal: String
            switch bind {
            case let value as Int: literal = String(value)
            case let value as Bool: literal = value ? "true" : "false"
            case let value as Date: literal = "'" + value.formatted(.iso8601) + "'"
            // A colon becomes \x3a: pgbench reads ":name" as its own variable (stem tokens are "~en:owl").
            case let value as String where value.contains(":"):
                literal = "E'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
                    .replacingOccurrences(of: ":", with: "\\x3a") + "'"
            case let value as String: literal = "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
            default: literal = "'" + String(describing: bind).replacingOccurrences(of: "'", with: "''") + "'"
            }
            result = result.replacingOccurrences(of: "$\(index + 1)", with: literal)
        }
        return result.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
