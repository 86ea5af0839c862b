@testable import App
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOConcurrencyHelpers
import Testing
import Vapor
import VaporTesting

/// `/metrics`, request ids and the per-request log line, over a real loopback connection.
@Suite("Observability")
struct ObservabilityTests {
    /// Keeps every log line it is given (as the JSON handler would write it).
    struct CaptureHandler: LogHandler {
        let lines: NIOLockedValueBox<[String]>
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let text = JSONLogHandler.line(level: event.level, label: "test", message: event.message.description,
                                           metadata: metadata.merging(event.metadata ?? [:]) { $1 }, at: Date())
            lines.withLockedValue { $0.append(text) }
        }
    }

    /// A raw HTTP/1.1 request over loopback (so the server sees a real peer address).
    static func fetch(_ url: URL, _ path: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil) async throws -> (status: Int, headers: [String: String], body: String) {
        var request = URLRequest(url: URL(string: path, relativeTo: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        let fields = Dictionary(http.allHeaderFields.map { ("\($0.key)".lowercased(), "\($0.value)") }, uniquingKeysWith: { a, _ in a })
        return (http.statusCode, fields, String(decoding: data, as: UTF8.self))
    }

    /// The value of the sample `name{labels}` in a Prometheus text body.
    static func sample(_ body: String, _ series: String) -> Double? {
        body.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test("/metrics: loopback or a token only; Vapor's own request series through swift-metrics, sign-in failures, the engine's version and deltas")
    func metrics() async throws {
        try await StorytimeKitLiveTests.withServer { app, url in
            let parent = try await app.makeParent(password: "right password")
            let book = try await app.makeBook("Owl Moon")
            // Vapor's series live in the process's registry, which every application of this test
            // process shares: compare with a scrape taken before, and count at least what this test sent.
            let before = try await Self.fetch(url, "/metrics").body
            for _ in 0..<3 { _ = try await Self.fetch(url, "/api/v1/catalog/books?q=owl", headers: ["Authorization": "Bearer \(parent.token)"]) }
            _ = try await Self.fetch(url, "/api/v1/catalog/books/\(book)", headers: ["Authorization": "Bearer \(parent.token)"])
            _ = try await Self.fetch(url, "/no/such/page")
            _ = try await Self.fetch(url, "/api/v1/auth/token", method: "POST", headers: ["Content-Type": "application/json"],
                                     body: #"{"email": "nobody@example.com", "password": "wrong"}"#)
            let scrape = try await Self.fetch(url, "/metrics")
            #expect(scrape.status == 200 && scrape.headers["content-type"]?.hasPrefix("text/plain") == true)
            let body = scrape.body
            func grew(_ series: String, by n: Double) -> Bool {
                (Self.sample(body, series) ?? 0) >= (Self.sample(before, series) ?? 0) + n
            }
            #expect(grew(#"http_requests_total{method="GET",path="/api/v1/catalog/books",status="200"}"#, by: 3))
            #expect(grew(#"http_requests_total{method="GET",path="/api/v1/catalog/books/:id",status="200"}"#, by: 1))
            #expect(grew(#"http_requests_total{method="POST",path="/api/v1/auth/token",status="401"}"#, by: 1))
            #expect(grew(#"http_requests_total{method="undefined",path="vapor_route_undefined",status="404"}"#, by: 1))
            #expect(grew(#"http_request_duration_seconds_count{method="GET",path="/api/v1/catalog/books",status="200"}"#, by: 3))
            // The latency histogram keeps the app's buckets (1 ms to 10 s), not the library's default.
            #expect(body.contains(#"http_request_duration_seconds_bucket{method="GET",path="/api/v1/catalog/books",status="200",le="0.001"}"#))
            // Counted once, by Vapor: the hand-made series are gone.
            #expect(!body.contains("storytime_http_requests_total") && !body.contains("storytime_http_request_duration_seconds"))
            // A second bootstrap is a no-op (`MetricsSystem.bootstrap` itself would stop the process).
            AppMetrics.bootstrapOnce()
            // The application's own series keep their names and HELP text.
            #expect(Self.sample(body, #"storytime_login_failures_total{kind="parent"}"#) == 1)
            #expect(body.contains("# HELP storytime_login_failures_total "))
            for name in ["storytime_catalog_engine_books", "storytime_catalog_cache_entries", "storytime_db_statements"] {
                #expect(Self.sample(body, name) != nil, "\(name)")
            }
            #expect(Self.sample(body, "storytime_catalog_engine_version") == Double(app.appServices.catalogEngine.currentVersion))
            #expect(Self.sample(body, #"storytime_catalog_engine_state{state="ready"}"#) == 1)
            // The pool as PostgreSQL sees it: at least the scrape's own connection, never above the limit.
            let open = (Self.sample(body, #"storytime_db_pool_connections{state="idle"}"#) ?? 0) + (Self.sample(body, #"storytime_db_pool_connections{state="busy"}"#) ?? 0)
            #expect(open >= 1 && open <= Self.sample(body, "storytime_db_pool_max_connections") ?? 0)
            let deltas = Self.sample(body, "storytime_catalog_engine_deltas_applied_total") ?? -1
            // A commit, then a request: the engine applies one delta.
            try await app.sql.raw("UPDATE books SET title = 'Owl Night' WHERE id = \(bind: book)").run()
            _ = try await Self.fetch(url, "/api/v1/catalog/books?q=owl", headers: ["Authorization": "Bearer \(parent.token)"])
            let after = try await Self.fetch(url, "/metrics").body
            #expect(Self.sample(after, "storytime_catalog_engine_deltas_applied_total") == deltas + 1)
            // Once the change is carried, a search is computed once and kept: asked again, it is counted kept.
            await app.appServices.catalogEngine.carried()
            #expect(Self.sample(after, "storytime_catalog_engine_carries") != nil && Self.sample(after, "storytime_catalog_engine_carry_seconds") != nil)
            _ = try await Self.fetch(url, "/api/v1/catalog/books?q=night", headers: ["Authorization": "Bearer \(parent.token)"])
            let once = try await Self.fetch(url, "/metrics").body
            let computed = Self.sample(once, #"storytime_catalog_engine_answers{source="computed"}"#) ?? -1
            let kept = Self.sample(once, #"storytime_catalog_engine_answers{source="kept"}"#) ?? -1
            #expect(computed >= 1)
            _ = try await Self.fetch(url, "/api/v1/catalog/books?q=night", headers: ["Authorization": "Bearer \(parent.token)"])
            let again = try await Self.fetch(url, "/metrics").body
            #expect(Self.sample(again, #"storytime_catalog_engine_answers{source="kept"}"#) == kept + 1)
            #expect(Self.sample(again, #"storytime_catalog_engine_answers{source="computed"}"#) == computed)
            // Through a proxy (a forwarded request) loopback is not enough; a token opens it.
            #expect(try await Self.fetch(url, "/metrics", headers: ["X-Forwarded-For": "203.0.113.9"]).status == 404)
            app.settings.metricsToken = "a-metrics-token-that-is-long-enough-0123"
            #expect(try await Self.fetch(url, "/metrics", headers: ["X-Forwarded-For": "203.0.113.9", "Authorization": "Bearer a-metrics-token-that-is-long-enough-0123"]).status == 200)
            #expect(try await Self.fetch(url, "/metrics", headers: ["Authorization": "Bearer a-metrics-token-that-is-long-enough-0124"]).status == 404)
        }
        // In-process requests have no peer address: not loopback, so 404 without the token.
        try await withApp { app in
            let response = try await app.get("/metrics")
            #expect(response.status == .notFound)
        }
    }

    @Test("request ids are echoed (a caller's plain id kept, a hostile one replaced); one log line per request without passwords, tokens or cookies")
    func requestIDsAndLogs() async throws {
        try await StorytimeKitLiveTests.withServer { app, url in
            let lines = NIOLockedValueBox<[String]>([])
            app.logger = Logger(label: "test") { _ in CaptureHandler(lines: lines) }
            let password = "very secret password 42"
            let parent = try await app.makeParent(password: password)
            let child = parent.children[0]
            let plain = try await Self.fetch(url, "/api/v1/children", headers: ["Authorization": "Bearer \(parent.token)", "X-Request-Id": "trace-abc.123_x"])
            #expect(plain.status == 200 && plain.headers["x-request-id"] == "trace-abc.123_x")
            let hostile = try await Self.fetch(url, "/api/v1/children", headers: ["Authorization": "Bearer \(parent.token)", "X-Request-Id": "evil id\" with {json}"])
            #expect(hostile.headers["x-request-id"].map { UUID(uuidString: $0) != nil } == true)
            let fresh = try await Self.fetch(url, "/healthz")
            #expect(fresh.headers["x-request-id"].map { UUID(uuidString: $0) != nil } == true)
            // Secrets in every place a request carries them.
            let signIn = try await Self.fetch(url, "/api/v1/auth/token", method: "POST", headers: ["Content-Type": "application/json"],
                                              body: #"{"email": "someone@example.com", "password": "\#(password)"}"#)
            #expect(signIn.status == 401)
            _ = try await Self.fetch(url, "/api/v1/children/\(child)/library?token=\(parent.token)", headers: ["Authorization": "Bearer \(parent.token)",
                                                                                                               "Cookie": "vapor-session=cookie-secret-value-99"])
            let console = try await Self.fetch(url, "/admin/login", method: "POST", headers: ["Content-Type": "application/x-www-form-urlencoded",
                                                                                              "Cookie": "vapor-session=cookie-secret-value-99"],
                                               body: "email=staff%40example.com&password=\(password.replacingOccurrences(of: " ", with: "+"))")
            #expect(console.status >= 400)
            let logged = lines.withLockedValue { $0 }
            let requests = logged.filter { $0.contains(#""message":"request""#) }
            #expect(requests.count >= 6)
            #expect(requests.contains { $0.contains(#""request-id":"trace-abc.123_x""#) && $0.contains(#""route":"/api/v1/children""#) && $0.contains(#""status":"200""#) && $0.contains("duration_ms") })
            for line in logged {
                #expect(!line.contains(password) && !line.contains(parent.token) && !line.contains("cookie-secret-value-99") && !line.contains("very+secret"), "\(line)")
            }
            // Every captured line is one JSON object.
            for line in logged { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)") }
        }
    }
}
