import PostgresNIO

/// A database constraint the user's input broke, named so callers can turn it into a field error.
struct ConstraintViolation: Error, Sendable {
    enum Kind: Sendable { case unique, foreignKey, check, notNull }
    let kind: Kind
    let constraint: String

    /// The violation inside `error`, when it is one (SQLSTATE class 23).
    init?(_ error: any Error) {
        guard let error = error as? PSQLError, error.code == .server,
              let state = error.serverInfo?[.sqlState] else { return nil }
        switch state {
        case "23505": kind = .unique
        case "23503": kind = .foreignKey
        case "23514": kind = .check
        case "23502": kind = .notNull
        default: return nil
        }
        constraint = error.serverInfo?[.constraintName] ?? error.serverInfo?[.columnName] ?? "unknown"
    }
}
