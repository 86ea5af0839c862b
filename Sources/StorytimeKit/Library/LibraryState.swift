/// Which books are in a child's library, for the "Already in library" badge (the plan's §4.2).
/// Adding and removing change the answer at once and roll back when the server refuses.
public actor LibraryState {
    public let childID: Int
    private let client: StorytimeClient
    private var bookIDs: Set<Int> = []

    public init(client: StorytimeClient, childID: Int) {
        self.client = client
        self.childID = childID
    }

    /// Reads every page of the child's library.
    public func load() async throws {
        var ids: Set<Int> = []
        var page = 1
        while true {
            let answer = try await client.library(childID: childID, page: page, perPage: 100)
            ids.formUnion(answer.data.map(\.id))
            guard page * answer.meta.perPage < answer.meta.totalCount, !answer.data.isEmpty else { break }
            page += 1
        }
        bookIDs = ids
    }

    public func isInLibrary(_ bookID: Int) -> Bool {
        bookIDs.contains(bookID)
    }

    public var count: Int { bookIDs.count }

    /// Adds `bookID`: shown as in the library at once; rolled back if the server refuses (a 409
    /// means it already was, so it stays). Rethrows the refusal.
    public func add(_ bookID: Int) async throws {
        let wasIn = bookIDs.insert(bookID).inserted == false
        do {
            _ = try await client.addToLibrary(childID: childID, bookID: bookID)
        } catch StorytimeError.duplicate(let detail) {
            throw StorytimeError.duplicate(detail: detail)
        } catch {
            if !wasIn { bookIDs.remove(bookID) }
            throw error
        }
    }

    /// Removes `bookID`: shown as gone at once; put back if the server fails (a 404 means it was
    /// not there, so it stays gone).
    public func remove(_ bookID: Int) async throws {
        let wasIn = bookIDs.remove(bookID) != nil
        do {
            try await client.removeFromLibrary(childID: childID, bookID: bookID)
        } catch StorytimeError.notFound(let detail) {
            throw StorytimeError.notFound(detail: detail)
        } catch {
            if wasIn { bookIDs.insert(bookID) }
            throw error
        }
    }
}
