import Foundation
import Logging
import Vapor

@main
enum Entrypoint {
    static func main() async {
        var env: Environment
        do { env = try Environment.detect() } catch { fail(error) }
        do {
            // JSON lines in production (LOG_FORMAT=text to read them yourself), Vapor's console format otherwise.
            let format = ProcessInfo.processInfo.environment["LOG_FORMAT"] ?? (env == .production ? "json" : "text")
            if format == "json" {
                try LoggingSystem.bootstrap(from: &env, JSONLogHandler.factory(clock: AppClock()))
            } else {
                try LoggingSystem.bootstrap(from: &env)
            }
        } catch { fail(error) }
        let app: Application
        do { app = try await Application.make(env) } catch { fail(error) }
        do {
            try await configure(app)
            try await app.execute()
            // SIGTERM: stop taking connections and finish the requests under way first. Vapor's
            // own shutdown stops the server and the database pools in no fixed order, and a
            // request answered after the pools were gone crashed the process (under load, a
            // restart was a crash and a 25-second backtrace instead of a clean stop).
            await app.server.shutdown()
            try await app.asyncShutdown()
        } catch {
            try? await app.asyncShutdown()
            fail(error)
        }
    }

    /// Every command ends a failure with one line naming the reason and a non-zero exit.
    static func fail(_ error: any Error) -> Never {
        FileHandle.standardError.write(Data("error: \(ErrorDescription.describe(error))\n".utf8))
        exit(1)
    }
}
