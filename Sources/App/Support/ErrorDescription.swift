import Foundation
import PostgresNIO
import Vapor

enum ErrorDescription {
    /// A one-line, human description of an error, for the command line and logs.
    /// PostgresNIO redacts its errors' `description`, so we dig out what an operator needs.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            switch error.code {
            case .connectionError, .unexpectedBackendMessage, .uncleanShutdown, .serverClosedConnection:
                let underlying = error.underlying.map { " (\($0))" } ?? ""
                return "cannot reach the database\(underlying); is PostgreSQL running and DATABASE_URL right?"
            case .server:
                let message = error.serverInfo?[.message] ?? "unknown server error"
                let detail = error.serverInfo?[.detail].map { " — \($0)" } ?? ""
                return "database error: \(message)\(detail)"
            default:
                return "database error: \(String(reflecting: error))"
            }
        }
        if let error = error as? any AbortError { return error.reason }
        if let error = error as? any LocalizedError, let text = error.errorDescription { return text }
        return String(describing: error)
    }
}
