@testable import App
import Testing
import Vapor

/// The app as a Swift Testing trait (vapor/template's `AppTrait`): `@Suite(.app)` or
/// `@Test(.app(engine: true))` gives each test a configured app on its own fresh database, torn
/// down afterwards, reached as `try app()` inside the test.
struct AppTrait: TestTrait, SuiteTrait, TestScoping {
    var engine = false
    /// Changes the test settings first.
    var adjust: @Sendable (inout Settings) -> Void = { _ in }
    var isRecursive: Bool { true }

    @TaskLocal static var current: Application?

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite's trait scopes each of its tests, not the suite as a whole.
        guard testCase != nil || !test.isSuite else { return try await function() }
        try await withApp(engine: engine, adjust: adjust) { app in
            try await AppTrait.$current.withValue(app) { try await function() }
        }
    }
}

extension Trait where Self == AppTrait {
    static var app: AppTrait { AppTrait() }
    static func app(engine: Bool) -> AppTrait { AppTrait(engine: engine) }
    static func app(adjust: @escaping @Sendable (inout Settings) -> Void) -> AppTrait { AppTrait(adjust: adjust) }
}

/// The app of the running test (see `AppTrait`).
func app() throws -> Application {
    try #require(AppTrait.current, "the test has no .app trait")
}
