import Foundation
import OpenAPIRuntime

extension StorytimeClient {
    // MARK: History and insights

    /// Plays newest first; `from`/`to` as RFC 3339 date-times or `YYYY-MM-DD` days in `timeZone`.
    public func history(childID: Int, from: String? = nil, to: String? = nil, bookID: Int? = nil, timeZone: String? = nil,
                        page: Int? = nil, perPage: Int? = nil) async throws -> HistoryPage {
        try await authorized {
            try await $0.listHistory(path: .init(childId: childID),
                                     query: .init(from: from, to: to, bookId: bookID, tz: timeZone, page: page, perPage: perPage)).ok.body.json
        }
    }

    public func removePlay(childID: Int, playID: Int) async throws {
        try await authorized { _ = try await $0.removePlay(path: .init(childId: childID, playId: playID)).noContent }
    }

    /// Removes all of one book's viewing data for the child.
    public func removeHistory(childID: Int, bookID: Int) async throws {
        try await authorized {
            _ = try await $0.removeBookHistory(path: .init(childId: childID), query: .init(bookId: bookID)).noContent
        }
    }

    /// The whole history as JSON (grouped by book; decoded against the document, then encoded
    /// again) or CSV (one play a row, as the server sends it).
    public func exportHistory(childID: Int, format: ExportFormat = .json) async throws -> Data {
        try await authorized {
            let ok = try await $0.exportHistory(path: .init(childId: childID), query: .init(format: format)).ok
            switch ok.body {
            case .json(let export): return try JSONEncoder().encode(export)
            case .csv(let body): return try await Data(collecting: body, upTo: 256 * 1024 * 1024)
            }
        }
    }

    public func continueWatching(childID: Int, page: Int? = nil, perPage: Int? = nil) async throws -> ContinuePage {
        try await authorized {
            try await $0.continueWatching(path: .init(childId: childID), query: .init(page: page, perPage: perPage)).ok.body.json
        }
    }

    public func stats(childID: Int, period: StatsPeriod? = nil, timeZone: String? = nil) async throws -> Stats {
        try await authorized {
            try await $0.childStats(path: .init(childId: childID), query: .init(period: period, tz: timeZone)).ok.body.json.data
        }
    }
}
