import Core
import PostgresNIO
import Vapor

/// Applies the numbered SQL files of `migrations/` in order, each in its own transaction,
/// recording what ran in `schema_migrations`. An advisory lock serialises instances that start
/// together: the second waits, then finds nothing left to do.
struct Migrator {
    struct File: Equatable {
        let version: String
        let name: String
        let sql: String
        var checksum: String { SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined() }
    }

    enum Failure: Error, LocalizedError, Equatable {
        case badFileName(String)
        case duplicateVersion(String)
        case edited(String)
        case noDirectory(String)
        var errorDescription: String? {
            switch self {
            case .badFileName(let name): return "migration file \(name) must be named NNNN_description.sql"
            case .duplicateVersion(let version): return "two migration files share version \(version)"
            case .edited(let version): return "migration \(version) was edited after it was applied; add a new file instead"
            case .noDirectory(let path): return "no migrations folder at \(path) (run from the checkout)"
            }
        }
    }

    static let lockKey: Int64 = 0x5354_4f52_5954_494d // "STORYTIM"
    let directory: String

    func files() throws -> [File] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw Failure.noDirectory(directory)
        }
        var files: [File] = []
        for name in names.sorted() where name.hasSuffix(".sql") {
            let stem = name.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"),
                  !stem[..<underscore].isEmpty, stem[..<underscore].allSatisfy(\.isNumber) else {
                throw Failure.badFileName(name)
            }
            let version = String(stem[..<underscore])
            guard !files.contains(where: { $0.version == version }) else { throw Failure.duplicateVersion(version) }
            let sql = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            files.append(File(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        return files.sorted { Int($0.version)! < Int($1.version)! }
    }

    /// Applies what is pending; returns the versions applied now (empty when up to date).
    @discardableResult
    func migrate(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        let files = try files()
        _ = try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
        do {
            let applied = try await run(files, on: connection, logger: logger)
            _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
            return applied
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
            throw error
        }
    }

    private func run(_ files: [File], on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        _ = try await connection.query("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version     text PRIMARY KEY,
                name        text NOT NULL,
                checksum    text NOT NULL,
                applied_at  timestamptz NOT NULL DEFAULT now()
            )
            """, logger: logger)
        var done: [String: String] = [:]
        for try await (version, checksum) in try await connection.query(
            "SELECT version, checksum FROM schema_migrations", logger: logger
        ).decode((String, String).self) {
            done[version] = checksum
        }
        var applied: [String] = []
        for file in files {
            if let checksum = done[file.version] {
                guard checksum == file.checksum else { throw Failure.edited(file.version) }
                continue
            }
            _ = try await connection.query("BEGIN", logger: logger)
            do {
                for statement in SQLScript.statements(in: file.sql) {
                    _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                _ = try await connection.query("""
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(file.version), \(file.name), \(file.checksum))
                    """, logger: logger)
                _ = try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            logger.info("applied migration \(file.version)_\(file.name)")
            applied.append(file.version)
        }
        return applied
    }
}
