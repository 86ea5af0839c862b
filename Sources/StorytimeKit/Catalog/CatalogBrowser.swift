import Foundation

/// The catalog screen's logic without the screen (the plan's §2.2 and §3): as-you-type search
/// debounced by 300 ms, filters that start over from page 1, infinite scroll that loads the next
/// page when a row within the last three appears and stops at `page * per_page >= total_count`.
///
/// A new query or filter cancels the request in flight, and an answer is applied only if it
/// belongs to the latest query: a slow answer for "goo" never overwrites "good".
public actor CatalogBrowser {
    public private(set) var filter: CatalogFilterState
    public private(set) var books: [Book] = []
    /// Nil until the first page of the current query has answered.
    public private(set) var totalCount: Int?
    /// The first page of a query is loading.
    public private(set) var isLoading = false
    /// A next page is loading (show the spinner at the bottom).
    public private(set) var isLoadingMore = false
    /// The last failure of the current query (cleared by its next success).
    public private(set) var error: StorytimeError?

    public var hasMorePages: Bool {
        guard let totalCount else { return false }
        return filter.hasPage(after: filter.currentPage, totalCount: totalCount)
    }

    private let client: StorytimeClient
    /// Given an interval, a sleep until that long after now ("now" read when it is made).
    private let sleeper: @Sendable (Duration) -> @Sendable () async throws -> Void
    private let debounce: Duration
    /// Moves with every new query or filter; an answer of an older one is dropped.
    private var generation = 0
    private var pendingQuery: Task<Void, Never>?
    private var load: Task<Void, Never>?

    /// A browser on the continuous clock.
    public init(client: StorytimeClient, filter: CatalogFilterState = .init(), debounce: Duration = .milliseconds(300)) {
        self.init(client: client, filter: filter, clock: ContinuousClock(), debounce: debounce)
    }

    /// A browser on `clock` (tests pass a test clock).
    public init<C: Clock>(client: StorytimeClient, filter: CatalogFilterState = .init(), clock: C,
                          debounce: Duration = .milliseconds(300)) where C.Duration == Duration {
        self.client = client
        self.filter = filter
        self.debounce = debounce
        sleeper = { interval in
            let deadline = clock.now.advanced(by: interval)
            return { try await clock.sleep(until: deadline, tolerance: nil) }
        }
    }

    /// The search field changed: searches `text` once it has not changed for the debounce interval.
    public func setQuery(_ text: String) {
        filter.query = text
        pendingQuery?.cancel()
        // The deadline is taken now, not when the task first runs.
        let wait = sleeper(debounce)
        pendingQuery = Task {
            do { try await wait() } catch { return }
            self.debounced()
        }
    }

    /// The age picker changed: reloads from page 1 at once (with the query as typed so far).
    public func setAgeRange(_ range: AgeRange?) {
        filter.ageRange = range == .all ? nil : range
        restart()
    }

    /// A category chip was chosen (nil clears it): reloads from page 1 at once.
    public func setCategory(_ slug: String?) {
        filter.categorySlug = slug
        restart()
    }

    /// Tapping the active chip again deselects it.
    public func toggleCategory(_ slug: String) {
        setCategory(filter.categorySlug == slug ? nil : slug)
    }

    /// Loads page 1 of the current filter (first appearance, pull to refresh).
    public func refresh() {
        restart()
    }

    /// A row appeared: within the last three, the next page loads.
    public func itemAppeared(at index: Int) {
        guard index >= books.count - 3 else { return }
        loadNextPage()
    }

    /// Loads the next page unless one is loading or there is none.
    public func loadNextPage() {
        guard hasMorePages, !isLoading, !isLoadingMore else { return }
        var next = filter
        next.currentPage += 1
        isLoadingMore = true
        let current = generation
        load = Task { await self.fetch(next, generation: current) }
    }

    /// Waits until no search is waiting out its debounce and no page is loading.
    public func settle() async {
        while let task = pendingQuery ?? load {
            await task.value
            if pendingQuery == task { pendingQuery = nil }
            if load == task { load = nil }
        }
    }

    private func debounced() {
        pendingQuery = nil
        restart()
    }

    private func restart() {
        pendingQuery?.cancel()
        pendingQuery = nil
        load?.cancel()
        generation += 1
        filter = filter.reset
        books = []
        totalCount = nil
        error = nil
        isLoading = true
        isLoadingMore = false
        let first = filter
        let current = generation
        load = Task { await self.fetch(first, generation: current) }
    }

    private func fetch(_ wanted: CatalogFilterState, generation current: Int) async {
        let result: Result<BookPage, StorytimeError>
        do {
            result = .success(try await client.books(wanted))
        } catch {
            result = .failure(StorytimeError.from(error))
        }
        guard current == generation else { return }   // an older query's answer: dropped
        switch result {
        case .success(let page):
            filter.currentPage = wanted.currentPage
            books = wanted.currentPage == 1 ? page.data : books + page.data
            totalCount = page.meta.totalCount
            error = nil
        case .failure(let failure):
            error = failure
        }
        isLoading = false
        isLoadingMore = false
    }
}
