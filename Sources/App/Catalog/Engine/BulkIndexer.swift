import CatalogIndexing
import Core

/// Builds an index from batches of books on its own task, so indexing runs beside the decoding of
/// the next rows (`CatalogLoader.allBooks`).
///
/// Not thread-safe by itself; it is safe as used: `add` and `finish` are called by one task in
/// turn, and `index` is touched only by the one batch task in flight, which each of them awaits
/// before starting another or reading the index.
final class BulkIndexer: @unchecked Sendable {
    private var index: CatalogIndex
    private var inFlight: Task<Void, Never>?

    init(_ index: CatalogIndex) {
        self.index = index
        self.index.beginBulk()
    }

    /// Adds `books` after the batch before them, on another task; returns once the batch before
    /// them is in (so at most one batch waits).
    func add(_ books: [CatalogBook]) async {
        await inFlight?.value
        inFlight = Task.detached { [self] in
            for book in books { index.upsert(book) }
        }
    }

    /// The index with every book added and its bulk load finished.
    func finish() async -> CatalogIndex {
        await inFlight?.value
        inFlight = nil
        var result = index
        index = CatalogIndex()   // so `result` holds the only reference to its storage
        result.endBulk()
        return result
    }
}
