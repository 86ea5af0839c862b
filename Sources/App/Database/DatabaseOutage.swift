import AsyncKit
import NIOCore
import NIOPosix
import PostgresNIO

/// Whether `error` means "the database cannot be reached right now" (down, restarting, refusing
/// connections, pool exhausted) rather than a fault of the request or of the app. Those are
/// answered 503 with a `Retry-After`; the pool opens fresh connections on later requests, so the
/// app recovers by itself when PostgreSQL is back.
enum DatabaseOutage {
    /// SQLSTATEs of a server shutting down, starting up or out of connections.
    static let unavailableStates: Set<String> = ["57P01", "57P02", "57P03", "53300", "08000", "08001", "08003", "08004", "08006"]

    static func matches(_ error: any Error) -> Bool {
        switch error {
        case let error as PSQLError:
            switch error.code {
            case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
                return true
            case .server:
                return error.serverInfo?[.sqlState].map(unavailableStates.contains) ?? false
            default:
                return false
            }
        case is ConnectionPoolTimeoutError, is NIOConnectionError, is ChannelError, is IOError:
            return true
        default:
            return false
        }
    }
}
