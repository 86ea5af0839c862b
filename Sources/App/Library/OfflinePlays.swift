import Core
import Foundation
import SQLKit
import Vapor

/// `POST /api/v1/children/:child_id/plays/batch`: plays a device recorded offline, up to 500 at
/// once, each with the client's own id (`client_id`). A play whose id this child already sent is
/// a `duplicate` (for good: the receipt outlives the play's folding into totals); the others are
/// judged one by one in `played_at` order by the single play's rules (controls, bedtime, the
/// day's minutes charged to the day they arrive) and `recorded` or `refused` with the code the
/// single play would have answered. One transaction under the child's lock: a batch sent twice
/// at once records each play once. A malformed play is a 400 naming it, and nothing is stored.
struct OfflinePlays {
    static let limit = 500

    struct Item {
        let index: Int
        let clientID: String
        let book: Int
        let position: Int
        let completed: Bool
        let playedAt: Date
    }

    struct Result: Content {
        let clientId: String
        let status: String
        let code: String?
        let play: LibraryQueries.Play?
    }

    /// A play this child sent before (`play_receipts`).
    struct Receipt: Decodable { let clientId: String }

    struct Summary: Content { let recorded: Int; let duplicates: Int; let refused: Int }
    struct Answer: Content { let data: [Result]; let meta: Summary }

    static func items(_ body: JSONBody, now: Date) throws -> [Item] {
        try body.objectList("plays", count: 1...limit).enumerated().map { index, play in
            let clientID = try play.string("client_id", maxLength: 100)
            guard !clientID.isEmpty else { throw Problem.invalidParameter(play.path + "client_id", "\(play.path)client_id must not be empty") }
            guard let playedAt = try LibraryController.playedAt(play, now: now) else {
                throw Problem.invalidParameter(play.path + "played_at", "\(play.path)played_at is required for an offline play")
            }
            return Item(index: index, clientID: clientID, book: try play.integer("book_id", in: 1...Int(Int32.max)),
                        position: try play.integer("position_seconds", in: 0...(7 * 24 * 3600)),
                        completed: try play.bool("completed"), playedAt: playedAt)
        }
    }

    @Sendable
    static func batch(req: Request) async throws -> Answer {
        let child = try req.child
        let parentID = try req.parentID
        let items = try Self.items(try JSONBody(req), now: req.now)
        let results = try await req.transaction { sql -> [Result]? in
            guard try await PlayAllowance.lockChild(child.id, parent: parentID, on: sql) else { return nil }
            let known = Set(try await sql.raw("""
                SELECT client_id FROM play_receipts WHERE child_id = \(bind: child.id) AND client_id = ANY(\(bind: items.map(\.clientID)))
                """).all(decoding: Receipt.self, keyDecodingStrategy: .convertFromSnakeCase).map(\.clientId))
            var seen = known
            var results = [Result?](repeating: nil, count: items.count)
            let library = LibraryQueries(sql: sql, child: child.id, parent: parentID, now: req.now)
            for item in items.sorted(by: { ($0.playedAt, $0.index) < ($1.playedAt, $1.index) }) {
                guard seen.insert(item.clientID).inserted else {
                    results[item.index] = Result(clientId: item.clientID, status: "duplicate", code: nil, play: nil)
                    continue
                }
                let result: Result
                do {
                    try await PlayAllowance.requireAllowed(child: child.id, controls: child.controls, book: item.book, on: sql, now: req.now)
                    if let play = try await library.recordPlay(book: item.book, position: item.position, completed: item.completed, playedAt: item.playedAt) {
                        result = Result(clientId: item.clientID, status: "recorded", code: nil, play: play)
                    } else {
                        result = Result(clientId: item.clientID, status: "refused", code: "not_found", play: nil)
                    }
                } catch let problem as Problem {
                    result = Result(clientId: item.clientID, status: "refused", code: problem.code, play: nil)
                }
                try await sql.raw("""
                    INSERT INTO play_receipts (child_id, client_id, result) VALUES (\(bind: child.id), \(bind: item.clientID), \(bind: result.code ?? result.status))
                    """).run()
                results[item.index] = result
            }
            return results.compactMap { $0 }
        }
        guard let results else { throw Problem.notFound("No such child.") }
        return Answer(data: results, meta: Summary(recorded: results.filter { $0.status == "recorded" }.count,
                                                   duplicates: results.filter { $0.status == "duplicate" }.count,
                                                   refused: results.filter { $0.status == "refused" }.count))
    }
}
