@testable import App
import Foundation
import SQLKit
import Vapor

/// Small fixture builders that write straight to the test's database.
extension Application {
    @discardableResult
    func makePublisher(_ name: String = "Publisher \(UUID().uuidString.prefix(8))") async throws -> Int {
        try await sql.raw("INSERT INTO publishers (name) VALUES (\(bind: name)) RETURNING id").first()!.decode(column: "id", as: Int.self)
    }

    @discardableResult
    func makeCategory(_ name: String, slug: String, order: Int = 0, icon: String? = nil) async throws -> Int {
        try await sql.raw("""
            INSERT INTO categories (name, slug, display_order, icon_name) VALUES (\(bind: name), \(bind: slug), \(bind: order), \(bind: icon)) RETURNING id
            """).first()!.decode(column: "id", as: Int.self)
    }

    enum Rights { case active, none, upcoming, expired }

    /// A book with, by default, a ready video and rights available now.
    @discardableResult
    func makeBook(_ title: String, author: String = "Ann Author", description: String = "", status: String = "active",
                  ages: ClosedRange<Int> = 3...6, publisher: Int? = nil, categories: [Int] = [],
                  video: String? = "ready", duration: Int? = 300, captions: Bool = true,
                  rights: Rights = .active, createdAt: Date? = nil) async throws -> Int {
        let id = try await sql.raw("""
            INSERT INTO books (title, author, description, age_min, age_max, publisher_id, status, created_at)
            VALUES (\(bind: title), \(bind: author), \(bind: description), \(bind: ages.lowerBound), \(bind: ages.upperBound),
                    \(bind: publisher), \(bind: status), COALESCE(\(bind: createdAt)::timestamptz, now()))
            RETURNING id
            """).first()!.decode(column: "id", as: Int.self)
        for category in categories {
            try await sql.raw("INSERT INTO book_categories (book_id, category_id) VALUES (\(bind: id), \(bind: category))").run()
        }
        if let video {
            try await sql.raw("""
                INSERT INTO video_assets (book_id, status, duration_seconds, has_captions)
                VALUES (\(bind: id), \(bind: video), \(bind: duration), \(bind: captions))
                """).run()
        }
        let window: SQLQueryString?
        switch rights {
        case .active: window = "now() - interval '1 day', NULL"
        case .upcoming: window = "now() + interval '1 day', now() + interval '30 days'"
        case .expired: window = "now() - interval '30 days', now() - interval '1 day'"
        case .none: window = nil
        }
        if let window {
            try await sql.raw("INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES (\(bind: id), \(window))").run()
        }
        return id
    }

    struct ParentFixture { let id: Int; let children: [Int]; let token: String }

    /// A parent with children, signed in through the API.
    func makeParent(email: String = "parent-\(UUID().uuidString.prefix(8))@example.com", password: String = "correct horse battery",
                    children: [String] = ["Ada"], country: String? = nil) async throws -> ParentFixture {
        let hash = try password.hashedForTests()
        let id = try await Accounts.createParent(email: email, passwordHash: hash, children: children, country: country, on: sql)
        let childIDs = try await sql.raw("SELECT id FROM children WHERE added_by = \(bind: id) ORDER BY id").all()
            .map { try $0.decode(column: "id", as: Int.self) }
        let response = try await send(.POST, "/api/v1/auth/token", json: #"{"email":"\#(email)","password":"\#(password)"}"#)
        guard response.status == .ok, let token = try response.json["access_token"] as? String else {
            throw TestFailure("sign-in failed: \(response.status) \(response.body.string)")
        }
        return ParentFixture(id: id, children: childIDs, token: token)
    }

    /// Stops the app's clock at the current whole second and returns that instant: what the server
    /// works out from its clock (a grant's expiry, a Retry-After) is then exact, however long the
    /// requests take on a loaded machine. Move it with `appServices.clock.advance(by:)`.
    @discardableResult
    func freezeClock() -> Date {
        let instant = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        appServices.clock.set(to: instant)
        return instant
    }
}

extension String {
    func hashedForTests() throws -> String { try Bcrypt.hash(self, cost: 4) }
}
