import Logging
import PostgresKit
import PostgresNIO

/// One dedicated connection, outside the pool: for commands and for the migrator, which needs
/// its advisory lock and its transactions on one session.
enum DirectConnection {
    /// Runs `body` on a new connection to `url`, closed afterwards whatever happens.
    static func open<T>(url: String, logger: Logger, connectTimeout: TimeAmount = .seconds(5),
                        _ body: (PostgresConnection) async throws -> T) async throws -> T {
        var configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        configuration.options.connectTimeout = connectTimeout
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        // Cancelled while the connection was being opened (an app stopping during a catalog engine
        // build): PostgresNIO closes it, but when the handshake ends first, `connect` still returns
        // it and the close comes after — and a query written to it then never answers (a CLI
        // command hung at exit for good, once in a few hundred runs). Such a connection is not used.
        if Task.isCancelled {
            try? await connection.close()
            throw CancellationError()
        }
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
