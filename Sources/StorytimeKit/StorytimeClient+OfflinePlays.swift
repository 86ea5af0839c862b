import Foundation
import OpenAPIRuntime

extension StorytimeClient {
    // MARK: Offline plays and history by cursor

    /// Sends plays recorded offline (at most 500): one result per play, in the order sent.
    public func recordOfflinePlays(childID: Int, _ plays: [OfflinePlay]) async throws -> OfflinePlaysResult {
        try await authorized {
            try await $0.recordOfflinePlays(path: .init(childId: childID), body: .json(.init(plays: plays))).ok.body.json
        }
    }

    /// A page of the history after `cursor` (nil: from the newest play) and the cursor of the
    /// next page (nil at the end). Pages never shift while plays arrive.
    public func historyPage(childID: Int, after cursor: String? = nil, perPage: Int? = nil) async throws -> (page: HistoryPage, next: String?) {
        try await authorized {
            let ok = try await $0.listHistory(path: .init(childId: childID), query: .init(perPage: perPage, after: cursor ?? "")).ok
            return (try ok.body.json, Self.nextCursor(ok.headers.link))
        }
    }

    /// The `after` of the `rel="next"` link of a Link header.
    static func nextCursor(_ link: String?) -> String? {
        guard let link else { return nil }
        for part in link.split(separator: ",") where part.contains("rel=\"next\"") {
            guard let target = part.split(separator: "<").last?.split(separator: ">").first,
                  let items = URLComponents(string: String(target))?.queryItems else { continue }
            return items.first { $0.name == "after" }?.value
        }
        return nil
    }
}

/// Plays a device records while offline (a child on a plane), kept until the server has them:
/// each gets a client id when recorded, so sending them again after a lost answer records each
/// once. `flush()` sends them in batches of 500 through `POST /children/:id/plays/batch`; every
/// play the server answered (recorded, duplicate or refused) leaves the queue. With a `file`, the
/// queue survives the app being closed.
public actor OfflinePlayQueue {
    public struct Pending: Codable, Sendable, Equatable {
        public let clientID: String
        public let bookID: Int
        public let position: Int
        public let completed: Bool
        public let playedAt: Date
    }

    private let client: StorytimeClient
    private let childID: Int
    private let file: URL?
    public private(set) var pending: [Pending]

    public init(client: StorytimeClient, childID: Int, file: URL? = nil) {
        self.client = client
        self.childID = childID
        self.file = file
        pending = file.flatMap { try? Data(contentsOf: $0) }.flatMap { try? JSONDecoder().decode([Pending].self, from: $0) } ?? []
    }

    /// Keeps a play for the next flush.
    public func record(bookID: Int, position: Int, completed: Bool, at playedAt: Date = Date()) throws {
        pending.append(Pending(clientID: UUID().uuidString, bookID: bookID, position: position, completed: completed, playedAt: playedAt))
        try save()
    }

    /// Sends what is pending; the server's results (an error leaves the queue as it was).
    @discardableResult
    public func flush() async throws -> [OfflinePlayResult] {
        var results: [OfflinePlayResult] = []
        while !pending.isEmpty {
            let batch = Array(pending.prefix(500))
            let answer = try await client.recordOfflinePlays(childID: childID, batch.map {
                OfflinePlay(clientId: $0.clientID, bookId: $0.bookID, positionSeconds: $0.position, completed: $0.completed, playedAt: $0.playedAt)
            })
            let answered = Set(answer.data.map(\.clientId))
            pending.removeAll { answered.contains($0.clientID) }
            try save()
            results += answer.data
        }
        return results
    }

    private func save() throws {
        guard let file else { return }
        try JSONEncoder().encode(pending).write(to: file, options: .atomic)
    }
}
